//! Tool-call argument validation against JSON Schema.
//!
//! LLMs frequently emit arguments whose *shape* is right but whose scalar types are
//! not (`"5"` for a number, `"true"` for a boolean). Before validating, arguments are
//! coerced toward the schema the same way AJV's `coerceTypes: true` (and the TypeScript
//! pi) does; failures are reported per violated constraint with a dotted path.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use jsonschema::Validator;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::{Map, Value};

/// A failed validation: one entry per violated constraint.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ValidationError {
    /// Name of the tool whose arguments failed validation.
    pub tool_name: String,
    /// Every violated constraint, in the order the validator reported them.
    pub issues: Vec<ValidationIssue>,
    /// Full human-readable report, including the original arguments.
    pub message: String,
}

/// One violated constraint inside a [`ValidationError`].
#[derive(Debug, Clone, PartialEq)]
pub struct ValidationIssue {
    /// Dotted location of the offending value, e.g. `edits.0.oldText`, `path` or `root`.
    pub path: String,
    /// Short AJV-style description, e.g. `must be string`.
    pub message: String,
}

/// Coerces `args` toward `schema` and validates; returns the (possibly coerced) arguments.
///
/// A schema that cannot be compiled disables validation: the coerced arguments are returned.
pub fn validate_tool_arguments(
    tool_name: &str,
    schema: &Value,
    args: &Value,
) -> Result<Value, ValidationError> {
    validate_owned(tool_name, schema, args.clone(), || args.clone())
}

/// [`validate_tool_arguments`] for a tool call's argument object, copying it only once.
pub fn validate_tool_call_arguments(
    tool_name: &str,
    schema: &Value,
    args: &serde_json::Map<String, Value>,
) -> Result<Value, ValidationError> {
    validate_owned(tool_name, schema, Value::Object(args.clone()), || {
        Value::Object(args.clone())
    })
}

fn validate_owned(
    tool_name: &str,
    schema: &Value,
    args: Value,
    original: impl FnOnce() -> Value,
) -> Result<Value, ValidationError> {
    let coerced = coerce_to_schema(args, schema);
    let Some(validator) = compiled_validator(schema) else {
        return Ok(coerced);
    };
    let issues: Vec<ValidationIssue> = validator
        .iter_errors(&coerced)
        .map(|e| issue_for(&e))
        .collect();
    if issues.is_empty() {
        return Ok(coerced);
    }
    Err(build_error(tool_name, issues, &original()))
}

/// Applies only the coercion step (exposed for tests and callers that validate elsewhere).
pub fn coerce_to_schema(value: Value, schema: &Value) -> Value {
    coerce(value, schema)
}

// ---------------------------------------------------------------------------
// Validator cache
// ---------------------------------------------------------------------------

/// Upper bound on cached schemas; the cache is simply reset when it is reached.
const MAX_CACHED_VALIDATORS: usize = 1024;

/// Compiled validators keyed by the schema's address, each entry keeping a copy of its schema
/// so a reused address is detected by comparison (no serialization on the hot path); `None`
/// records a schema that failed to compile so it is not recompiled on every call.
type ValidatorCache = HashMap<usize, (Value, Option<Arc<Validator>>)>;

static VALIDATORS: LazyLock<Mutex<ValidatorCache>> = LazyLock::new(|| Mutex::new(HashMap::new()));

fn compiled_validator(schema: &Value) -> Option<Arc<Validator>> {
    let key = schema as *const Value as usize;
    if let Some((cached, validator)) = VALIDATORS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&key)
        && cached == schema
    {
        return validator.clone();
    }
    // Compile outside the lock so slow compilations do not serialise other callers.
    let compiled = jsonschema::validator_for(schema).ok().map(Arc::new);
    let mut cache = VALIDATORS.lock().unwrap_or_else(PoisonError::into_inner);
    if cache.len() >= MAX_CACHED_VALIDATORS {
        cache.clear();
    }
    // One live schema per address: a different schema there replaces the stale entry.
    cache.insert(key, (schema.clone(), compiled.clone()));
    compiled
}

