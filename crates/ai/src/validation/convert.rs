//! The conversion pi-schema runs before AJV-style coercion (pi 1.5): optional `null`
//! properties the schema does not allow are dropped, then each value is converted toward
//! its schema as TypeBox's `Value.Convert` does it: scalars between types, a single value
//! wrapped into an array, `const`/`enum` literals, and TypeBox's `bigint` (kept as a JSON
//! integer) and `undefined` (the property removed) types.

use serde_json::{Map, Value};

use super::coerce::{js_number_string, number_to_json, parse_js_number};
use super::compiled_validator;

/// How deep schemas are followed: a schema that refers to itself ends here.
const MAX_DEPTH: usize = 64;

/// `value` with optional nulls dropped and converted toward `schema`.
pub(super) fn convert(value: Value, schema: &Value) -> Value {
    let converter = Converter { root: schema };
    let value = converter.drop_optional_nulls(value, schema, 0);
    converter.convert(value, schema, 0)
}

/// A conversion against one root schema, whose local `$ref`s it follows.
struct Converter<'a> {
    root: &'a Value,
}

impl Converter<'_> {
    fn resolve<'s>(&'s self, schema: &'s Value) -> &'s Value {
        let pointer = schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix('#'));
        match pointer {
            Some("") => self.root,
            Some(pointer) => self.root.pointer(pointer).unwrap_or(schema),
            None => schema,
        }
    }

    fn passes(&self, schema: &Value, value: &Value) -> bool {
        compiled_validator(self.resolve(schema)).is_some_and(|v| v.is_valid(value))
    }

    /// Removes object properties whose value is `null` when they are optional, not a
    /// `$ref`, and their schema rejects `null`; recurses into objects and arrays.
    fn drop_optional_nulls(&self, value: Value, schema: &Value, depth: usize) -> Value {
        if depth > MAX_DEPTH || !schema.is_object() {
            return value;
        }
        let schema = self.resolve(schema);
        match value {
            Value::Array(items) => Value::Array(
                items
                    .into_iter()
                    .enumerate()
                    .map(|(i, item)| match item_schema(schema, i) {
                        Some(s) => self.drop_optional_nulls(item, s, depth + 1),
                        None => item,
                    })
                    .collect(),
            ),
            Value::Object(mut map) => {
                let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
                    return Value::Object(map);
                };
                let required = required_keys(schema);
                for (key, property) in properties {
                    let Some(slot) = map.get_mut(key) else {
                        continue;
                    };
                    let is_ref = property.get("$ref").is_some_and(Value::is_string);
                    if slot.is_null()
                        && !required.contains(&key.as_str())
                        && !is_ref
                        && !self.passes(property, &Value::Null)
                    {
                        map.remove(key);
                        continue;
                    }
                    *slot = self.drop_optional_nulls(std::mem::take(slot), property, depth + 1);
                }
                Value::Object(map)
            }
            other => other,
        }
    }

    fn convert(&self, value: Value, node: &Value, depth: usize) -> Value {
        if depth > MAX_DEPTH || !node.is_object() {
            return value;
        }
        let node = self.resolve(node);
        if let Some(literal) = node.get("const") {
            return convert_literal(literal, value);
        }
        if let Some(Value::Array(values)) = node.get("enum") {
            if values.contains(&value) {
                return value;
            }
            for member in values {
                let candidate = convert_literal(member, value.clone());
                if candidate != value && self.passes(node, &candidate) {
                    return candidate;
                }
            }
            return value;
        }
        for keyword in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = node.get(keyword) {
                return self.convert_union(node, branches, value, depth);
            }
        }
        if let Some(Value::Array(members)) = node.get("allOf") {
            let mut next = value;
            for member in members {
                next = self.convert(next, member, depth + 1);
            }
            return self.convert_members(node, next, depth);
        }
        match node.get("type").and_then(Value::as_str) {
            Some("string") => try_string(&value).unwrap_or(value),
            Some("number") => try_number(&value).map_or(value, number_to_json),
            Some("integer") => try_number(&value).map_or(value, |n| number_to_json(n.trunc())),
            Some("boolean") => try_boolean(&value).map_or(value, Value::Bool),
            Some("null") => {
                if is_nullish(&value) {
                    Value::Null
                } else {
                    value
                }
            }
            Some("bigint") => try_bigint(&value).map_or(value, Value::from),
            Some("array") => self.convert_array(node, value, depth),
            Some("object") => self.convert_object(node, value, depth),
            None if node.get("properties").is_some() || node.get("patternProperties").is_some() => {
                self.convert_object(node, value, depth)
            }
            None if node.get("items").is_some() || node.get("prefixItems").is_some() => {
                self.convert_array(node, value, depth)
            }
            _ => value,
        }
    }

    /// A value a branch already accepts stays; else the first branch's conversion the
    /// whole union accepts.
    fn convert_union(&self, node: &Value, branches: &[Value], value: Value, depth: usize) -> Value {
        if branches.iter().any(|b| self.passes(b, &value)) {
            return self.convert_members(node, value, depth);
        }
        for branch in branches {
            let converted = self.convert(value.clone(), branch, depth + 1);
            let candidate = self.convert_members(node, converted, depth);
            if self.passes(node, &candidate) {
                return candidate;
            }
        }
        self.convert_members(node, value, depth)
    }

    /// The object part of a union or intersection node with its own properties.
    fn convert_members(&self, node: &Value, value: Value, depth: usize) -> Value {
        let has_members = ["properties", "patternProperties", "additionalProperties"]
            .iter()
            .any(|k| node.get(k).is_some());
        if has_members {
            self.convert_object(node, value, depth)
        } else {
            value
        }
    }

    fn convert_array(&self, node: &Value, value: Value, depth: usize) -> Value {
        let prefix = node
            .get("items")
            .filter(|i| i.is_array())
            .or_else(|| node.get("prefixItems").filter(|i| i.is_array()))
            .and_then(Value::as_array);
        if let Some(prefix) = prefix {
            let Value::Array(items) = value else {
                return value;
            };
            let rest = node.get("items").filter(|i| i.is_object());
            return Value::Array(
                items
                    .into_iter()
                    .enumerate()
                    .map(|(i, item)| match prefix.get(i).or(rest) {
                        Some(s) => self.convert(item, s, depth + 1),
                        None => item,
                    })
                    .collect(),
            );
        }
        let items_schema = node.get("items").filter(|i| i.is_object());
        match (value, items_schema) {
            (Value::Array(items), Some(s)) => Value::Array(
                items
                    .into_iter()
                    .map(|item| self.convert(item, s, depth + 1))
                    .collect(),
            ),
            (array @ Value::Array(_), None) => array,
            // A single value where an array belongs is wrapped into one.
            (single, Some(s)) => Value::Array(vec![self.convert(single, s, depth + 1)]),
            (single, None) => Value::Array(vec![single]),
        }
    }

    fn convert_object(&self, node: &Value, value: Value, depth: usize) -> Value {
        let Value::Object(map) = value else {
            return value;
        };
        let properties = node.get("properties").and_then(Value::as_object);
        let patterns: Vec<(regex::Regex, &Value)> = node
            .get("patternProperties")
            .and_then(Value::as_object)
            .map(|p| {
                p.iter()
                    .filter_map(|(k, s)| Some((regex::Regex::new(k).ok()?, s)))
                    .collect()
            })
            .unwrap_or_default();
        let additional = node.get("additionalProperties").filter(|a| a.is_object());
        let mut out = Map::new();
        for (key, mut next) in map {
            let property = properties.and_then(|p| p.get(&key));
            if let Some(property) = property {
                // TypeBox's `undefined`: a value that converts to it leaves the object.
                if self.resolve(property).get("type").and_then(Value::as_str) == Some("undefined")
                    && is_undefined_like(&next)
                {
                    continue;
                }
                next = self.convert(next, property, depth + 1);
            }
            let mut matched = property.is_some();
            for (pattern, schema) in &patterns {
                if pattern.is_match(&key) {
                    matched = true;
                    next = self.convert(next, schema, depth + 1);
                }
            }
            if let (false, Some(additional)) = (matched, additional) {
                next = self.convert(next, additional, depth + 1);
            }
            out.insert(key, next);
        }
        Value::Object(out)
    }
}

