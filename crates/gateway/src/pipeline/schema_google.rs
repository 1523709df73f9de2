//! The Gemini rewrite of one (ref-free) schema node and its subschemas; see
//! [`super::schema::normalize_schema`] for the rules.

use serde_json::{Map, Value, json};

use super::schema::map_child;

/// Keywords Gemini rejects or that only organize a schema document.
const DROPPED: [&str; 10] = [
    "$schema",
    "$id",
    "$ref",
    "$defs",
    "definitions",
    "$comment",
    "$anchor",
    "additionalProperties",
    "patternProperties",
    "examples",
];

/// Keywords of the outer schema kept when a union collapses into one of its variants.
const META: [&str; 3] = ["description", "title", "default"];

/// Rewrites a node (refs must already be inlined).
pub(crate) fn google_node(value: &Value) -> Value {
    let Value::Object(map) = value else {
        return value.clone();
    };
    let mut union_nullable = false;
    let mut unions: Vec<(&str, Vec<Value>)> = Vec::new();
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(variants)) = map.get(key) else {
            continue;
        };
        let cleaned: Vec<Value> = variants.iter().map(google_node).collect();
        let non_null: Vec<Value> = cleaned.into_iter().filter(|v| !is_null_schema(v)).collect();
        let had_null = non_null.len() < variants.len();
        if let Some(flat) = flatten_literals(&non_null) {
            return collapse(flat, map, had_null);
        }
        if had_null && let [lone @ Value::Object(_)] = non_null.as_slice() {
            return collapse(lone.clone(), map, true);
        }
        union_nullable |= had_null;
        unions.push((key, non_null));
    }

    let has_any_of = map.contains_key("anyOf");
    let mut out = Map::new();
    let mut nullable = union_nullable;
    for (key, v) in map {
        match key.as_str() {
            k if DROPPED.contains(&k) => {}
            "const" => {
                if !map.contains_key("enum") {
                    out.insert("enum".into(), Value::Array(vec![v.clone()]));
                }
            }
            "type" => match v {
                Value::Array(types) => {
                    let non_null: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
                    nullable |= non_null.len() < types.len();
                    match non_null.as_slice() {
                        [one] => {
                            out.insert("type".into(), (*one).clone());
                        }
                        [] => {}
                        many if !has_any_of && !map.contains_key("oneOf") => {
                            let variants = many.iter().map(|t| json!({"type": t})).collect();
                            out.insert("anyOf".into(), Value::Array(variants));
                        }
                        _ => {}
                    }
                    if nullable {
                        out.insert("nullable".into(), true.into());
                    }
                }
                other => {
                    out.insert(key.clone(), other.clone());
                }
            },
            "anyOf" | "oneOf" => {
                let variants = unions
                    .iter()
                    .find(|(k, _)| k == key)
                    .map(|(_, variants)| Value::Array(variants.clone()))
                    .unwrap_or_else(|| v.clone());
                // Gemini knows only `anyOf`; a `oneOf` beside an `anyOf` stays as it is.
                let name = if key == "oneOf" && !has_any_of {
                    "anyOf"
                } else {
                    key
                };
                out.insert(name.to_owned(), variants);
            }
            _ => {
                out.insert(key.clone(), map_child(key, v, &mut google_node));
            }
        }
    }
    if nullable && !out.contains_key("nullable") {
        out.insert("nullable".into(), true.into());
    }
    Value::Object(out)
}

/// A union collapsed into `variant`, with the outer node's meta keywords and, when a `null`
/// variant was dropped, `nullable: true` (right after `type`).
fn collapse(variant: Value, outer: &Map<String, Value>, nullable: bool) -> Value {
    let Value::Object(variant) = variant else {
        return variant;
    };
    let mut out = Map::new();
    for (k, v) in variant {
        let is_type = k == "type";
        out.insert(k, v);
        if is_type && nullable {
            out.insert("nullable".into(), true.into());
        }
    }
    for key in META {
        if let Some(v) = outer.get(key) {
            out.insert(key.to_owned(), v.clone());
        }
    }
    if nullable && !out.contains_key("nullable") {
        out.insert("nullable".into(), true.into());
    }
    Value::Object(out)
}

/// `{"type": "null"}`, `{"type": ["null"]}`, `{"const": null}` or `{"enum": [null]}`.
fn is_null_schema(value: &Value) -> bool {
    let Value::Object(map) = value else {
        return false;
    };
    match map.get("type") {
        Some(Value::String(t)) if t == "null" => return true,
        Some(Value::Array(types)) if types.len() == 1 && types[0] == "null" => return true,
        _ => {}
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        return values.len() == 1 && values[0].is_null();
    }
    false
}

/// Variants that are all literals (`enum` of one value, after the `const` rewrite) of one
/// type become `{"type": t, "enum": [...]}`.
fn flatten_literals(variants: &[Value]) -> Option<Value> {
    let mut common: Option<&Value> = None;
    let mut values = Vec::with_capacity(variants.len());
    for variant in variants {
        let value = match variant.get("enum") {
            Some(Value::Array(one)) if one.len() == 1 => one[0].clone(),
            _ => return None,
        };
        let ty = variant.get("type").filter(|t| t.is_string())?;
        if common.is_some_and(|c| c != ty) {
            return None;
        }
        common = Some(ty);
        values.push(value);
    }
    let ty = common?;
    Some(json!({"type": ty, "enum": values}))
}
