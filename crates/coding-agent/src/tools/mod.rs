//! The built-in tools: `read`, `write`, `edit`, `bash`, `grep`, `find`, `ls`.

pub mod find;
pub mod grep;
pub mod ls;
pub mod mutation;
pub mod path;
pub mod read;
pub mod truncate;
pub mod write;
