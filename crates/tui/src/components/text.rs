//! Wrapped text with padding and an optional background.
