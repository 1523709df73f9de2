//! The built-in tools: `read`, `write`, `edit`, `bash`, `grep`, `find`, `ls`.

pub mod mutation;
pub mod path;
pub mod truncate;
