//! The skills, prompt templates and context files a session is built from: loaded at
//! startup, and loaded again from disk by `/reload` as pi 1.6 does.

use std::path::PathBuf;

use crate::extensions::discovery::PackageResources;
use crate::modes::system_prompt::{self, PromptRecipe};
use crate::packages::resolve::ResolvedPackages;
use crate::packages::session_resources::add_package_resources;
use crate::resources::{
    DiscoveryOptions, PromptTemplate, ResourceSettings, Skill, SourceInfo, SourceOrigin,
    SourceScope, load_prompt_templates, load_prompt_templates_with_diagnostics, load_skills,
};

/// Where a session's resources come from: folders, settings, command-line paths and
/// packages. Kept by the session so `/reload` reads the same places again.
#[derive(Debug, Clone)]
pub struct ResourceSources {
    pub agent_dir: PathBuf,
    pub cwd: PathBuf,
    /// The project is trusted: its `.pi` resources load.
    pub project_trusted: bool,
    /// `--skill` paths.
    pub cli_skills: Vec<String>,
    /// `--prompt-template` paths.
    pub cli_prompts: Vec<String>,
    pub no_skills: bool,
    pub no_prompt_templates: bool,
    pub no_context_files: bool,
    /// `--system-prompt` (else SYSTEM.md is looked for).
    pub system_prompt: Option<String>,
    /// `--append-system-prompt` (else APPEND_SYSTEM.md is looked for).
    pub append_system_prompt: Vec<String>,
    /// Packages given as extension paths (`-e ./pkg`).
    pub packages: Vec<PackageResources>,
    /// Installed packages (settings `packages`).
    pub resolved_packages: ResolvedPackages,
}

/// What [`ResourceSources::load`] found.
#[derive(Debug, Clone, Default)]
pub struct LoadedResources {
    pub skills: Vec<Skill>,
    pub prompt_templates: Vec<PromptTemplate>,
    /// The system prompt's parts: the custom prompt, appended texts and context files.
    pub recipe: PromptRecipe,
    /// Resource diagnostics as the interactive UI lists them.
    pub warnings: Vec<String>,
}

impl ResourceSources {
    fn discovery(&self, user: &[String], project: &[String], cli: &[String]) -> DiscoveryOptions {
        let mut options = DiscoveryOptions::new(&self.cwd, &self.agent_dir);
        options.user_entries = user.to_vec();
        options.project_entries = project.to_vec();
        options.cli_paths = cli.to_vec();
        options.include_defaults = false;
        options.skip_project = !self.project_trusted;
        options
    }

    /// Reads every resource from disk (settings included, as they may have changed).
    pub fn load(&self) -> LoadedResources {
        let context_files = if self.no_context_files {
            Vec::new()
        } else {
            system_prompt::load_context_files(&self.agent_dir, &self.cwd)
        };
        let settings = ResourceSettings::load(
            &crate::config::paths::settings_path(&self.agent_dir),
            &crate::config::paths::project_settings_path(&self.cwd),
        );
        let mut skill_options = self.discovery(
            &settings.user_skills,
            &settings.project_skills,
            &self.cli_skills,
        );
        skill_options.include_defaults = !self.no_skills;
        let skills = load_skills(&skill_options);
        let mut prompt_options = self.discovery(
            &settings.user_prompts,
            &settings.project_prompts,
            &self.cli_prompts,
        );
        prompt_options.include_defaults = !self.no_prompt_templates;
        let prompts = load_prompt_templates_with_diagnostics(&prompt_options);
        let warnings = skills
            .diagnostics
            .iter()
            .chain(&prompts.diagnostics)
            .map(|d| match &d.path {
                Some(path) => format!("{} ({})", d.message, path.display()),
                None => d.message.clone(),
            })
            .collect();
        let mut loaded = LoadedResources {
            skills: skills.skills,
            prompt_templates: prompts.templates,
            recipe: PromptRecipe::discover(
                self.system_prompt.as_deref(),
                &self.append_system_prompt,
                (&self.agent_dir, &self.cwd, self.project_trusted),
                context_files,
            ),
            warnings,
        };
        self.add_extension_packages(&mut loaded);
        add_package_resources(
            &self.resolved_packages,
            &|paths: &[String]| self.discovery(&[], &[], paths),
            !self.no_skills,
            !self.no_prompt_templates,
            &mut loaded.skills,
            &mut loaded.prompt_templates,
        );
        loaded
    }

    /// Prompt templates and skills of packages given as extension paths.
    fn add_extension_packages(&self, loaded: &mut LoadedResources) {
        for package in &self.packages {
            let info = |path: &std::path::Path| SourceInfo {
                path: path.to_path_buf(),
                // As the TypeScript pi reports them: a manifest's resources come from the
                // command line, a folder layout's from the package folder.
                source: if package.manifest {
                    "cli".to_owned()
                } else {
                    package.root.display().to_string()
                },
                scope: SourceScope::Temporary,
                origin: if package.manifest {
                    SourceOrigin::TopLevel
                } else {
                    SourceOrigin::Package
                },
                base_dir: (!package.manifest).then(|| package.root.clone()),
            };
            let paths = |list: &[PathBuf]| -> Vec<String> {
                list.iter().map(|p| p.display().to_string()).collect()
            };
            if !self.no_prompt_templates {
                let found =
                    load_prompt_templates(&self.discovery(&[], &[], &paths(&package.prompts)));
                for mut template in found {
                    if !loaded
                        .prompt_templates
                        .iter()
                        .any(|t| t.name == template.name)
                    {
                        template.source_info = info(&template.source_info.path);
                        loaded.prompt_templates.push(template);
                    }
                }
            }
            if !self.no_skills {
                let found = load_skills(&self.discovery(&[], &[], &paths(&package.skills)));
                for mut skill in found.skills {
                    if !loaded.skills.iter().any(|s| s.name == skill.name) {
                        skill.source_info = info(&skill.source_info.path);
                        loaded.skills.push(skill);
                    }
                }
            }
        }
    }
}
