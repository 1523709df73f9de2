//! Coercion of arguments toward their schema as AJV's `coerceTypes: true` does it: numeric and
//! boolean strings, numbers and booleans as JavaScript strings, null as a type's default.

use serde_json::{Map, Value};

use super::compiled_validator;

pub(super) fn coerce(value: Value, schema: &Value) -> Value {
    Coercion { root: schema }.coerce(value, schema, 0)
}

/// How deep `$ref`s are followed: a schema that refers to itself ends here.
const MAX_DEPTH: usize = 64;

/// A coercion against one root schema, whose local `$ref`s (`#/$defs/…`) it follows.
struct Coercion<'a> {
    root: &'a Value,
}

impl Coercion<'_> {
    fn coerce(&self, mut value: Value, schema: &Value, depth: usize) -> Value {
        if depth > MAX_DEPTH {
            return value;
        }
        if let Some(target) = self.local_ref(schema) {
            value = self.coerce(value, target, depth + 1);
        }
        if let Some(Value::Array(nested)) = schema.get("allOf") {
            for sub in nested {
                value = self.coerce(value, sub, depth + 1);
            }
        }
        for keyword in ["anyOf", "oneOf"] {
            if let Some(Value::Array(members)) = schema.get(keyword) {
                value = self.coerce_union(value, members, depth);
            }
        }

        let types = schema_types(schema);
        let matches_union_member =
            types.len() > 1 && types.iter().any(|ty| matches_type(&value, ty));
        if !types.is_empty() && !matches_union_member {
            for ty in &types {
                if let Some(candidate) = coerce_primitive(&value, ty).filter(|c| *c != value) {
                    value = candidate;
                    break;
                }
            }
        }

        match &mut value {
            Value::Object(map) if types.contains(&"object") => {
                self.coerce_object(map, schema, depth)
            }
            Value::Array(items) if types.contains(&"array") => {
                self.coerce_array(items, schema, depth)
            }
            _ => {}
        }
        value
    }

    /// The schema a local `$ref` (`#`, `#/$defs/x`) names in the root, whatever the root's
    /// `$id` (pi 1.5.1: a relative `$id` such as `schemas/tool.json` does not change them).
    fn local_ref(&self, schema: &Value) -> Option<&Value> {
        let reference = schema.get("$ref")?.as_str()?;
        let pointer = reference.strip_prefix('#')?;
        if pointer.is_empty() {
            return Some(self.root);
        }
        self.root.pointer(pointer)
    }

    /// The value itself when it already matches a member (pi 0.84.0: a `null` for a
    /// nullable string is not turned into `""`); else the first member coercion that
    /// validates against its member schema.
    fn coerce_union(&self, value: Value, members: &[Value], depth: usize) -> Value {
        let matches = |member: &Value, candidate: &Value| {
            let target = self.local_ref(member).unwrap_or(member);
            compiled_validator(target).is_some_and(|v| v.is_valid(candidate))
        };
        if members.iter().any(|member| matches(member, &value)) {
            return value;
        }
        for member in members {
            let candidate = self.coerce(value.clone(), member, depth + 1);
            if matches(member, &candidate) {
                return candidate;
            }
        }
        value
    }

    fn coerce_object(&self, map: &mut Map<String, Value>, schema: &Value, depth: usize) {
        let properties = schema.get("properties").and_then(Value::as_object);
        if let Some(properties) = properties {
            for (key, property_schema) in properties {
                if let Some(slot) = map.get_mut(key) {
                    *slot = self.coerce(std::mem::take(slot), property_schema, depth + 1);
                }
            }
        }
        if let Some(additional @ Value::Object(_)) = schema.get("additionalProperties") {
            for (key, slot) in map.iter_mut() {
                if !properties.is_some_and(|p| p.contains_key(key)) {
                    *slot = self.coerce(std::mem::take(slot), additional, depth + 1);
                }
            }
        }
    }

    fn coerce_array(&self, items: &mut [Value], schema: &Value, depth: usize) {
        match schema.get("items") {
            Some(Value::Array(tuple)) => {
                for (slot, item_schema) in items.iter_mut().zip(tuple) {
                    *slot = self.coerce(std::mem::take(slot), item_schema, depth + 1);
                }
            }
            Some(item_schema @ Value::Object(_)) => {
                for slot in items.iter_mut() {
                    *slot = self.coerce(std::mem::take(slot), item_schema, depth + 1);
                }
            }
            _ => {}
        }
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
pub(super) fn parse_js_number(raw: &str) -> Option<f64> {
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
pub(super) fn number_to_json(n: f64) -> Value {
    // 2^63: every integral f64 strictly below it in magnitude fits in an i64 exactly.
    const I64_BOUND: f64 = 9_223_372_036_854_775_808.0;
    if n.fract() == 0.0 && n.abs() < I64_BOUND {
        #[allow(clippy::cast_possible_truncation)]
        return Value::from(n as i64);
    }
    serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
}

/// Formats a JSON number like JavaScript's `String(number)`.
pub(super) fn js_number_string(n: &serde_json::Number) -> String {
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
