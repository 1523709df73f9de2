//! Syntax highlighting of code blocks.
