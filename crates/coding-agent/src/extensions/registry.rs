//! What extensions register: tools, commands, flags, shortcuts, message renderers and
//! providers, as descriptions the runtime and the modes read.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use pi_agent_core::ToolExecutionMode;

/// A tool an extension registered (its `execute` stays with the extension).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDef {
    pub name: String,
    #[serde(default)]
    pub label: String,
    #[serde(default)]
    pub description: String,
    #[serde(default = "empty_object_schema")]
    pub parameters: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_snippet: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prompt_guidelines: Vec<String>,
    /// A built-in re-registered with its factory's prompt texts: the system prompt keeps
    /// the built-in's own lines (pi 1.6.0).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub builtin_prompt: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_mode: Option<ToolExecutionMode>,
    /// The tool's `constrainedSampling` as the extension wrote it (read when the tool is
    /// sent; one that does not parse asks for nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constrained_sampling: Option<Value>,
    /// `defaultActive: false`: registering the tool does not activate it; `--tools`,
    /// `defaultTools` or `pi.setActiveTools()` do.
    #[serde(default = "active_by_default", skip_serializing_if = "is_true")]
    pub default_active: bool,
    #[serde(default)]
    pub has_prepare_arguments: bool,
    #[serde(default)]
    pub has_render_call: bool,
    #[serde(default)]
    pub has_render_result: bool,
    #[serde(default)]
    pub extension_path: String,
}

fn active_by_default() -> bool {
    true
}

fn is_true(value: &bool) -> bool {
    *value
}

fn empty_object_schema() -> Value {
    serde_json::json!({"type": "object", "properties": {}})
}

/// A slash command an extension registered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandDef {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default)]
    pub extension_path: String,
    #[serde(default)]
    pub has_argument_completions: bool,
}

/// The type of a CLI flag an extension registered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FlagType {
    Boolean,
    String,
}

/// A CLI flag an extension registered (`--name`), listed by `--help`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FlagDef {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(rename = "type")]
    pub kind: FlagType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    #[serde(default)]
    pub extension_path: String,
}

/// A keyboard shortcut an extension registered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShortcutDef {
    pub shortcut: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default)]
    pub extension_path: String,
}

/// A provider an extension registered (`pi.registerProvider`), without its functions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderDef {
    pub name: String,
    #[serde(default)]
    pub config: Value,
    #[serde(default)]
    pub has_stream_simple: bool,
    #[serde(default)]
    pub extension_path: String,
}

/// One loaded extension and what it registered.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadedExtension {
    pub path: String,
    /// The event types it has handlers for.
    #[serde(default)]
    pub handlers: Vec<String>,
    #[serde(default)]
    pub tools: Vec<ToolDef>,
    #[serde(default)]
    pub commands: Vec<CommandDef>,
    #[serde(default)]
    pub flags: Vec<FlagDef>,
    #[serde(default)]
    pub shortcuts: Vec<ShortcutDef>,
    #[serde(default)]
    pub message_renderers: Vec<String>,
    /// The `customType`s it draws custom entries of (`pi.registerEntryRenderer`).
    #[serde(default)]
    pub entry_renderers: Vec<String>,
    /// Whether it chooses tool renderers (`pi.registerToolRenderer`).
    #[serde(default)]
    pub tool_renderers: bool,
    /// Where it was found (`sourceInfo` of its commands and tools).
    #[serde(default)]
    pub source_info: Value,
}

/// An extension that failed to load.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadError {
    pub path: String,
    pub error: String,
}

/// A handler that threw: reported as an `extension_error` event, the run goes on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionErrorInfo {
    pub extension_path: String,
    pub event: String,
    pub error: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack: Option<String>,
}

/// A command as the session resolves it: duplicates across extensions get `:1`, `:2`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedCommand {
    /// The name a user types after `/`.
    pub invocation_name: String,
    pub def: CommandDef,
    /// Which backend runs it.
    pub backend: usize,
}

/// Numbers commands whose names repeat, as the TypeScript pi does: every occurrence of a
/// repeated name becomes `name:N` (N its occurrence in load order), skipping names taken.
pub fn resolve_commands(commands: Vec<(usize, CommandDef)>) -> Vec<ResolvedCommand> {
    use std::collections::{HashMap, HashSet};
    let mut counts: HashMap<String, usize> = HashMap::new();
    for (_, def) in &commands {
        *counts.entry(def.name.clone()).or_default() += 1;
    }
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut taken: HashSet<String> = HashSet::new();
    commands
        .into_iter()
        .map(|(backend, def)| {
            let occurrence = {
                let n = seen.entry(def.name.clone()).or_default();
                *n += 1;
                *n
            };
            let repeated = counts.get(&def.name).copied().unwrap_or(0) > 1;
            let mut invocation_name = if repeated {
                format!("{}:{occurrence}", def.name)
            } else {
                def.name.clone()
            };
            let mut suffix = occurrence;
            while taken.contains(&invocation_name) {
                suffix += 1;
                invocation_name = format!("{}:{suffix}", def.name);
            }
            taken.insert(invocation_name.clone());
            ResolvedCommand {
                invocation_name,
                def,
                backend,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(name: &str, path: &str) -> CommandDef {
        CommandDef {
            name: name.into(),
            description: None,
            extension_path: path.into(),
            has_argument_completions: false,
        }
    }

    #[test]
    fn duplicate_commands_are_numbered_in_load_order() {
        let resolved = resolve_commands(vec![
            (0, command("plan", "a.ts")),
            (0, command("todo", "a.ts")),
            (1, command("plan", "b.ts")),
        ]);
        let names: Vec<&str> = resolved
            .iter()
            .map(|c| c.invocation_name.as_str())
            .collect();
        assert_eq!(names, ["plan:1", "todo", "plan:2"]);
        assert_eq!(resolved[2].backend, 1);
    }

    #[test]
    fn tool_defs_parse_with_defaults() {
        let def: ToolDef = serde_json::from_str(r#"{"name":"hello"}"#).unwrap();
        assert_eq!(def.parameters["type"], "object");
        assert!(def.execution_mode.is_none());
    }
}
