//! The skills and prompt templates installed packages add to a session.

use super::resolve::ResolvedPackages;
use super::resources::ResourceType;
use crate::resources::{
    DiscoveryOptions, PromptTemplate, Skill, load_prompt_templates, load_skills,
};

/// The enabled skills and prompt templates of installed packages join the session's,
/// after every top-level one (a name already taken stays with the first).
pub fn add_package_resources(
    resolved: &ResolvedPackages,
    discovery: &dyn Fn(&[String]) -> DiscoveryOptions,
    with_skills: bool,
    with_prompts: bool,
    skills: &mut Vec<Skill>,
    prompt_templates: &mut Vec<PromptTemplate>,
) {
    let paths = |kind| -> Vec<String> {
        resolved
            .enabled(kind)
            .iter()
            .map(|r| r.path.display().to_string())
            .collect()
    };
    // The package a loaded file belongs to: the resource with its path, or the folder
    // holding it (a skill folder's SKILL.md).
    let info_for = |kind, path: &std::path::Path| {
        let list = resolved.enabled(kind);
        list.iter()
            .find(|r| r.path == path)
            .or_else(|| list.iter().find(|r| path.starts_with(&r.path)))
            .map(|r| crate::resources::SourceInfo {
                path: path.to_path_buf(),
                ..r.source_info.clone()
            })
    };
    if with_skills {
        let found = load_skills(&discovery(&paths(ResourceType::Skills)));
        for mut skill in found.skills {
            if skills.iter().any(|s| s.name == skill.name) {
                continue;
            }
            if let Some(info) = info_for(ResourceType::Skills, &skill.source_info.path) {
                skill.source_info = info;
            }
            skills.push(skill);
        }
    }
    if with_prompts {
        let found = load_prompt_templates(&discovery(&paths(ResourceType::Prompts)));
        for mut template in found {
            if prompt_templates.iter().any(|t| t.name == template.name) {
                continue;
            }
            if let Some(info) = info_for(ResourceType::Prompts, &template.source_info.path) {
                template.source_info = info;
            }
            prompt_templates.push(template);
        }
    }
}
