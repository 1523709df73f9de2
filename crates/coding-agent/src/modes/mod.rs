//! The ways pi runs without a terminal UI: print and JSON modes.

pub mod run;
pub mod system_prompt;
