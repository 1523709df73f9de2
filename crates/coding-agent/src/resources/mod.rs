//! Prompt templates and skills: discovery, loading and expansion, as the TypeScript pi does.
//!
//! Where resources come from, highest precedence first (the first of two with the same name
//! wins; the other is reported as a collision):
//!
//! 1. entries of the project's `.pi/settings.json` (`skills` / `prompts`, paths relative to
//!    `<cwd>/.pi`);
//! 2. the project's own directories: `<cwd>/.pi/skills` and `.agents/skills` in the cwd and
//!    every parent up to the git repository root (or the filesystem root), or
//!    `<cwd>/.pi/prompts`;
//! 3. entries of the agent dir's `settings.json` (paths relative to the agent dir);
//! 4. the user's directories: `<agentDir>/skills` and `~/.agents/skills`, or
//!    `<agentDir>/prompts`;
//! 5. paths given on the command line (`--skill`, `--prompt-template`), which still load
//!    with `--no-skills` / `--no-prompt-templates` (those drop 1–4).
//!
//! Settings entries may also be patterns that switch discovered files off and on:
//! `!glob` excludes, `+path` forces a path in, `-path` forces it out; a plain glob keeps only
//! the files of the settings entries that match it. `.gitignore`, `.ignore` and `.fdignore`
//! files inside the scanned directories are honoured, and names starting with `.` as well as
//! `node_modules` are skipped.

mod diagnostics;
mod discovery;
pub mod frontmatter;
mod ignore_files;
mod paths;
mod patterns;
pub mod prompt_templates;
mod settings;
pub mod skills;
mod template_args;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use diagnostics::{DiagnosticKind, ResourceCollision, ResourceDiagnostic};
pub use discovery::DiscoveryOptions;
pub(crate) use discovery::{Kind, SkillMode, collect_skill_entries, resolve};
pub(crate) use ignore_files::IgnoreRules;
pub(crate) use paths::{
    Entry, canonical, is_local_path, is_under, normalize, read_dir_sorted, relative, resolve_from,
};
pub(crate) use patterns::apply_patterns;
pub use prompt_templates::{
    LoadPromptTemplatesResult, PromptTemplate, expand_prompt_template, load_prompt_templates,
    load_prompt_templates_with_diagnostics, parse_command_args, substitute_args,
};
pub use settings::{ResourceSettings, deserialize_string_list};
pub use skills::{
    LoadSkillsResult, Skill, SkillExpansionError, SkillReader, expand_skill_command,
    format_skills_for_prompt, load_skills,
};

/// Whose a resource is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceScope {
    /// From the agent dir or the home directory.
    User,
    /// From the project (the cwd and its parents).
    Project,
    /// Given for this run only (command line).
    Temporary,
}

/// Whether a resource came from a package or stands on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SourceOrigin {
    /// Part of an installed pi package (not discovered by this build).
    #[serde(rename = "package")]
    Package,
    /// A file or directory of its own.
    #[serde(rename = "top-level")]
    TopLevel,
}

/// Where a resource was found, in the shape the TypeScript pi reports it (`sourceInfo`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceInfo {
    /// The resource's file.
    pub path: PathBuf,
    /// `auto` (found in a default directory), `local` (a settings entry or a path) or `cli`.
    pub source: String,
    /// Whose it is.
    pub scope: SourceScope,
    /// Package or top-level.
    pub origin: SourceOrigin,
    /// The directory the resource's relative references start from, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_dir: Option<PathBuf>,
}

impl SourceInfo {
    /// A top-level source info.
    pub fn local(path: &Path, source: &str, scope: SourceScope, base_dir: Option<PathBuf>) -> Self {
        Self {
            path: path.to_path_buf(),
            source: source.to_owned(),
            scope,
            origin: SourceOrigin::TopLevel,
            base_dir,
        }
    }
}