fn required_keys(schema: &Value) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The schema of item `index`: a tuple's member or the items schema.
fn item_schema(schema: &Value, index: usize) -> Option<&Value> {
    match schema.get("items") {
        Some(Value::Array(tuple)) => tuple.get(index),
        Some(items) => match schema.get("prefixItems") {
            Some(Value::Array(prefix)) if index < prefix.len() => prefix.get(index),
            _ => Some(items),
        },
        None => match schema.get("prefixItems") {
            Some(Value::Array(prefix)) => prefix.get(index),
            _ => None,
        },
    }
}

/// `literal` when `value` converts to it, else `value`.
fn convert_literal(literal: &Value, value: Value) -> Value {
    if *literal == value {
        return value;
    }
    let converted = match literal {
        Value::String(_) => try_string(&value),
        Value::Number(_) => try_number(&value).map(number_to_json),
        Value::Bool(_) => try_boolean(&value).map(Value::Bool),
        _ => None,
    };
    match converted {
        Some(c) if c == *literal => c,
        _ => value,
    }
}

fn try_string(value: &Value) -> Option<Value> {
    match value {
        Value::Bool(b) => Some(Value::String(b.to_string())),
        Value::Number(n) => Some(Value::String(js_number_string(n))),
        Value::Null => Some(Value::String("null".to_owned())),
        Value::String(_) => Some(value.clone()),
        _ => None,
    }
}

