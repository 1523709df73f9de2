//! The built-in tools: `read`, `write`, `edit`, `bash`, `grep`, `find`, `ls`.

pub mod bash;
pub mod bash_output;
pub mod bash_process;
pub mod edit;
pub mod edit_diff;
pub mod edit_match;
pub mod find;
pub mod grep;
pub mod ls;
pub mod mutation;
pub mod path;
pub mod read;
pub mod truncate;
pub mod write;
