//! The Messages API's tool definitions: strict where the model takes strict tools and the
//! schema fits, eager input streaming, the cache marker on the last one.

use serde_json::{Map, Value};

use super::request::{CacheControl, supports_eager_tool_streaming, to_claude_code_name};
use crate::constrained_sampling;
use crate::types::{Context, Model};

/// Whether the model takes strict tools (`compat.supportsStrictTools`, off by default).
fn supports_strict_tools(model: &Model) -> bool {
    model
        .compat
        .as_ref()
        .and_then(|c| c.supports_strict_tools)
        .unwrap_or(false)
}

/// Keywords Anthropic's strict tool use refuses (a 400 for the whole request), so that a
/// tool preferring strictness is sent plain instead.
fn strict_unsupported_keyword(key: &str, value: &Value) -> bool {
    const REFUSED: [&str; 11] = [
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "maxItems",
        "uniqueItems",
        "minContains",
        "maxContains",
        "minProperties",
        "maxProperties",
    ];
    const FORMATS: [&str; 10] = [
        "date-time",
        "time",
        "date",
        "duration",
        "email",
        "hostname",
        "uri",
        "ipv4",
        "ipv6",
        "uuid",
    ];
    match key {
        _ if REFUSED.contains(&key) => true,
        "minItems" => value != 0 && value != 1,
        "format" => value.as_str().is_none_or(|f| !FORMATS.contains(&f)),
        _ => false,
    }
}

/// Whether `tool` goes strict to `model`: it asks for JSON-schema sampling, the model takes
/// strict tools and the schema fits, unless it only prefers strictness and the session went
/// over Claude's strict-tool limits (`disable_preferred`).
fn tool_is_strict(
    model: &Model,
    tool: &crate::types::Tool,
    disable_preferred: bool,
) -> Option<bool> {
    if disable_preferred && constrained_sampling::prefers_strict(tool) {
        return None;
    }
    constrained_sampling::strict_or_none(
        tool,
        supports_strict_tools(model),
        Some(strict_unsupported_keyword),
    )
}

/// Whether a tool that only prefers strictness is sent strict, so that a refusal for
/// Claude's strict-tool limits can be retried with those tools plain (pi-ai 1.2).
pub fn has_preferred_strict_tools(model: &Model, context: &Context) -> bool {
    context.tools.iter().any(|tool| {
        constrained_sampling::prefers_strict(tool)
            && tool_is_strict(model, tool, false) == Some(true)
    })
}

/// The declared tools, the last one carrying the cache marker.
pub(super) fn convert_tools(
    model: &Model,
    context: &Context,
    oauth: bool,
    cache: Option<&CacheControl>,
    disable_preferred: bool,
) -> Vec<Value> {
    convert_tool_list(model, &context.tools, oauth, cache, disable_preferred)
}

/// `tools` as the Messages API declares them, the last one carrying the cache marker.
pub(super) fn convert_tool_list(
    model: &Model,
    tools: &[crate::types::Tool],
    oauth: bool,
    cache: Option<&CacheControl>,
    disable_preferred: bool,
) -> Vec<Value> {
    let eager = supports_eager_tool_streaming(model);
    let last = tools.len().saturating_sub(1);
    tools
        .iter()
        .enumerate()
        .map(|(i, tool)| {
            let mut t = Map::new();
            let name = if oauth {
                to_claude_code_name(&tool.name)
            } else {
                tool.name.clone()
            };
            t.insert("name".into(), Value::String(name));
            t.insert(
                "description".into(),
                Value::String(tool.description.clone()),
            );
            if eager {
                t.insert("eager_input_streaming".into(), Value::Bool(true));
            }
            let strict = tool_is_strict(model, tool, disable_preferred);
            if strict == Some(true) {
                t.insert("strict".into(), Value::Bool(true));
            }
            let parameters = constrained_sampling::tool_parameters(tool, strict);
            let field = |key: &str, empty: Value| parameters.get(key).cloned().unwrap_or(empty);
            // A strict schema goes whole, with the legacy fields below laid over it.
            let mut schema = match (strict, parameters.as_object()) {
                (Some(true), Some(map)) => map.clone(),
                _ => Map::new(),
            };
            schema.insert("type".into(), Value::from("object"));
            schema.insert(
                "properties".into(),
                field("properties", Value::Object(Map::new())),
            );
            schema.insert(
                "required".into(),
                field("required", Value::Array(Vec::new())),
            );
            // As pi-ai 1.6: whether extra arguments are allowed, and the shared definitions
            // property `$ref`s point into, go along; other root keywords (a root `anyOf`,
            // which Anthropic refuses) stay out.
            for key in ["additionalProperties", "$defs", "definitions"] {
                if let Some(value) = parameters.get(key) {
                    schema.insert(key.into(), value.clone());
                }
            }
            t.insert("input_schema".into(), Value::Object(schema));
            if let (true, Some(c)) = (i == last, cache) {
                t.insert(
                    "cache_control".into(),
                    serde_json::to_value(c).unwrap_or(Value::Null),
                );
            }
            Value::Object(t)
        })
        .collect()
}
