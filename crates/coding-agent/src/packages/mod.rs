//! pi packages: extensions, skills, prompt templates and themes installed from npm, git or
//! a local folder (the TypeScript pi's `pi install` and the settings `packages` list).

pub mod source;

pub use source::PackageSource;
