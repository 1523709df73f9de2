//! Tool-schema normalization per provider (seed 000, layer 6). Tools are written once in
//! JSON Schema; each API accepts a different subset. These rewrites keep the meaning:
//! references are inlined, and a constraint an API cannot express moves into the
//! description instead of vanishing.

use serde_json::{Map, Value, json};

/// Keywords that only organize a schema document; no API needs them in a tool schema.
const META: [&str; 8] = [
    "$schema",
    "$id",
    "$anchor",
    "$dynamicAnchor",
    "$vocabulary",
    "$comment",
    "$defs",
    "definitions",
];

/// What Gemini's OpenAPI-style `Schema` understands.
const GEMINI_KEYWORDS: [&str; 23] = [
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
    "additionalProperties",
];

/// How deep `$ref`s are inlined (recursive schemas stop here).
const MAX_REF_DEPTH: usize = 8;

/// Replaces local `$ref`s (`#/$defs/…`, `#/definitions/…`) with the schemas they name.
pub fn inline_refs(schema: &Value) -> Value {
    let defs = collect_defs(schema);
    inline(schema, &defs, 0)
}

fn collect_defs(schema: &Value) -> Map<String, Value> {
    let mut defs = Map::new();
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(found)) = schema.get(key) {
            for (name, def) in found {
                defs.insert(format!("#/{key}/{name}"), def.clone());
            }
        }
    }
    defs
}

fn inline(value: &Value, defs: &Map<String, Value>, depth: usize) -> Value {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(reference)) = map.get("$ref")
                && let Some(target) = defs.get(reference)
            {
                if depth >= MAX_REF_DEPTH {
                    return json!({"type": "object", "description": format!("(recursive {reference})")});
                }
                let mut resolved = inline(target, defs, depth + 1);
                // Sibling keywords (a description next to the $ref) refine the target.
                if let Value::Object(resolved_map) = &mut resolved {
                    for (k, v) in map.iter().filter(|(k, _)| *k != "$ref") {
                        resolved_map.insert(k.clone(), inline(v, defs, depth));
                    }
                }
                return resolved;
            }
            Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), inline(v, defs, depth)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| inline(v, defs, depth)).collect()),
        other => other.clone(),
    }
}

/// Keywords whose value is a subschema or a list of them.
const SUBSCHEMA_KEYS: [&str; 16] = [
    "additionalProperties",
    "unevaluatedProperties",
    "propertyNames",
    "items",
    "prefixItems",
    "additionalItems",
    "unevaluatedItems",
    "contains",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
];
/// Keywords whose value maps names to subschemas.
const SUBSCHEMA_MAP_KEYS: [&str; 6] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
];

/// A string or number `const` as a one-value `enum`, in every subschema (Gemini rejects
/// `const`); literal data elsewhere (`default`, `examples`) is left alone (pi-ai 1.6).
pub fn const_as_enum(schema: &Value) -> Value {
    rewrite_const(schema, false)
}

fn rewrite_const(schema: &Value, name_map: bool) -> Value {
    let map = match schema {
        Value::Array(items) => {
            return Value::Array(items.iter().map(|i| rewrite_const(i, false)).collect());
        }
        Value::Object(map) => map,
        other => return other.clone(),
    };
    let mut out: serde_json::Map<String, Value> = map
        .iter()
        .map(|(key, value)| {
            let value = if name_map || SUBSCHEMA_KEYS.contains(&key.as_str()) {
                rewrite_const(value, false)
            } else if SUBSCHEMA_MAP_KEYS.contains(&key.as_str()) {
                rewrite_const(value, true)
            } else {
                value.clone()
            };
            (key.clone(), value)
        })
        .collect();
    if !name_map
        && !out.contains_key("enum")
        && out
            .get("const")
            .is_some_and(|c| c.is_string() || c.is_number())
        && let Some(value) = out.shift_remove("const")
    {
        out.insert("enum".into(), Value::Array(vec![value]));
    }
    Value::Object(out)
}

/// Drops the document-level keywords (`$schema`, `$defs`, …) everywhere.
pub fn strip_meta(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !META.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), strip_meta(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(strip_meta).collect()),
        other => other.clone(),
    }
}

/// For Gemini (`parameters`, the OpenAPI subset): refs inlined, no `$schema`, no
/// `additionalProperties: false`, `const` as a one-value `enum`, `["t","null"]` types as
/// `nullable`, `oneOf` as `anyOf`, and other constraints written into the description.
pub fn for_gemini(schema: &Value) -> Value {
    gemini_node(&strip_meta(&inline_refs(schema)), true)
}

fn is_schema_map(key: &str) -> bool {
    key == "properties"
}

