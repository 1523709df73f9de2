//! A tool as a codemode script sees it: its JavaScript identifier and its TypeScript
//! declaration, written from the tool's JSON Schemas with constraints as `@tag` comments.

use std::collections::HashSet;

use serde_json::{Map, Value};

const INDENT: &str = "  ";
const MAX_REF_EXPANSIONS: usize = 32;
const MAX_TAG_CHARS: usize = 80;
const TAG_KEYWORDS: [&str; 11] = [
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minItems",
    "maxItems",
];
const LOWER_BOUNDS: [&str; 4] = ["minimum", "exclusiveMinimum", "minLength", "minItems"];
const UPPER_BOUNDS: [&str; 4] = ["maximum", "exclusiveMaximum", "maxLength", "maxItems"];

/// `name` as a JavaScript identifier: characters not allowed there become `_`.
pub fn identifier(name: &str) -> String {
    if name.is_empty() {
        return "_".into();
    }
    name.chars()
        .enumerate()
        .map(|(i, c)| {
            let allowed =
                c.is_ascii_alphabetic() || c == '_' || c == '$' || (i > 0 && c.is_ascii_digit());
            if allowed { c } else { '_' }
        })
        .collect()
}

fn is_identifier(key: &str) -> bool {
    let mut chars = key.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// A number as JavaScript's `String(n)` writes it.
fn js_number(n: &serde_json::Number) -> String {
    match n.as_f64() {
        Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 1e21 => format!("{}", f as i64),
        _ => n.to_string(),
    }
}

/// `JSON.stringify(value)`, numbers written as JavaScript does.
fn json(value: &Value) -> String {
    match value {
        Value::Number(n) => js_number(n),
        other => other.to_string(),
    }
}

struct Ctx<'a> {
    root: &'a Value,
    resolving: HashSet<String>,
    expansions: usize,
    tags: bool,
}

/// The TypeScript type of `schema`; with `tags`, properties carry constraint comments.
pub fn schema_to_type(schema: &Value, tags: bool) -> String {
    let mut ctx = Ctx {
        root: schema,
        resolving: HashSet::new(),
        expansions: 0,
        tags,
    };
    to_type(schema, &mut ctx)
}

fn union(types: Vec<String>) -> String {
    let mut seen = HashSet::new();
    let unique: Vec<String> = types
        .into_iter()
        .filter(|t| seen.insert(t.clone()))
        .collect();
    if unique.iter().any(|t| t == "unknown") {
        "unknown".into()
    } else if unique.is_empty() {
        "never".into()
    } else {
        unique.join(" | ")
    }
}

