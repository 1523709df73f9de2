//! The multi-line prompt editor.
