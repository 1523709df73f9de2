//! The ways pi runs: print (one-shot) mode so far.

pub mod print;
pub mod system_prompt;
