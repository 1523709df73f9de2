//! The `skills` / `prompts` keys of the settings files, read leniently (the old `skills`
//! object is migrated as the TypeScript pi does).

use std::path::Path;

use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// The resource keys of both settings files, read separately (the project's entries resolve
/// against `<cwd>/.pi`, the user's against the agent dir).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceSettings {
    /// `skills` of the agent dir's `settings.json`.
    pub user_skills: Vec<String>,
    /// `skills` of `.pi/settings.json`.
    pub project_skills: Vec<String>,
    /// `prompts` of the agent dir's `settings.json`.
    pub user_prompts: Vec<String>,
    /// `prompts` of `.pi/settings.json`.
    pub project_prompts: Vec<String>,
    /// `enableSkillCommands` (project over global; default true): offer `/skill:name`.
    pub enable_skill_commands: bool,
}

impl Default for ResourceSettings {
    fn default() -> Self {
        Self {
            user_skills: Vec::new(),
            project_skills: Vec::new(),
            user_prompts: Vec::new(),
            project_prompts: Vec::new(),
            enable_skill_commands: true,
        }
    }
}

/// One settings file's resource keys, with the old `skills` object migrated as the TypeScript
/// pi does (`{"customDirectories": [...], "enableSkillCommands": bool}`).
fn read_resource_keys(path: &Path) -> (Vec<String>, Vec<String>, Option<bool>) {
    let Some(Value::Object(map)) = crate::text_file::read_text(path)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
    else {
        return (Vec::new(), Vec::new(), None);
    };
    let mut enable = map.get("enableSkillCommands").and_then(Value::as_bool);
    let skills = match map.get("skills") {
        Some(Value::Object(legacy)) => {
            if enable.is_none() {
                enable = legacy.get("enableSkillCommands").and_then(Value::as_bool);
            }
            legacy
                .get("customDirectories")
                .map(string_list)
                .unwrap_or_default()
        }
        Some(v) => string_list(v),
        None => Vec::new(),
    };
    let prompts = map.get("prompts").map(string_list).unwrap_or_default();
    (skills, prompts, enable)
}

fn string_list(value: &Value) -> Vec<String> {
    match value {
        Value::Array(items) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

impl ResourceSettings {
    /// Reads `global` (the agent dir's `settings.json`) and `project` (`.pi/settings.json`);
    /// a missing or unreadable file contributes nothing.
    pub fn load(global: &Path, project: &Path) -> Self {
        let (user_skills, user_prompts, user_enable) = read_resource_keys(global);
        let (project_skills, project_prompts, project_enable) = read_resource_keys(project);
        Self {
            user_skills,
            project_skills,
            user_prompts,
            project_prompts,
            enable_skill_commands: project_enable.or(user_enable).unwrap_or(true),
        }
    }
}

/// Deserializes a settings list of strings leniently: a non-list is `None`, non-strings are
/// dropped, and the old `skills` object yields its `customDirectories`.
pub fn deserialize_string_list<'de, D>(deserializer: D) -> Result<Option<Vec<String>>, D::Error>
where
    D: Deserializer<'de>,
{
    let value = Option::<Value>::deserialize(deserializer)?;
    Ok(match value {
        Some(v @ Value::Array(_)) => Some(string_list(&v)),
        Some(Value::Object(legacy)) => legacy
            .get("customDirectories")
            .map(string_list)
            .filter(|l| !l.is_empty()),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_settings_read_both_files_and_migrate() {
        let dir = tempfile::tempdir().unwrap();
        let global = dir.path().join("g.json");
        let project = dir.path().join("p.json");
        std::fs::write(
            &global,
            r#"{"skills": {"customDirectories": ["~/.claude/skills"], "enableSkillCommands": false}, "prompts": ["p", 3]}"#,
        )
        .unwrap();
        std::fs::write(&project, r#"{"skills": ["../s"]}"#).unwrap();
        let s = ResourceSettings::load(&global, &project);
        assert_eq!(s.user_skills, ["~/.claude/skills"]);
        assert_eq!(s.project_skills, ["../s"]);
        assert_eq!(s.user_prompts, ["p"]);
        assert!(s.project_prompts.is_empty());
        assert!(!s.enable_skill_commands);
        let none = ResourceSettings::load(&dir.path().join("x"), &dir.path().join("y"));
        assert_eq!(none, ResourceSettings::default());
        assert!(none.enable_skill_commands);
    }

    #[test]
    fn settings_fields_tolerate_the_old_skills_object() {
        use crate::config::settings::Settings;
        let s: Settings = serde_json::from_value(serde_json::json!({
            "skills": {"customDirectories": ["~/x"], "enableSkillCommands": false},
            "prompts": ["a", 1],
            "enableSkillCommands": true,
            "defaultModel": "m"
        }))
        .unwrap();
        assert_eq!(s.skills, Some(vec!["~/x".to_owned()]));
        assert_eq!(s.prompts, Some(vec!["a".to_owned()]));
        assert_eq!(s.enable_skill_commands, Some(true));
        assert_eq!(s.default_model.as_deref(), Some("m"));
        let s: Settings = serde_json::from_value(serde_json::json!({"skills": "x"})).unwrap();
        assert_eq!(s.skills, None);
    }
}
