//! Layer 6 (pure part): tool parameter schemas rewritten for the provider family of the
//! model's API. `Value` in, `Value` out; key order is preserved.
//!
//! pi-ai's converters adapt schemas again when they build a request (Gemini's OpenAPI form,
//! OpenAI strict mode, Anthropic's `input_schema` keeping only `properties`/`required`);
//! these rewrites produce schemas those converters leave as they are, so the layers agree.
//! In particular Anthropic's converter drops top-level `$defs`, so refs are inlined here.

use std::collections::BTreeMap;

use pi_ai::api;
use serde_json::{Map, Value, json};

use super::schema_google::google_node;

/// Which dialect of JSON Schema an API accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaFamily {
    /// Gemini's OpenAPI subset (`google-generative-ai`, `google-vertex`, `google-gemini-cli`).
    Google,
    /// OpenAI function schemas (completions, responses, Azure, Codex).
    OpenAi,
    /// `anthropic-messages`.
    Anthropic,
    /// Anything else: only `$schema` is removed.
    Other,
}

impl SchemaFamily {
    /// The family of a `pi_ai::Model::api` value.
    pub fn from_api(api: &str) -> Self {
        match api {
            api::GOOGLE_GENERATIVE_AI | api::GOOGLE_VERTEX | api::GOOGLE_GEMINI_CLI => Self::Google,
            api::OPENAI_COMPLETIONS
            | api::OPENAI_RESPONSES
            | api::AZURE_OPENAI_RESPONSES
            | api::OPENAI_CODEX_RESPONSES => Self::OpenAi,
            api::ANTHROPIC_MESSAGES => Self::Anthropic,
            _ => Self::Other,
        }
    }
}

/// Rewrites one parameters schema for `family`:
/// - Google: refs inlined; `$schema`, `$id`, `$defs`, `definitions`, `additionalProperties`,
///   `patternProperties`, `examples` removed; `const` → one-value `enum`; `oneOf` → `anyOf`;
///   a union with `null` (`anyOf`/`oneOf` or a `type` array) collapsed to the other type with
///   `nullable: true`; a union of same-typed literals flattened into one `enum`.
///   `default` is kept (Gemini's schema supports it).
/// - OpenAI: `$schema` removed; the top level gets `"type": "object"`, `properties` and
///   `additionalProperties: false` when they are missing.
/// - Anthropic: refs inlined; `$schema` and `$id` removed.
/// - Other: `$schema` removed.
pub fn normalize_schema(schema: &Value, family: SchemaFamily) -> Value {
    match family {
        SchemaFamily::Google => google_node(&inline_refs(schema)),
        SchemaFamily::OpenAi => openai_top_level(&strip_keys(schema, &["$schema"])),
        SchemaFamily::Anthropic => strip_keys(&inline_refs(schema), &["$schema", "$id"]),
        SchemaFamily::Other => strip_keys(schema, &["$schema"]),
    }
}