// ---------------------------------------------------------------------------
// Error reporting
// ---------------------------------------------------------------------------

fn build_error(tool_name: &str, issues: Vec<ValidationIssue>, original: &Value) -> ValidationError {
    let lines: Vec<String> = issues
        .iter()
        .map(|issue| format!("  - {}: {}", issue.path, issue.message))
        .collect();
    let received = serde_json::to_string_pretty(original).unwrap_or_else(|_| original.to_string());
    let message = format!(
        "Validation failed for tool \"{tool_name}\":\n{}\n\nReceived arguments:\n{received}",
        lines.join("\n")
    );
    ValidationError {
        tool_name: tool_name.to_owned(),
        issues,
        message,
    }
}

/// Turns a JSON pointer (`/edits/0/oldText`) into a dotted path (`edits.0.oldText`).
fn dotted_path(pointer: &str) -> String {
    match pointer.strip_prefix('/') {
        None => String::new(),
        Some(rest) => rest
            .split('/')
            .map(|segment| segment.replace("~1", "/").replace("~0", "~"))
            .collect::<Vec<_>>()
            .join("."),
    }
}

fn issue_for(error: &jsonschema::ValidationError<'_>) -> ValidationIssue {
    let mut path = dotted_path(error.instance_path().as_str());
    let message = match error.kind() {
        ValidationErrorKind::Required { property } => {
            let name = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_owned);
            path = if path.is_empty() {
                name.clone()
            } else {
                format!("{path}.{name}")
            };
            format!("must have required property '{name}'")
        }
        ValidationErrorKind::Type {
            kind: TypeKind::Single(ty),
        } => format!("must be {}", ty.as_str()),
        ValidationErrorKind::Type {
            kind: TypeKind::Multiple(types),
        } => {
            let names: Vec<&str> = types.iter().map(|ty| ty.as_str()).collect();
            format!("must be {}", names.join(","))
        }
        ValidationErrorKind::AdditionalProperties { .. } => {
            "must NOT have additional properties".to_owned()
        }
        ValidationErrorKind::Minimum { limit } => format!("must be >= {limit}"),
        ValidationErrorKind::Maximum { limit } => format!("must be <= {limit}"),
        ValidationErrorKind::ExclusiveMinimum { limit } => format!("must be > {limit}"),
        ValidationErrorKind::ExclusiveMaximum { limit } => format!("must be < {limit}"),
        ValidationErrorKind::MinLength { limit } => {
            format!("must NOT have fewer than {limit} characters")
        }
        ValidationErrorKind::MaxLength { limit } => {
            format!("must NOT have more than {limit} characters")
        }
        ValidationErrorKind::MinItems { limit } => {
            format!("must NOT have fewer than {limit} items")
        }
        ValidationErrorKind::MaxItems { limit } => format!("must NOT have more than {limit} items"),
        ValidationErrorKind::MinProperties { limit } => {
            format!("must NOT have fewer than {limit} properties")
        }
        ValidationErrorKind::MaxProperties { limit } => {
            format!("must NOT have more than {limit} properties")
        }
        ValidationErrorKind::Enum { .. } => "must be equal to one of the allowed values".to_owned(),
        ValidationErrorKind::Constant { .. } => "must be equal to constant".to_owned(),
        ValidationErrorKind::Pattern { pattern } => format!("must match pattern \"{pattern}\""),
        ValidationErrorKind::Format { format } => format!("must match format \"{format}\""),
        ValidationErrorKind::MultipleOf { multiple_of } => {
            format!("must be multiple of {multiple_of}")
        }
        ValidationErrorKind::AnyOf { .. } => "must match a schema in anyOf".to_owned(),
        ValidationErrorKind::OneOfNotValid { .. }
        | ValidationErrorKind::OneOfMultipleValid { .. } => {
            "must match exactly one schema in oneOf".to_owned()
        }
        ValidationErrorKind::Not { .. } => "must NOT be valid".to_owned(),
        _ => error.to_string(),
    };
    if path.is_empty() {
        path = "root".to_owned();
    }
    ValidationIssue { path, message }
}

