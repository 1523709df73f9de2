//! Markdown rendered to styled lines.