/// Keywords holding one subschema.
const SCHEMA_KEYS: [&str; 11] = [
    "additionalProperties",
    "items",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
];
/// Keywords holding an array of subschemas.
const SCHEMA_ARRAY_KEYS: [&str; 5] = ["anyOf", "oneOf", "allOf", "prefixItems", "items"];
/// Keywords holding a map of name → subschema.
const SCHEMA_MAP_KEYS: [&str; 5] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// The value of keyword `key` with `f` applied to each subschema in it; values of other
/// keywords (`enum`, `default`, `required`, …) are returned as they are.
pub(crate) fn map_child(key: &str, value: &Value, f: &mut dyn FnMut(&Value) -> Value) -> Value {
    match value {
        Value::Object(_) if SCHEMA_KEYS.contains(&key) => f(value),
        Value::Array(items) if SCHEMA_ARRAY_KEYS.contains(&key) => {
            Value::Array(items.iter().map(&mut *f).collect())
        }
        Value::Object(map) if SCHEMA_MAP_KEYS.contains(&key) => Value::Object(
            map.iter()
                .map(|(name, schema)| (name.clone(), f(schema)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Removes `keys` from the schema and every subschema (never from values like `default`).
pub fn strip_keys(schema: &Value, keys: &[&str]) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    Value::Object(
        map.iter()
            .filter(|(k, _)| !keys.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), map_child(k, v, &mut |c| strip_keys(c, keys))))
            .collect(),
    )
}

/// Definitions in scope, by `"$defs/<name>"` or `"definitions/<name>"`.
type Defs = BTreeMap<String, Value>;

/// Replaces local `$ref`s (`#/$defs/…`, `#/definitions/…`, also nested definitions) by the
/// schemas they name, and drops the definitions. Keywords beside a `$ref` refine the target.
/// A recursive ref becomes the target's `type`/`title`/`description` only; a ref that cannot
/// be resolved keeps only the keywords beside it.
pub fn inline_refs(schema: &Value) -> Value {
    inline_node(schema, &Defs::new(), &mut Vec::new())
}

fn inline_node(value: &Value, outer: &Defs, stack: &mut Vec<String>) -> Value {
    let Value::Object(map) = value else {
        return value.clone();
    };
    let mut defs = outer.clone();
    for kind in ["$defs", "definitions"] {
        if let Some(Value::Object(found)) = map.get(kind) {
            for (name, def) in found {
                defs.insert(format!("{kind}/{name}"), def.clone());
            }
        }
    }
    let mut out = Map::new();
    for (k, v) in map {
        if k != "$ref" && k != "$defs" && k != "definitions" {
            out.insert(
                k.clone(),
                map_child(k, v, &mut |c| inline_node(c, &defs, stack)),
            );
        }
    }
    let Some(Value::String(reference)) = map.get("$ref") else {
        return Value::Object(out);
    };
    let Some(target) = lookup(reference, &defs) else {
        return Value::Object(out);
    };
    let resolved = if stack.contains(reference) {
        let mut shallow = Map::new();
        for key in ["type", "title", "description"] {
            if let Some(v) = target.get(key) {
                shallow.insert(key.to_owned(), v.clone());
            }
        }
        Value::Object(shallow)
    } else {
        stack.push(reference.clone());
        let resolved = inline_node(target, &defs, stack);
        stack.pop();
        resolved
    };
    match resolved {
        Value::Object(mut resolved) => {
            for (k, v) in out {
                resolved.insert(k, v);
            }
            Value::Object(resolved)
        }
        _ => Value::Object(out),
    }
}

fn lookup<'a>(reference: &str, defs: &'a Defs) -> Option<&'a Value> {
    let (kind, name) = reference
        .strip_prefix("#/$defs/")
        .map(|n| ("$defs", n))
        .or_else(|| {
            reference
                .strip_prefix("#/definitions/")
                .map(|n| ("definitions", n))
        })?;
    let name = name.replace("~1", "/").replace("~0", "~");
    defs.get(&format!("{kind}/{name}"))
}

/// OpenAI: an object at the top level, with `properties`, closed unless it says otherwise.
fn openai_top_level(schema: &Value) -> Value {
    let Value::Object(map) = schema else {
        return json!({"type": "object", "properties": {}, "additionalProperties": false});
    };
    let has_properties = map.contains_key("properties");
    let mut out = Map::new();
    if !map.contains_key("type") {
        out.insert("type".into(), "object".into());
        if !has_properties {
            out.insert("properties".into(), json!({}));
        }
    }
    for (k, v) in map {
        out.insert(k.clone(), v.clone());
        if k == "type" && !has_properties {
            out.insert("properties".into(), json!({}));
        }
    }
    if !map.contains_key("additionalProperties") {
        out.insert("additionalProperties".into(), false.into());
    }
    Value::Object(out)
}

#[cfg(test)]
#[path = "schema_tests.rs"]
mod tests;