/// JavaScript's `+value` on a string: blank is 0, else [`parse_js_number`].
fn js_unary_plus(text: &str) -> Option<f64> {
    if text.trim().is_empty() {
        return Some(0.0);
    }
    parse_js_number(text)
}

/// The integer part of a `42`, `-7n` or `3.5` string, as a bigint literal would read it.
fn bigint_of_string(text: &str) -> Option<i64> {
    let digits = text.strip_suffix('n').unwrap_or(text);
    let integral = match digits.split_once('.') {
        Some((whole, fraction)) if !text.ends_with('n') => {
            if fraction.is_empty() || !fraction.chars().all(|c| c.is_ascii_digit()) {
                return None;
            }
            whole
        }
        Some(_) => return None,
        None => digits,
    };
    let unsigned = integral.strip_prefix('-').unwrap_or(integral);
    let canonical = unsigned == "0" || (!unsigned.starts_with('0') && !unsigned.is_empty());
    if !canonical || !unsigned.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    integral.parse().ok()
}

fn try_number(value: &Value) -> Option<f64> {
    match value {
        Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        Value::Number(n) => n.as_f64().filter(|f| f.is_finite()),
        Value::Null => Some(0.0),
        Value::String(s) => js_unary_plus(s)
            .or_else(|| match s.to_lowercase().as_str() {
                "false" => Some(0.0),
                "true" => Some(1.0),
                _ => None,
            })
            .or_else(|| {
                const SAFE: i64 = 9_007_199_254_740_991;
                #[allow(clippy::cast_precision_loss)]
                bigint_of_string(s)
                    .filter(|b| (-SAFE..=SAFE).contains(b))
                    .map(|b| b as f64)
            }),
        _ => None,
    }
}

fn try_boolean(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => match n.as_f64() {
            Some(0.0) => Some(false),
            Some(1.0) => Some(true),
            _ => None,
        },
        Value::Null => Some(false),
        Value::String(s) => match s.to_lowercase().as_str() {
            "false" | "0" => Some(false),
            "true" | "1" => Some(true),
            _ => None,
        },
        _ => None,
    }
}

fn is_nullish(value: &Value) -> bool {
    match value {
        Value::Null | Value::Bool(false) => true,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => matches!(s.to_lowercase().as_str(), "undefined" | "null" | "" | "0"),
        _ => false,
    }
}

/// What TypeBox converts to `undefined`: the same values as to `null`.
fn is_undefined_like(value: &Value) -> bool {
    is_nullish(value)
}

fn try_bigint(value: &Value) -> Option<i64> {
    match value {
        Value::Bool(b) => Some(i64::from(*b)),
        #[allow(clippy::cast_possible_truncation)]
        Value::Number(n) => n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.is_finite())
                .map(|f| f.trunc() as i64)
        }),
        Value::Null => Some(0),
        Value::String(s) => bigint_of_string(s).or_else(|| match s.to_lowercase().as_str() {
            "false" => Some(0),
            "true" => Some(1),
            _ => None,
        }),
        _ => None,
    }
}