// ---------------------------------------------------------------------------
// Coercion
// ---------------------------------------------------------------------------

fn coerce(mut value: Value, schema: &Value) -> Value {
    if let Some(Value::Array(nested)) = schema.get("allOf") {
        for sub in nested {
            value = coerce(value, sub);
        }
    }
    for keyword in ["anyOf", "oneOf"] {
        if let Some(Value::Array(members)) = schema.get(keyword) {
            value = coerce_union(value, members);
        }
    }

    let types = schema_types(schema);
    let matches_union_member = types.len() > 1 && types.iter().any(|ty| matches_type(&value, ty));
    if !types.is_empty() && !matches_union_member {
        for ty in &types {
            if let Some(candidate) = coerce_primitive(&value, ty).filter(|c| *c != value) {
                value = candidate;
                break;
            }
        }
    }

    match &mut value {
        Value::Object(map) if types.contains(&"object") => coerce_object(map, schema),
        Value::Array(items) if types.contains(&"array") => coerce_array(items, schema),
        _ => {}
    }
    value
}

/// Returns the first member coercion that validates against its member schema.
fn coerce_union(value: Value, members: &[Value]) -> Value {
    for member in members {
        let candidate = coerce(value.clone(), member);
        if compiled_validator(member).is_some_and(|v| v.is_valid(&candidate)) {
            return candidate;
        }
    }
    value
}

fn coerce_object(map: &mut Map<String, Value>, schema: &Value) {
    let properties = schema.get("properties").and_then(Value::as_object);
    if let Some(properties) = properties {
        for (key, property_schema) in properties {
            if let Some(slot) = map.get_mut(key) {
                *slot = coerce(std::mem::take(slot), property_schema);
            }
        }
    }
    if let Some(additional @ Value::Object(_)) = schema.get("additionalProperties") {
        for (key, slot) in map.iter_mut() {
            if !properties.is_some_and(|p| p.contains_key(key)) {
                *slot = coerce(std::mem::take(slot), additional);
            }
        }
    }
}

fn coerce_array(items: &mut [Value], schema: &Value) {
    match schema.get("items") {
        Some(Value::Array(tuple)) => {
            for (slot, item_schema) in items.iter_mut().zip(tuple) {
                *slot = coerce(std::mem::take(slot), item_schema);
            }
        }
        Some(item_schema @ Value::Object(_)) => {
            for slot in items.iter_mut() {
                *slot = coerce(std::mem::take(slot), item_schema);
            }
        }
        _ => {}
    }
}

fn schema_types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(ty)) => vec![ty.as_str()],
        Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn matches_type(value: &Value, ty: &str) -> bool {
    match ty {
        "number" => value.is_number(),
        "integer" => is_integral_number(value),
        "boolean" => value.is_boolean(),
        "string" => value.is_string(),
        "null" => value.is_null(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => false,
    }
}

fn is_integral_number(value: &Value) -> bool {
    match value {
        Value::Number(n) => {
            n.is_i64()
                || n.is_u64()
                || n.as_f64()
                    .is_some_and(|f| f.is_finite() && f.fract() == 0.0)
        }
        _ => false,
    }
}

/// Coerces a scalar toward `ty`; `None` means "no coercion applies".
fn coerce_primitive(value: &Value, ty: &str) -> Option<Value> {
    match (ty, value) {
        ("number" | "integer", Value::Null) => Some(Value::from(0)),
        ("number" | "integer", Value::Bool(b)) => Some(Value::from(u8::from(*b))),
        ("number", Value::String(s)) => parse_js_number(s).map(number_to_json),
        ("integer", Value::String(s)) => parse_js_number(s)
            .filter(|n| n.fract() == 0.0)
            .map(number_to_json),
        ("boolean", Value::Null) => Some(Value::Bool(false)),
        ("boolean", Value::String(s)) => match s.as_str() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        ("boolean", Value::Number(n)) => match n.as_f64() {
            Some(1.0) => Some(Value::Bool(true)),
            Some(0.0) => Some(Value::Bool(false)),
            _ => None,
        },
        ("string", Value::Null) => Some(Value::String(String::new())),
        ("string", Value::Number(n)) => Some(Value::String(js_number_string(n))),
        ("string", Value::Bool(b)) => Some(Value::String(b.to_string())),
        ("null", Value::String(s)) if s.is_empty() => Some(Value::Null),
        ("null", Value::Number(n)) if n.as_f64() == Some(0.0) => Some(Value::Null),
        ("null", Value::Bool(false)) => Some(Value::Null),
        _ => None,
    }
}

/// Parses a non-blank string with JavaScript `Number()` semantics; `None` unless finite.
fn parse_js_number(raw: &str) -> Option<f64> {
    let text = raw.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
    if text.is_empty() {
        return None;
    }
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        let stripped = text
            .strip_prefix(prefix)
            .or_else(|| text.strip_prefix(&prefix.to_ascii_uppercase()));
        if let Some(digits) = stripped {
            return parse_radix(digits, radix);
        }
    }
    // JS decimal literals use exactly the characters below; anything else (including
    // Rust-only spellings such as "inf" or "nan") is NaN in JS.
    if !text
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'))
    {
        return None;
    }
    text.parse::<f64>().ok().filter(|n| n.is_finite())
}

