//! Empty lines.
