//! Strict JSON-schema sampling of tool arguments, as pi-ai 1.6 decides and shapes it: a
//! tool that asks for it (`constrainedSampling: {type: "json_schema", strict: …}`) is sent
//! strict when the model's API has strict mode and its schema fits the strict subset (every
//! property required, optional ones nullable, objects closed); otherwise plainly, or, for a
//! tool that requires it, the request fails.

use serde_json::{Value, json};

use crate::types::{ConstrainedSampling, Strictness, Tool};

/// Keywords a provider's strict mode rejects beyond the common ones (Anthropic's).
pub type UnsupportedKeyword = fn(&str, &Value) -> bool;

/// Why a schema cannot be made strict.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UnsupportedStrictSchema(String);

fn unsupported(message: impl Into<String>) -> UnsupportedStrictSchema {
    UnsupportedStrictSchema(message.into())
}

/// Keywords no strict mode accepts.
const UNSUPPORTED_KEYS: [&str; 16] = [
    "$ref",
    "$defs",
    "definitions",
    "allOf",
    "oneOf",
    "patternProperties",
    "dependentSchemas",
    "dependencies",
    "unevaluatedProperties",
    "propertyNames",
    "contains",
    "prefixItems",
    "not",
    "if",
    "then",
    "else",
];

/// An object or array schema (not allowed as an `anyOf` variant in strict mode).
fn is_structured(schema: &Value) -> bool {
    let Some(map) = schema.as_object() else {
        return false;
    };
    let has_type = |name: &str| match map.get("type") {
        Some(Value::String(t)) => t == name,
        Some(Value::Array(types)) => types.iter().any(|t| t == name),
        _ => false,
    };
    has_type("object")
        || has_type("array")
        || map.contains_key("properties")
        || map.contains_key("items")
}

/// Whether `schema` already admits `null`.
fn allows_null(schema: &Value) -> bool {
    let Some(map) = schema.as_object() else {
        return false;
    };
    match map.get("type") {
        Some(Value::String(t)) if t == "null" => return true,
        Some(Value::Array(types)) if types.iter().any(|t| t == "null") => return true,
        _ => {}
    }
    if map.get("const") == Some(&Value::Null)
        || map
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|values| values.contains(&Value::Null))
    {
        return true;
    }
    map.get("anyOf")
        .and_then(Value::as_array)
        .is_some_and(|variants| variants.iter().any(allows_null))
}

/// Makes one node strict in place.
fn make_node_strict(
    schema: &mut Value,
    keyword: Option<UnsupportedKeyword>,
) -> Result<(), UnsupportedStrictSchema> {
    let Some(map) = schema.as_object_mut() else {
        return Err(unsupported("boolean schemas are unsupported"));
    };
    if let Some(key) = UNSUPPORTED_KEYS.iter().find(|k| map.contains_key(**k)) {
        return Err(unsupported(format!("{key} schemas are unsupported")));
    }
    if let Some(keyword) = keyword
        && let Some((key, value)) = map.iter().find(|(k, v)| keyword(k, v))
    {
        return Err(unsupported(format!("{key}: {value} is unsupported")));
    }
    // OpenAI strict mode rejects nodes without a type; a bare enum counts as typed.
    if !map.contains_key("type") && !map.contains_key("anyOf") && !map.contains_key("enum") {
        return Err(unsupported("schemas without a type are unsupported"));
    }
    if let Some(any_of) = map.get_mut("anyOf") {
        let Some(variants) = any_of.as_array_mut().filter(|v| !v.is_empty()) else {
            return Err(unsupported("anyOf must contain at least one schema"));
        };
        for variant in variants {
            if is_structured(variant) {
                return Err(unsupported("object and array unions are unsupported"));
            }
            make_node_strict(variant, keyword)?;
        }
    }
    if let Some(items) = map.get_mut("items") {
        if items.is_array() {
            return Err(unsupported("tuple schemas are unsupported"));
        }
        make_node_strict(items, keyword)?;
    }
    let is_object = map.get("type").and_then(Value::as_str) == Some("object");
    if map.contains_key("properties") && !is_object {
        return Err(unsupported("properties require type object"));
    }
    if !is_object {
        return Ok(());
    }
    if map
        .get("additionalProperties")
        .is_some_and(|v| *v != Value::Bool(false))
    {
        return Err(unsupported(
            "schema-valued or true additionalProperties is unsupported",
        ));
    }
    let required: Vec<String> = match map.get("required") {
        None => Vec::new(),
        Some(Value::Array(keys)) => keys
            .iter()
            .map(|k| k.as_str().map(str::to_owned))
            .collect::<Option<_>>()
            .ok_or_else(|| unsupported("object required must be a string array"))?,
        Some(_) => return Err(unsupported("object required must be a string array")),
    };
    let mut names: Vec<Value> = Vec::new();
    if let Some(properties) = map.get_mut("properties") {
        let Some(properties) = properties.as_object_mut() else {
            return Err(unsupported("object properties must be a schema map"));
        };
        if required.iter().any(|key| !properties.contains_key(key)) {
            return Err(unsupported("required contains an unknown property"));
        }
        for (key, property) in properties.iter_mut() {
            make_node_strict(property, keyword)?;
            if !required.contains(key) && !allows_null(property) {
                *property = json!({"anyOf": [property.take(), {"type": "null"}]});
            }
        }
        names = properties.keys().cloned().map(Value::String).collect();
    } else if !required.is_empty() {
        return Err(unsupported("required contains an unknown property"));
    }
    map.insert("required".into(), Value::Array(names));
    map.insert("additionalProperties".into(), Value::Bool(false));
    Ok(())
}

