//! The tools a script can call, as it finds them: `ALL_TOOLS`, `searchTools`,
//! `describeTool`, `describeNamespace`, and the declarations listed in the codemode
//! description.

use std::collections::HashMap;
use std::sync::Arc;

use pi_agent_core::{AgentTool, ToolNamespace};
use serde_json::{Value, json};

use super::declaration::{identifier, schema_to_type};
use crate::mcp::tool_search::rank_tools;

/// Longest tagged input type before the untagged one is tried.
const MAX_INPUT_TYPE_CHARS: usize = 16_000;
const DEFAULT_SEARCH_LIMIT: usize = 8;

/// One callable tool.
pub(crate) struct Entry {
    pub tool: Arc<dyn AgentTool>,
    /// Its JavaScript name.
    pub id: String,
    /// Its description with its guidelines, and its TypeScript declaration.
    pub sample: String,
    pub namespace: Option<ToolNamespace>,
}

/// Every tool a script can call.
pub(crate) struct Catalog {
    pub entries: Vec<Entry>,
}

/// The description with the tool's prompt guidelines as bullets.
fn described(tool: &dyn AgentTool, guidelines: &[String]) -> String {
    let bullets: Vec<String> = guidelines
        .iter()
        .filter(|g| !g.trim().is_empty())
        .map(|g| format!("- {}", g.trim()))
        .collect();
    if bullets.is_empty() {
        tool.description().to_owned()
    } else {
        format!("{}\n\n{}", tool.description().trim(), bullets.join("\n"))
    }
}

fn input_type(schema: &Value) -> String {
    let tagged = schema_to_type(schema, true);
    if tagged.chars().count() <= MAX_INPUT_TYPE_CHARS {
        return tagged;
    }
    let plain = schema_to_type(schema, false);
    if plain.chars().count() <= MAX_INPUT_TYPE_CHARS {
        plain
    } else {
        "unknown".into()
    }
}

fn output_type(tool: &dyn AgentTool) -> String {
    match tool.output_schema() {
        Some(schema) => schema_to_type(schema, true),
        None => "string".into(),
    }
}

/// The description and the `declare const tools` block of one tool.
pub(super) fn sample(tool: &dyn AgentTool, guidelines: &[String]) -> String {
    format!(
        "{}\n\ncodemode tool declaration:\n```ts\ndeclare const tools: {{ {}(args: {}): Promise<{}>; }};\n```",
        described(tool, guidelines).trim(),
        identifier(tool.name()),
        input_type(tool.parameters()),
        output_type(tool)
    )
}

impl Catalog {
    /// The catalog of `tools` (codemode itself is never callable from a script).
    pub fn new(tools: &[Arc<dyn AgentTool>], guidelines: &HashMap<String, Vec<String>>) -> Self {
        let entries = tools
            .iter()
            .filter(|t| t.name() != super::CODEMODE)
            .map(|tool| {
                let notes = guidelines
                    .get(tool.name())
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                Entry {
                    id: identifier(tool.name()),
                    sample: sample(tool.as_ref(), notes),
                    namespace: tool.namespace(),
                    tool: tool.clone(),
                }
            })
            .collect();
        Self { entries }
    }

    /// The tool a script's call names, by its name.
    pub fn tool(&self, name: &str) -> Option<&Arc<dyn AgentTool>> {
        self.entries
            .iter()
            .find(|e| e.tool.name() == name)
            .map(|e| &e.tool)
    }

    /// The prelude's setup: the tools by identifier and name, `ALL_TOOLS`, and the store.
    pub fn setup(&self, store: &serde_json::Map<String, Value>) -> String {
        let tools: Vec<Value> = self
            .entries
            .iter()
            .map(|e| json!({"id": e.id, "name": e.tool.name()}))
            .collect();
        let all: Vec<Value> = self
            .entries
            .iter()
            .map(|e| json!({"name": e.id, "description": e.sample}))
            .collect();
        json!({"tools": tools, "allTools": all, "store": store}).to_string()
    }