fn parse_radix(digits: &str, radix: u32) -> Option<f64> {
    if digits.is_empty() {
        return None;
    }
    let mut acc = 0.0_f64;
    for c in digits.chars() {
        acc = acc * f64::from(radix) + f64::from(c.to_digit(radix)?);
    }
    acc.is_finite().then_some(acc)
}

/// Emits integral values as JSON integers (`5`, not `5.0`).
fn number_to_json(n: f64) -> Value {
    // 2^63: every integral f64 strictly below it in magnitude fits in an i64 exactly.
    const I64_BOUND: f64 = 9_223_372_036_854_775_808.0;
    if n.fract() == 0.0 && n.abs() < I64_BOUND {
        #[allow(clippy::cast_possible_truncation)]
        return Value::from(n as i64);
    }
    serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
}

/// Formats a JSON number like JavaScript's `String(number)`.
fn js_number_string(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    n.as_f64().map_or_else(|| n.to_string(), js_float_string)
}

/// Implements ECMAScript `Number::toString` for finite floats using shortest round-trip digits.
fn js_float_string(f: f64) -> String {
    if f == 0.0 {
        return "0".to_owned();
    }
    let sign = if f < 0.0 { "-" } else { "" };
    let sci = format!("{:e}", f.abs());
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let exponent: i64 = exponent.parse().unwrap_or(0);
    let k = i64::try_from(digits.len()).unwrap_or(i64::MAX);
    let n = exponent + 1;
    let body = if k <= n && n <= 21 {
        let zeros = usize::try_from(n - k).unwrap_or(0);
        format!("{digits}{}", "0".repeat(zeros))
    } else if 0 < n && n <= 21 {
        let split = usize::try_from(n).unwrap_or(0);
        format!("{}.{}", &digits[..split], &digits[split..])
    } else if -6 < n && n <= 0 {
        let zeros = usize::try_from(-n).unwrap_or(0);
        format!("0.{}{digits}", "0".repeat(zeros))
    } else {
        let exp = n - 1;
        let exp_sign = if exp < 0 { "-" } else { "+" };
        let (first, rest) = digits.split_at(1);
        if rest.is_empty() {
            format!("{first}e{exp_sign}{}", exp.abs())
        } else {
            format!("{first}.{rest}e{exp_sign}{}", exp.abs())
        }
    };
    format!("{sign}{body}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn edit_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": { "type": "string" },
                "edits": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "oldText": { "type": "string" },
                            "newText": { "type": "string" }
                        },
                        "required": ["oldText", "newText"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["path", "edits"],
            "additionalProperties": false
        })
    }

    fn prop_schema(ty: Value) -> Value {
        json!({
            "type": "object",
            "properties": { "v": { "type": ty } },
            "required": ["v"]
        })
    }

    fn coerce_prop(ty: Value, v: Value) -> Result<Value, ValidationError> {
        validate_tool_arguments("t", &prop_schema(ty), &json!({ "v": v }))
            .map(|args| args["v"].clone())
    }

    #[test]
    fn valid_args_pass_unchanged() {
        let args = json!({
            "path": "src/main.rs",
            "edits": [{ "oldText": "a", "newText": "b" }]
        });
        let out = validate_tool_arguments("edit", &edit_schema(), &args).unwrap();
        assert_eq!(out, args);
    }

    /// Asserts that `input` validates against `{"v": {"type": ty}}` and becomes `expected`.
    fn assert_coerces(cases: &[(Value, Value, Value)]) {
        for (ty, input, expected) in cases {
            let out = coerce_prop(ty.clone(), input.clone());
            assert_eq!(out.as_ref(), Ok(expected), "{ty} <- {input}");
        }
    }

    #[test]
    fn numeric_strings_become_numbers() {
        let five = coerce_prop(json!("number"), json!("5")).unwrap();
        assert!(
            five.is_i64(),
            "integral numbers must be JSON integers: {five}"
        );
        assert_coerces(&[
            (json!("number"), json!("5"), json!(5)),
            (json!("number"), json!("2.5"), json!(2.5)),
            (json!("number"), json!(" -2 "), json!(-2)),
            (json!("number"), json!(".5"), json!(0.5)),
            (json!("number"), json!("1e3"), json!(1000)),
            (json!("number"), json!("0x10"), json!(16)),
            (json!("number"), json!(false), json!(0)),
            (json!("integer"), json!("5"), json!(5)),
            (json!("integer"), json!("4.0"), json!(4)),
            (json!("integer"), json!(true), json!(1)),
        ]);
    }

    #[test]
    fn non_integral_string_for_integer_fails_with_path() {
        let err = coerce_prop(json!("integer"), json!("5.5")).unwrap_err();
        let expected = ValidationIssue {
            path: "v".into(),
            message: "must be integer".into(),
        };
        assert_eq!(err.issues, vec![expected]);
    }

    #[test]
    fn non_numeric_strings_are_rejected_for_number() {
        for bad in [
            "abc", "", "   ", "1,2", "Infinity", "inf", "NaN", "-0x10", "1e",
        ] {
            let err = coerce_prop(json!("number"), json!(bad)).unwrap_err();
            assert_eq!(err.issues.len(), 1, "{bad:?}");
            assert_eq!(err.issues[0].path, "v", "{bad:?}");
            assert_eq!(err.issues[0].message, "must be number", "{bad:?}");
            assert!(err.message.contains("  - v: must be number"), "{bad:?}");
        }
    }

    #[test]
    fn boolean_coercions() {
        assert_coerces(&[
            (json!("boolean"), json!("true"), json!(true)),
            (json!("boolean"), json!("false"), json!(false)),
            (json!("boolean"), json!(1), json!(true)),
            (json!("boolean"), json!(0), json!(false)),
            (json!("boolean"), json!(1.0), json!(true)),
            (json!("boolean"), json!(-0.0), json!(false)),
        ]);
        let err = coerce_prop(json!("boolean"), json!("yes")).unwrap_err();
        assert_eq!(err.issues[0].message, "must be boolean");
        assert!(coerce_prop(json!("boolean"), json!(2)).is_err());
    }

    #[test]
    fn numbers_and_booleans_become_strings_like_js() {
        assert_coerces(&[
            (json!("string"), json!(5), json!("5")),
            (json!("string"), json!(1.5), json!("1.5")),
            (json!("string"), json!(5.0), json!("5")),
            (json!("string"), json!(-0.25), json!("-0.25")),
            (json!("string"), json!(1e21), json!("1e+21")),
            (json!("string"), json!(1.5e-7), json!("1.5e-7")),
            (json!("string"), json!(0.000001), json!("0.000001")),
            (json!("string"), json!(123456.789), json!("123456.789")),
            (json!("string"), json!(true), json!("true")),
        ]);
    }

    #[test]
    fn null_coerces_to_type_defaults() {
        assert_coerces(&[
            (json!("string"), Value::Null, json!("")),
            (json!("number"), Value::Null, json!(0)),
            (json!("integer"), Value::Null, json!(0)),
            (json!("boolean"), Value::Null, json!(false)),
            (json!("null"), json!(""), Value::Null),
            (json!("null"), json!(0), Value::Null),
            (json!("null"), json!(false), Value::Null),
        ]);
        assert!(coerce_prop(json!("null"), json!("x")).is_err());
    }

    #[test]
    fn missing_required_property_names_it() {
        let args = json!({ "edits": [] });
        let err = validate_tool_arguments("edit", &edit_schema(), &args).unwrap_err();
        assert_eq!(err.tool_name, "edit");
        assert_eq!(
            err.issues,
            vec![ValidationIssue {
                path: "path".into(),
                message: "must have required property 'path'".into()
            }]
        );
        assert!(
            err.message
                .contains("  - path: must have required property 'path'")
        );
    }

    #[test]
    fn nested_items_are_coerced_and_reported_with_dotted_paths() {
        let args = json!({
            "path": "a.txt",
            "edits": [
                { "oldText": 42, "newText": true },
                { "oldText": "x" }
            ]
        });
        let err = validate_tool_arguments("edit", &edit_schema(), &args).unwrap_err();
        assert_eq!(
            err.issues,
            vec![ValidationIssue {
                path: "edits.1.newText".into(),
                message: "must have required property 'newText'".into()
            }]
        );

        let coerced = coerce_to_schema(args, &edit_schema());
        assert_eq!(
            coerced["edits"][0],
            json!({ "oldText": "42", "newText": "true" })
        );
    }

    #[test]
    fn additional_properties_are_reported_at_the_object_path() {
        let args = json!({
            "path": "a.txt",
            "edits": [{ "oldText": "a", "newText": "b", "extra": 1 }]
        });
        let err = validate_tool_arguments("edit", &edit_schema(), &args).unwrap_err();
        assert_eq!(
            err.issues,
            vec![ValidationIssue {
                path: "edits.0".into(),
                message: "must NOT have additional properties".into()
            }]
        );
    }

    #[test]
    fn any_of_picks_first_member_that_validates_after_coercion() {
        let schema = json!({
            "anyOf": [
                { "type": "boolean" },
                { "type": "integer", "minimum": 10 },
                { "type": "number" }
            ]
        });
        // "5" cannot become a boolean, becomes 5 but fails minimum, so the number member wins.
        assert_eq!(coerce_to_schema(json!("5"), &schema), json!(5));
        assert_eq!(coerce_to_schema(json!("true"), &schema), json!(true));
        assert_eq!(coerce_to_schema(json!("12"), &schema), json!(12));
        // Nothing matches: the value is returned unchanged and validation reports anyOf.
        assert_eq!(coerce_to_schema(json!("abc"), &schema), json!("abc"));
        let err = validate_tool_arguments("t", &schema, &json!("abc")).unwrap_err();
        assert_eq!(err.issues[0].path, "root");
        assert_eq!(err.issues[0].message, "must match a schema in anyOf");
    }

    #[test]
    fn one_of_and_all_of_coerce_nested_schemas() {
        let one_of = json!({ "oneOf": [{ "type": "null" }, { "type": "integer" }] });
        assert_eq!(coerce_to_schema(json!("7"), &one_of), json!(7));
        let all_of = json!({
            "allOf": [
                { "type": "object", "properties": { "a": { "type": "integer" } } },
                { "type": "object", "properties": { "b": { "type": "boolean" } } }
            ]
        });
        assert_eq!(
            coerce_to_schema(json!({ "a": "3", "b": "false" }), &all_of),
            json!({ "a": 3, "b": false })
        );
    }

    #[test]
    fn multi_type_with_matching_value_is_unchanged() {
        let schema = json!({ "type": ["string", "number"] });
        assert_eq!(coerce_to_schema(json!("5"), &schema), json!("5"));
        assert_eq!(coerce_to_schema(json!(5), &schema), json!(5));
        // Not matching any type: the first type whose coercion changes the value wins.
        assert_eq!(coerce_to_schema(json!(true), &schema), json!("true"));
        let err =
            validate_tool_arguments("t", &json!({ "type": ["string", "number"] }), &json!([]))
                .unwrap_err();
        assert_eq!(err.issues[0].message, "must be number,string");
    }

    #[test]
    fn additional_properties_schema_and_tuple_items_are_coerced() {
        let schema = json!({
            "type": "object",
            "properties": { "name": { "type": "string" } },
            "additionalProperties": { "type": "integer" }
        });
        assert_eq!(
            coerce_to_schema(json!({ "name": 1, "x": "2", "y": "3" }), &schema),
            json!({ "name": "1", "x": 2, "y": 3 })
        );
        let tuple =
            json!({ "type": "array", "items": [{ "type": "integer" }, { "type": "string" }] });
        assert_eq!(
            coerce_to_schema(json!(["1", 2, "3"]), &tuple),
            json!([1, "2", "3"])
        );
    }

    #[test]
    fn full_message_format_uses_original_args() {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": { "type": "string" },
                "limit": { "type": "integer", "minimum": 1 }
            },
            "required": ["path"]
        });
        let args = json!({ "limit": "0" });
        let err = validate_tool_arguments("read", &schema, &args).unwrap_err();
        let mut lines: Vec<String> = err
            .issues
            .iter()
            .map(|i| format!("  - {}: {}", i.path, i.message))
            .collect();
        lines.sort();
        assert_eq!(
            lines,
            vec![
                "  - limit: must be >= 1".to_owned(),
                "  - path: must have required property 'path'".to_owned()
            ]
        );
        let listed: Vec<String> = err
            .issues
            .iter()
            .map(|i| format!("  - {}: {}", i.path, i.message))
            .collect();
        let expected = format!(
            "Validation failed for tool \"read\":\n{}\n\nReceived arguments:\n{{\n  \"limit\": \"0\"\n}}",
            listed.join("\n")
        );
        assert_eq!(err.message, expected);
        assert_eq!(err.to_string(), expected);
    }

    #[test]
    fn uncompilable_schema_does_not_fail_the_call() {
        let schema = json!({
            "type": "object",
            "properties": { "n": { "type": "frobnicate" } },
            "required": 5
        });
        assert!(jsonschema::validator_for(&schema).is_err());
        let args = json!({ "n": "1" });
        assert_eq!(validate_tool_arguments("t", &schema, &args).unwrap(), args);

        // Coercion still runs even when validation is impossible.
        let schema = json!({
            "type": "object",
            "properties": { "n": { "type": "integer" } },
            "required": 5
        });
        assert_eq!(
            validate_tool_arguments("t", &schema, &json!({ "n": "1" })).unwrap(),
            json!({ "n": 1 })
        );
    }

    #[test]
    fn non_object_top_level_args_are_coerced_and_validated() {
        let schema = json!({ "type": "object", "properties": {} });
        let err = validate_tool_arguments("t", &schema, &json!("nope")).unwrap_err();
        assert_eq!(
            err.issues,
            vec![ValidationIssue {
                path: "root".into(),
                message: "must be object".into()
            }]
        );
        assert!(err.message.ends_with("Received arguments:\n\"nope\""));
        assert_eq!(
            validate_tool_arguments("t", &json!({ "type": "integer" }), &json!("4")).unwrap(),
            json!(4)
        );
    }

    #[test]
    fn validators_are_cached() {
        let schema =
            json!({ "type": "object", "properties": { "cached_marker": { "type": "string" } } });
        let first = compiled_validator(&schema).unwrap();
        let second = compiled_validator(&schema).unwrap();
        assert!(Arc::ptr_eq(&first, &second));
    }
}