fn gemini_node(value: &Value, is_schema: bool) -> Value {
    let Value::Object(map) = value else {
        return value.clone();
    };
    if !is_schema {
        return value.clone();
    }
    let mut out = Map::new();
    let mut notes: Vec<String> = Vec::new();
    for (key, v) in map {
        match key.as_str() {
            "additionalProperties" => {
                // `false` is what Gemini rejects; a schema for extra values is kept.
                if v.is_object() {
                    out.insert(key.clone(), gemini_node(v, true));
                }
            }
            "const" => {
                out.insert("enum".into(), Value::Array(vec![v.clone()]));
            }
            "type" => match v {
                Value::Array(types) => {
                    let non_null: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
                    if non_null.len() < types.len() {
                        out.insert("nullable".into(), true.into());
                    }
                    match non_null.as_slice() {
                        [single] => {
                            out.insert("type".into(), (*single).clone());
                        }
                        [] => {}
                        many => {
                            out.insert(
                                "anyOf".into(),
                                Value::Array(many.iter().map(|t| json!({"type": t})).collect()),
                            );
                        }
                    }
                }
                other => {
                    out.insert(key.clone(), other.clone());
                }
            },
            "oneOf" | "anyOf" => {
                let variants = v
                    .as_array()
                    .map(|items| items.iter().map(|i| gemini_node(i, true)).collect())
                    .unwrap_or_default();
                out.insert("anyOf".into(), Value::Array(variants));
            }
            "properties" => {
                let props = v
                    .as_object()
                    .map(|props| {
                        props
                            .iter()
                            .map(|(name, s)| (name.clone(), gemini_node(s, true)))
                            .collect::<Map<_, _>>()
                    })
                    .unwrap_or_default();
                out.insert(key.clone(), Value::Object(props));
            }
            "items" => {
                out.insert(key.clone(), gemini_node(v, true));
            }
            k if GEMINI_KEYWORDS.contains(&k) => {
                out.insert(key.clone(), gemini_node(v, is_schema_map(k)));
            }
            _ => notes.push(format!("{key}: {}", compact(v))),
        }
    }
    if !notes.is_empty() {
        let base = out
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let constraint = format!("({})", notes.join("; "));
        let description = if base.is_empty() {
            constraint
        } else {
            format!("{base} {constraint}")
        };
        out.insert("description".into(), description.into());
    }
    Value::Object(out)
}

fn compact(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn const_becomes_a_one_value_enum_in_subschemas_only() {
        let schema = json!({"type": "object", "properties": {
            "mode": {"const": "fast", "default": {"const": "kept"}},
            "const": {"type": "string"},
            "level": {"anyOf": [{"const": 1}, {"const": 2}]},
            "flag": {"const": true},
            "either": {"const": "a", "enum": ["a"]}}});
        assert_eq!(
            const_as_enum(&schema),
            json!({"type": "object", "properties": {
                "mode": {"default": {"const": "kept"}, "enum": ["fast"]},
                "const": {"type": "string"},
                "level": {"anyOf": [{"enum": [1]}, {"enum": [2]}]},
                "flag": {"const": true},
                "either": {"const": "a", "enum": ["a"]}}})
        );
    }

    fn sample() -> Value {
        json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "additionalProperties": false,
            "$defs": {"Mode": {"type": "string", "enum": ["a", "b"]}},
            "properties": {
                "path": {"type": "string", "description": "File", "pattern": "^/"},
                "mode": {"$ref": "#/$defs/Mode", "description": "How"},
                "kind": {"const": "file"},
                "limit": {"type": ["integer", "null"], "exclusiveMinimum": 0},
                "tags": {"type": "array", "items": {"type": "object", "additionalProperties": false,
                          "properties": {"name": {"type": "string"}}}}
            },
            "required": ["path"]
        })
    }

    #[test]
    fn gemini_gets_the_openapi_subset_without_losing_meaning() {
        let out = for_gemini(&sample());
        assert!(out.get("$schema").is_none());
        assert!(out.get("$defs").is_none());
        assert!(out.get("additionalProperties").is_none());
        assert_eq!(
            out["properties"]["mode"],
            json!({"type": "string", "enum": ["a", "b"], "description": "How"})
        );
        assert_eq!(out["properties"]["kind"], json!({"enum": ["file"]}));
        assert_eq!(out["properties"]["limit"]["type"], "integer");
        assert_eq!(out["properties"]["limit"]["nullable"], true);
        assert_eq!(
            out["properties"]["limit"]["description"],
            "(exclusiveMinimum: 0)"
        );
        assert_eq!(out["properties"]["path"]["pattern"], "^/");
        assert!(
            out["properties"]["tags"]["items"]
                .get("additionalProperties")
                .is_none()
        );
        assert_eq!(out["required"], json!(["path"]));
    }

    #[test]
    fn recursive_refs_stop() {
        let schema = json!({"$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
                            "$ref": "#/$defs/Node"});
        let out = inline_refs(&schema);
        assert!(out.to_string().contains("recursive"));
    }
}