    /// `searchTools(query, { limit, namespace })`.
    pub fn search(&self, args: &Value) -> Value {
        let query = args["query"].as_str().unwrap_or_default();
        let limit = args["limit"]
            .as_u64()
            .map_or(DEFAULT_SEARCH_LIMIT, |n| n as usize);
        let wanted = args["namespace"].as_str();
        let pool: Vec<&Entry> = self
            .entries
            .iter()
            .filter(|e| match wanted {
                None => true,
                Some(q) => e
                    .namespace
                    .as_ref()
                    .is_some_and(|ns| ns.name == q || identifier(&ns.name) == identifier(q)),
            })
            .collect();
        let ranked: Vec<(Arc<dyn AgentTool>, Option<String>)> = pool
            .iter()
            .map(|e| {
                let text = e.namespace.as_ref().map(|ns| {
                    [
                        ns.name.as_str(),
                        ns.description.as_deref().unwrap_or(""),
                        ns.instructions.as_deref().unwrap_or(""),
                    ]
                    .join(" ")
                });
                (e.tool.clone(), text)
            })
            .collect();
        Value::Array(
            rank_tools(query, &ranked, limit)
                .into_iter()
                .map(|i| json!({"name": pool[i].id, "description": pool[i].sample}))
                .collect(),
        )
    }

    /// `describeTool(name)`: the sample, or `undefined` (`Null` here).
    pub fn describe_tool(&self, name: &str) -> Value {
        self.entries
            .iter()
            .find(|e| e.tool.name() == name || e.id == name)
            .map_or(Value::Null, |e| Value::String(e.sample.clone()))
    }

    /// `describeNamespace(name)`: the namespace and its tools' identifiers.
    pub fn describe_namespace(&self, name: &str) -> Value {
        let matches =
            |ns: &ToolNamespace| ns.name == name || identifier(&ns.name) == identifier(name);
        let members: Vec<&Entry> = self
            .entries
            .iter()
            .filter(|e| e.namespace.as_ref().is_some_and(matches))
            .collect();
        let Some(namespace) = members.first().and_then(|e| e.namespace.as_ref()) else {
            return Value::Null;
        };
        let mut out = json!({"name": namespace.name});
        if let Some(d) = &namespace.description {
            out["description"] = json!(d);
        }
        if let Some(i) = &namespace.instructions {
            out["instructions"] = json!(i);
        }
        out["tools"] = json!(members.iter().map(|e| e.id.clone()).collect::<Vec<_>>());
        out
    }
}

/// What a declared tool's description gains while codemode is on: how a script calls it
/// and what the call resolves to.
pub(crate) fn script_call_note(tool: &dyn AgentTool) -> String {
    let resolves = match tool.output_schema() {
        None => "a string".to_owned(),
        Some(schema) => {
            let kind = schema_to_type(schema, true);
            if kind == "string" {
                "a string".to_owned()
            } else if let Some(fields) =
                describe_fields(schema, schema, 1).or_else(|| describe_union(schema, schema))
            {
                format!("`{fields}`")
            } else if kind.contains('\n') {
                format!(
                    "a value; `await describeTool({})` shows its type",
                    Value::String(tool.name().to_owned())
                )
            } else {
                format!("`{kind}`")
            }
        }
    };
    format!(
        "{}\n\nCodemode: `tools.{}(args)` resolves to {resolves}.",
        tool.description().trim(),
        identifier(tool.name())
    )
}

fn follow<'a>(schema: &'a Value, root: &'a Value) -> Option<&'a Value> {
    let mut current = schema;
    for _ in 0..32 {
        match current.get("$ref").and_then(Value::as_str) {
            Some(reference) => {
                let path = reference.strip_prefix("#")?;
                current = if path.is_empty() {
                    root
                } else {
                    root.pointer(path)?
                };
            }
            None => return Some(current),
        }
    }
    None
}

/// `{ a, b?, c: { d } }` for an object schema.
fn describe_fields(schema: &Value, root: &Value, depth: usize) -> Option<String> {
    let schema = follow(schema, root)?;
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return None;
    }
    let properties = schema.get("properties")?.as_object()?;
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let entries: Vec<String> = properties
        .iter()
        .map(|(name, field)| {
            let optional = if required.contains(&name.as_str()) {
                ""
            } else {
                "?"
            };
            let nested = match field.get("const") {
                Some(constant) => Some(constant.to_string()),
                None if depth > 0 => describe_fields(field, root, depth - 1),
                None => None,
            };
            match nested {
                Some(nested) => format!("{name}{optional}: {nested}"),
                None => format!("{name}{optional}"),
            }
        })
        .collect();
    Some(format!("{{ {} }}", entries.join(", ")))
}

fn describe_union(schema: &Value, root: &Value) -> Option<String> {
    let schema = follow(schema, root)?;
    let variants = schema
        .get("anyOf")
        .or_else(|| schema.get("oneOf"))?
        .as_array()?;
    let parts: Option<Vec<String>> = variants
        .iter()
        .map(|v| describe_fields(v, root, 0))
        .collect();
    parts.map(|p| p.join(" | "))
}
