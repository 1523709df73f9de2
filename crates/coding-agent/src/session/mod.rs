//! Session files in the TypeScript pi's JSONL v3 format: header, entry tree, lazy flush,
//! migrations, context building.

pub mod cache_waste;
pub mod context;
pub mod delete;
pub mod discover;
pub mod entry;
pub mod entry_line;
pub mod ids;
pub mod line_sink;
mod linear;
pub mod list;
pub mod load;
pub mod manager;
pub mod migrate;
pub mod missing_cwd;
pub mod select;
pub mod time;
pub mod usage_breakdown;

pub use context::{SessionContext, build_session_context};
pub use discover::find_most_recent;
pub use entry::{EntryKind, FileLine, LineError, SessionEntry, SessionHeader};
pub use manager::{NewCompaction, SessionError, SessionManager, default_session_dir};
