//! `systemPromptOptions`: the base inputs of the system prompt in the shape pi 1.6.0 gives
//! extensions (`before_agent_start`'s `event.systemPromptOptions` and the command context's
//! `ctx.getSystemPromptOptions()`), so an extension can read the active tools, the context
//! files and the skills without parsing the prompt text.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::{AgentSession, lock};
use crate::modes::system_prompt::builtin_tool_summary;

/// pi 1.6.0's `BuildSystemPromptOptions` after `normalizeBuildSystemPromptOptions`: every
/// collection present. The built-in tools' snippets are our own one-line summaries; our
/// built-in rules depend on the combination of active tools, so `toolGuidelines` holds the
/// extension tools' `promptGuidelines` only.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SystemPromptOptions {
    /// `--system-prompt` / SYSTEM.md text replacing the base prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub custom_prompt: Option<String>,
    /// The active tools.
    pub selected_tools: Vec<String>,
    /// Tools declared to the model but kept out of the prompt (none here).
    pub hidden_tools: Vec<String>,
    /// One line per registered tool that has one, by name.
    pub tool_snippets: BTreeMap<String, String>,
    /// Extension tools' `promptGuidelines`, by tool name.
    pub tool_guidelines: BTreeMap<String, Vec<String>>,
    /// Rules not tied to a tool.
    pub prompt_guidelines: Vec<String>,
    /// `--append-system-prompt` / APPEND_SYSTEM.md text, joined by blank lines.
    pub append_system_prompt: String,
    /// Extra named prompt sections (none here).
    pub sections: BTreeMap<String, String>,
    pub cwd: String,
    /// AGENTS.md / CLAUDE.md files with their text.
    pub context_files: Vec<PromptContextFile>,
    /// The loaded skills.
    pub skills: Vec<PromptSkill>,
}

/// One context file of [`SystemPromptOptions`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PromptContextFile {
    pub path: String,
    pub content: String,
}

/// One skill of [`SystemPromptOptions`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptSkill {
    pub name: String,
    pub description: String,
    pub file_path: String,
    pub base_dir: String,
    pub disable_model_invocation: bool,
}

impl AgentSession {
    /// The context files (`AGENTS.md`, `CLAUDE.md`) the system prompt was built with.
    pub fn context_file_paths(&self) -> Vec<std::path::PathBuf> {
        lock(&self.inner.ext.recipe)
            .as_ref()
            .map(|r| r.context_files.iter().map(|f| f.path.clone()).collect())
            .unwrap_or_default()
    }

    /// The base system prompt inputs now (not `before_agent_start`'s per-turn changes).
    pub(super) fn prompt_options(&self) -> SystemPromptOptions {
        let defs = self.inner.ext.runtime.tool_defs();
        let mut tool_snippets = BTreeMap::new();
        let mut tool_guidelines = BTreeMap::new();
        for tool in self.all_tools() {
            let name = tool.name().to_owned();
            let snippet = match defs.iter().find(|d| d.name == name) {
                Some(def) => {
                    if !def.prompt_guidelines.is_empty() {
                        tool_guidelines.insert(name.clone(), def.prompt_guidelines.clone());
                    }
                    def.prompt_snippet.clone().filter(|s| !s.is_empty())
                }
                None => builtin_tool_summary(&name).map(str::to_owned),
            };
            if let Some(snippet) = snippet {
                tool_snippets.insert(name, snippet);
            }
        }
        let recipe = lock(&self.inner.ext.recipe).clone().unwrap_or_default();
        SystemPromptOptions {
            custom_prompt: recipe.custom.clone(),
            selected_tools: self.active_tool_names(),
            hidden_tools: Vec::new(),
            tool_snippets,
            tool_guidelines,
            prompt_guidelines: Vec::new(),
            append_system_prompt: recipe.appended_text(),
            sections: BTreeMap::new(),
            cwd: self.inner.cwd.display().to_string(),
            context_files: recipe
                .context_files
                .iter()
                .map(|f| PromptContextFile {
                    path: f.path.display().to_string(),
                    content: f.content.clone(),
                })
                .collect(),
            skills: self
                .skills()
                .iter()
                .map(|s| PromptSkill {
                    name: s.name.clone(),
                    description: s.description.clone(),
                    file_path: s.file_path.display().to_string(),
                    base_dir: s.base_dir.display().to_string(),
                    disable_model_invocation: s.disable_model_invocation,
                })
                .collect(),
        }
    }