fn resolve<'a>(reference: &str, root: &'a Value) -> Option<&'a Value> {
    let path = reference.strip_prefix('#')?;
    if path.is_empty() {
        return Some(root);
    }
    let mut target = root;
    for segment in path.strip_prefix('/')?.split('/') {
        let decoded = crate::uri_component::decode(segment)?
            .replace("~1", "/")
            .replace("~0", "~");
        target = match target {
            Value::Object(map) => map.get(&decoded)?,
            Value::Array(items) => items.get(decoded.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    match target {
        Value::Bool(_) | Value::Object(_) => Some(target),
        _ => None,
    }
}

fn to_type(schema: &Value, ctx: &mut Ctx<'_>) -> String {
    let map = match schema {
        Value::Bool(true) => return "unknown".into(),
        Value::Bool(false) => return "never".into(),
        Value::Object(map) => map,
        _ => return "unknown".into(),
    };
    if let Some(Value::String(reference)) = map.get("$ref") {
        if ctx.resolving.contains(reference) || ctx.expansions >= MAX_REF_EXPANSIONS {
            return "unknown".into();
        }
        let Some(target) = resolve(reference, ctx.root) else {
            return "unknown".into();
        };
        ctx.expansions += 1;
        ctx.resolving.insert(reference.clone());
        let resolved = to_type(target, ctx);
        ctx.resolving.remove(reference);
        return resolved;
    }
    if let Some(constant) = map.get("const") {
        return json(constant);
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        return union(values.iter().map(json).collect());
    }
    if let Some(Value::Array(variants)) = map.get("anyOf").or_else(|| map.get("oneOf")) {
        return union(variants.iter().map(|v| to_type(v, ctx)).collect());
    }
    if let Some(Value::Array(parts)) = map.get("allOf") {
        let parts: Vec<String> = parts
            .iter()
            .map(|p| to_type(p, ctx))
            .filter(|p| p != "unknown")
            .collect();
        if parts.is_empty() {
            return "unknown".into();
        }
        return parts
            .iter()
            .map(|p| {
                if p.contains(" | ") {
                    format!("({p})")
                } else {
                    p.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(" & ");
    }
    match map.get("type") {
        Some(Value::Array(types)) => union(
            types
                .iter()
                .map(|t| {
                    let mut single = map.clone();
                    single.insert("type".into(), t.clone());
                    to_type(&Value::Object(single), ctx)
                })
                .collect(),
        ),
        Some(Value::String(kind)) => match kind.as_str() {
            "string" => "string".into(),
            "number" | "integer" => "number".into(),
            "boolean" => "boolean".into(),
            "null" => "null".into(),
            "array" => array_type(map, ctx),
            "object" => object_type(map, ctx),
            _ => "unknown".into(),
        },
        None => {
            if ["properties", "additionalProperties", "required"]
                .iter()
                .any(|k| map.contains_key(*k))
            {
                object_type(map, ctx)
            } else if map.contains_key("items") || map.contains_key("prefixItems") {
                array_type(map, ctx)
            } else {
                "unknown".into()
            }
        }
        Some(_) => "unknown".into(),
    }
}

fn array_type(map: &Map<String, Value>, ctx: &mut Ctx<'_>) -> String {
    let tuple = match (map.get("prefixItems"), map.get("items")) {
        (Some(Value::Array(items)), _) | (_, Some(Value::Array(items))) => Some(items),
        _ => None,
    };
    if let Some(items) = tuple {
        let parts: Vec<String> = items.iter().map(|i| to_type(i, ctx)).collect();
        return format!("[{}]", parts.join(", "));
    }
    match map.get("items") {
        Some(items) => format!("Array<{}>", to_type(items, ctx)),
        None => "unknown[]".into(),
    }
}

fn object_type(map: &Map<String, Value>, ctx: &mut Ctx<'_>) -> String {
    let empty = Map::new();
    let properties = match map.get("properties") {
        Some(Value::Object(p)) => p,
        _ => &empty,
    };
    let required: HashSet<&str> = match map.get("required") {
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        _ => HashSet::new(),
    };
    let mut keys: Vec<&String> = properties.keys().collect();
    keys.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
    let mut named = Vec::new();
    for key in keys {
        let schema = &properties[key];
        let shown = if is_identifier(key) {
            key.clone()
        } else {
            Value::String(key.clone()).to_string()
        };
        let optional = if required.contains(key.as_str()) {
            ""
        } else {
            "?"
        };
        let member = format!("{shown}{optional}: {};", to_type(schema, ctx));
        let mut comments: Vec<String> = schema
            .get("description")
            .and_then(Value::as_str)
            .map(|d| {
                d.trim()
                    .split(['\r', '\n', '\u{2028}', '\u{2029}'])
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        if ctx.tags {
            let tags = constraint_tags(schema);
            if !tags.is_empty() {
                comments.push(tags);
            }
        }
        named.push((member, comments));
    }
    let mut index = Vec::new();
    match map.get("additionalProperties") {
        None if named.is_empty() => index.push("[key: string]: unknown;".to_owned()),
        None | Some(Value::Bool(false)) => {}
        Some(Value::Bool(true)) => index.push("[key: string]: unknown;".to_owned()),
        Some(other) => index.push(format!("[key: string]: {};", to_type(other, ctx))),
    }
    if named.is_empty() && index.is_empty() {
        return "{}".into();
    }
    if named.iter().all(|(_, comments)| comments.is_empty()) {
        let members: Vec<&str> = named
            .iter()
            .map(|(m, _)| m.as_str())
            .chain(index.iter().map(String::as_str))
            .collect();
        return format!("{{ {} }}", members.join(" "));
    }
    let mut lines = vec!["{".to_owned()];
    for (member, comments) in &named {
        lines.extend(comments.iter().map(|c| format!("{INDENT}// {c}")));
        lines.push(format!(
            "{INDENT}{}",
            member.replace('\n', &format!("\n{INDENT}"))
        ));
    }
    lines.extend(index.iter().map(|m| format!("{INDENT}{m}")));
    lines.push("}".into());
    lines.join("\n")
}

/// A property's constraints as `@tag value` words (a nullable property's other branch
/// counts as the property).
fn constraint_tags(property: &Value) -> String {
    let Some(map) = property.as_object() else {
        return String::new();
    };
    let mut schemas: Vec<Map<String, Value>> = vec![map.clone()];
    if let Some(Value::Array(variants)) = map.get("anyOf").or_else(|| map.get("oneOf")) {
        let others: Vec<&Value> = variants
            .iter()
            .filter(|v| v.get("type").and_then(Value::as_str) != Some("null"))
            .collect();
        if let [branch] = others[..]
            && let Some(branch) = branch.as_object()
        {
            schemas.push(branch.clone());
        }
    }
    for schema in &mut schemas {
        for (flag, bound) in [
            ("exclusiveMinimum", "minimum"),
            ("exclusiveMaximum", "maximum"),
        ] {
            if schema.get(flag) == Some(&Value::Bool(true)) {
                let value = schema.remove(bound).unwrap_or(Value::Null);
                schema.insert(flag.into(), value);
            }
        }
    }
    let mut tags = Vec::new();
    let is_integer = |s: &Map<String, Value>| match s.get("type") {
        Some(Value::String(t)) => t == "integer",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "integer"),
        _ => false,
    };
    if schemas.iter().any(is_integer) {
        tags.push("@integer".to_owned());
    }
    for keyword in TAG_KEYWORDS {
        let lower = LOWER_BOUNDS.contains(&keyword);
        let upper = UPPER_BOUNDS.contains(&keyword);
        if lower || upper {
            let values: Vec<&serde_json::Number> = schemas
                .iter()
                .filter_map(|s| match s.get(keyword) {
                    Some(Value::Number(n)) => Some(n),
                    _ => None,
                })
                .collect();
            let best = values.into_iter().reduce(|a, b| {
                let (x, y) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
                if (lower && y > x) || (upper && y < x) {
                    b
                } else {
                    a
                }
            });
            if let Some(n) = best {
                tags.push(format!("@{keyword} {}", js_number(n)));
            }
        } else {
            let mut seen = Vec::new();
            for schema in &schemas {
                let text = match schema.get(keyword) {
                    Some(Value::Number(n)) => js_number(n),
                    Some(Value::String(s)) => s.clone(),
                    _ => continue,
                };
                if !seen.contains(&text) {
                    tags.push(format!("@{keyword} {text}"));
                    seen.push(text);
                }
            }
        }
    }
    if schemas
        .iter()
        .any(|s| s.get("uniqueItems") == Some(&Value::Bool(true)))
    {
        tags.push("@uniqueItems".into());
    }
    if let Some(default) = map.get("default").filter(|d| !d.is_null()) {
        tags.push(format!("@default {}", json(default)));
    }
    if map.get("deprecated") == Some(&Value::Bool(true)) {
        tags.push("@deprecated".into());
    }
    tags.into_iter()
        .filter(|t| t.chars().count() <= MAX_TAG_CHARS)
        .map(|t| {
            t.chars()
                .map(|c| match c {
                    '\r' | '\n' | '\u{2028}' | '\u{2029}' => format!("\\u{:04x}", c as u32),
                    c => c.to_string(),
                })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_become_identifiers() {
        assert_eq!(
            identifier("mcp__dev-radius__search"),
            "mcp__dev_radius__search"
        );
        assert_eq!(identifier("9lives"), "_lives");
        assert_eq!(identifier(""), "_");
    }

    #[test]
    fn schemas_become_typescript_with_constraints() {
        let schema = json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Query text", "minLength": 1, "maxLength": 200},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
                "kind": {"enum": ["a", "b"]},
                "opts": {"anyOf": [{"type": "object", "properties": {"x": {"type": "number", "exclusiveMinimum": 0}}}, {"type": "null"}]},
                "with-dash": {"type": ["string", "null"]}
            },
            "required": ["query"]
        });
        assert_eq!(
            schema_to_type(&schema, true),
            "{\n  kind?: \"a\" | \"b\";\n  // @integer @minimum 1 @maximum 50 @default 10\n  limit?: number;\n  opts?: {\n    // @exclusiveMinimum 0\n    x?: number;\n  } | null;\n  // Query text\n  // @minLength 1 @maxLength 200\n  query: string;\n  \"with-dash\"?: string | null;\n}"
        );
        assert_eq!(
            schema_to_type(
                &json!({"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}),
                true
            ),
            "{ query: string; }"
        );
        assert_eq!(
            schema_to_type(&json!({"type": "object"}), true),
            "{ [key: string]: unknown; }"
        );
        assert_eq!(
            schema_to_type(&json!({"type": "array", "items": {"type": "string"}}), true),
            "Array<string>"
        );
    }
}