/// `schema` converted to the strict subset, or why it cannot be.
pub fn make_strict_json_schema(
    schema: &Value,
    keyword: Option<UnsupportedKeyword>,
) -> Result<Value, UnsupportedStrictSchema> {
    let mut strict = schema.clone();
    if !strict.is_object() {
        return Err(unsupported("root schema must have type object"));
    }
    make_node_strict(&mut strict, keyword)?;
    if strict.get("type").and_then(Value::as_str) != Some("object") {
        return Err(unsupported("root schema must have type object"));
    }
    Ok(strict)
}

/// Whether `tool` asks for strict sampling only where possible.
pub fn prefers_strict(tool: &Tool) -> bool {
    matches!(
        tool.constrained_sampling,
        Some(ConstrainedSampling::JsonSchema {
            strict: Strictness::Prefer
        })
    )
}

/// Whether `tool` is sent strict (`Some(true)`), or has no say (`None`): strict when it asks
/// for JSON-schema sampling, the API supports strict mode and the schema fits; an error when
/// it requires strictness that cannot be had.
pub fn resolve_strict(
    tool: &Tool,
    supports_strict_mode: bool,
    keyword: Option<UnsupportedKeyword>,
) -> Result<Option<bool>, String> {
    let Some(ConstrainedSampling::JsonSchema { strict }) = &tool.constrained_sampling else {
        return Ok(None);
    };
    if supports_strict_mode {
        return match make_strict_json_schema(&tool.parameters, keyword) {
            Ok(_) => Ok(Some(true)),
            Err(_) if *strict == Strictness::Prefer => Ok(None),
            Err(e) => Err(format!(
                "Tool \"{}\" requires JSON-schema constrained sampling, but {e}.",
                tool.name
            )),
        };
    }
    match strict {
        Strictness::Require => Err(format!(
            "Tool \"{}\" requires JSON-schema constrained sampling, but strict tools are unsupported.",
            tool.name
        )),
        Strictness::Prefer => Ok(None),
    }
}

/// [`resolve_strict`] where a failure cannot be reported: `None`.
pub fn strict_or_none(
    tool: &Tool,
    supports_strict_mode: bool,
    keyword: Option<UnsupportedKeyword>,
) -> Option<bool> {
    resolve_strict(tool, supports_strict_mode, keyword).unwrap_or(None)
}

