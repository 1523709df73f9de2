//! pi packages: extensions, skills, prompt templates and themes installed from npm, git or
//! a local folder (the TypeScript pi's `pi install` and the settings `packages` list).

pub mod cli;
pub mod command;
pub mod manager;
pub mod paths;
pub mod resolve;
pub mod resources;
pub mod session_resources;
pub mod settings;
pub mod source;
pub mod update;

pub use source::PackageSource;