    /// [`Self::prompt_options`] as JSON, for the extension host.
    pub(super) fn system_prompt_options(&self) -> Value {
        serde_json::to_value(self.prompt_options()).unwrap_or(Value::Null)
    }

    /// The system prompt from the `systemPromptOptions` that `before_agent_start` handlers
    /// changed in place, as pi 1.6.0 renders the prompt from them: a changed `customPrompt`,
    /// `appendSystemPrompt`, `contextFiles` or `promptGuidelines` rebuilds the prompt with
    /// them (the tools, snippets and skills stay the session's); each non-empty entry of
    /// `sections` replaces the section of that name or is added after the others as
    /// `<name>` … `</name>`, in the order the handlers set them.
    pub(super) fn prompt_from_options(&self, options: &Value) -> String {
        let base = self.system_prompt_options();
        let rebuilt = [
            "customPrompt",
            "appendSystemPrompt",
            "contextFiles",
            "promptGuidelines",
        ]
        .iter()
        .any(|key| options.get(key) != base.get(key));
        let recipe = lock(&self.inner.ext.recipe).clone();
        let mut prompt = match recipe {
            Some(mut recipe) if rebuilt => {
                let text = |key: &str| {
                    options
                        .get(key)
                        .and_then(Value::as_str)
                        .filter(|s| !s.is_empty())
                        .map(str::to_owned)
                };
                recipe.custom = text("customPrompt");
                recipe.append = text("appendSystemPrompt").into_iter().collect();
                recipe.context_files = options
                    .get("contextFiles")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|file| {
                        Some(crate::modes::context_files::ContextFile {
                            path: file.get("path")?.as_str()?.into(),
                            content: file.get("content")?.as_str()?.to_owned(),
                        })
                    })
                    .collect();
                let extra = options
                    .get("promptGuidelines")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect();
                self.prompt_from_recipe(&recipe, extra)
            }
            _ => self.base_system_prompt(),
        };
        let sections = options.get("sections").and_then(Value::as_object);
        for (name, content) in sections.into_iter().flatten() {
            let Some(content) = content.as_str().filter(|c| !c.is_empty()) else {
                continue;
            };
            prompt = with_section(&prompt, name, content);
        }
        prompt
    }
}

/// `prompt` with its `<name>` section's content replaced, or with the section added at the
/// end (sections are separated by blank lines).
fn with_section(prompt: &str, name: &str, content: &str) -> String {
    let open = format!("\n\n<{name}>\n");
    let close = format!("\n</{name}>");
    if let Some(start) = prompt.find(&open)
        && let Some(end) = prompt[start + open.len()..].find(&close)
    {
        let body = start + open.len();
        return format!("{}{content}{}", &prompt[..body], &prompt[body + end..]);
    }
    format!("{prompt}\n\n<{name}>\n{content}\n</{name}>")
}

#[cfg(test)]
mod tests {
    use super::with_section;

    #[test]
    fn a_section_is_added_at_the_end_or_replaces_its_namesake() {
        let prompt = "Pre.\n\n<tools>\n- read\n</tools>\n\n<cwd>\n/x\n</cwd>";
        assert_eq!(
            with_section(prompt, "tool_guidance", "- Use read."),
            format!("{prompt}\n\n<tool_guidance>\n- Use read.\n</tool_guidance>")
        );
        assert_eq!(
            with_section(prompt, "tools", "- bash"),
            "Pre.\n\n<tools>\n- bash\n</tools>\n\n<cwd>\n/x\n</cwd>"
        );
    }
}