/// Fails when a tool of `tools` requires strict sampling that cannot be had.
pub fn check_required(
    tools: &[Tool],
    supports_strict_mode: bool,
    keyword: Option<UnsupportedKeyword>,
) -> Result<(), String> {
    for tool in tools {
        resolve_strict(tool, supports_strict_mode, keyword)?;
    }
    Ok(())
}

/// The parameters sent for `tool`: made strict when `strict` is `Some(true)`.
pub fn tool_parameters(tool: &Tool, strict: Option<bool>) -> std::borrow::Cow<'_, Value> {
    if strict == Some(true)
        && let Ok(schema) = make_strict_json_schema(&tool.parameters, None)
    {
        return std::borrow::Cow::Owned(schema);
    }
    std::borrow::Cow::Borrowed(&tool.parameters)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(parameters: Value, strict: Option<Strictness>) -> Tool {
        Tool {
            name: "t".into(),
            description: String::new(),
            parameters,
            constrained_sampling: strict.map(|strict| ConstrainedSampling::JsonSchema { strict }),
        }
    }

    #[test]
    fn optional_properties_become_nullable_and_every_object_closes() {
        let schema = json!({"type": "object", "required": ["path"], "properties": {
            "path": {"type": "string"},
            "limit": {"type": "number"},
            "edits": {"type": "array", "items": {"type": "object", "required": ["a"],
                "properties": {"a": {"type": "string"}, "b": {"type": ["string", "null"]}}}}}});
        let strict = make_strict_json_schema(&schema, None).unwrap();
        assert_eq!(strict["required"], json!(["path", "limit", "edits"]));
        assert_eq!(strict["additionalProperties"], false);
        assert_eq!(
            strict["properties"]["limit"],
            json!({"anyOf": [{"type": "number"}, {"type": "null"}]})
        );
        let item = &strict["properties"]["edits"]["anyOf"][0]["items"];
        assert_eq!(item["required"], json!(["a", "b"]));
        assert_eq!(item["additionalProperties"], false);
        // Already nullable: left as it is.
        assert_eq!(item["properties"]["b"], json!({"type": ["string", "null"]}));
    }

    #[test]
    fn schemas_outside_the_strict_subset_are_refused() {
        for schema in [
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}}}),
            json!({"type": "object", "properties": {"a": {"description": "untyped"}}}),
            json!({"type": "object", "additionalProperties": true}),
            json!({"type": "object", "properties": {"a": {"anyOf": [{"type": "object"}]}}}),
            json!({"type": "string"}),
        ] {
            assert!(make_strict_json_schema(&schema, None).is_err(), "{schema}");
        }
        let minimum =
            json!({"type": "object", "properties": {"n": {"type": "number", "minimum": 1}}});
        assert!(make_strict_json_schema(&minimum, None).is_ok());
        let refuse_minimum: UnsupportedKeyword = |key, _| key == "minimum";
        assert!(make_strict_json_schema(&minimum, Some(refuse_minimum)).is_err());
    }

    #[test]
    fn prefer_falls_back_to_plain_and_require_fails() {
        let fits = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        let untyped = json!({"type": "object", "properties": {"a": {}}});
        assert_eq!(
            resolve_strict(&tool(fits.clone(), None), true, None),
            Ok(None)
        );
        let prefer = tool(fits.clone(), Some(Strictness::Prefer));
        assert_eq!(resolve_strict(&prefer, true, None), Ok(Some(true)));
        assert_eq!(resolve_strict(&prefer, false, None), Ok(None));
        let prefer_untyped = tool(untyped.clone(), Some(Strictness::Prefer));
        assert_eq!(resolve_strict(&prefer_untyped, true, None), Ok(None));
        assert_eq!(tool_parameters(&prefer_untyped, None).as_ref(), &untyped);
        let require = tool(untyped, Some(Strictness::Require));
        let error = resolve_strict(&require, true, None).unwrap_err();
        assert!(
            error.contains("requires JSON-schema constrained sampling"),
            "{error}"
        );
        let require_fits = tool(fits, Some(Strictness::Require));
        assert!(resolve_strict(&require_fits, false, None).is_err());
        assert!(check_required(&[require_fits], false, None).is_err());
    }
}
