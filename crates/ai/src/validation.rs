//! Tool-call argument validation against JSON Schema.
//!
//! LLMs frequently emit arguments whose *shape* is right but whose scalar types are
//! not (`"5"` for a number, `"true"` for a boolean). Before validating, arguments are
//! coerced toward the schema the same way AJV's `coerceTypes: true` (and the TypeScript
//! pi) does; failures are reported per violated constraint with a dotted path.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

mod coerce;
mod convert;
mod report;

use jsonschema::Validator;
use serde_json::Value;

use coerce::coerce;
use report::{build_error, in_pi_order, issues_for};

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
    /// Short description in pi 1.6.0's words, e.g. `missing` or `expected string, got integer`.
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
    let issues: Vec<ValidationIssue> = in_pi_order(
        validator
            .iter_errors(&coerced)
            .flat_map(|e| issues_for(&e, schema))
            .collect(),
    );
    if issues.is_empty() {
        return Ok(coerced);
    }
    Err(build_error(tool_name, issues, &original()))
}

/// Applies only the conversion and coercion steps, as pi-schema does before validating
/// (exposed for tests and callers that validate elsewhere).
pub fn coerce_to_schema(value: Value, schema: &Value) -> Value {
    coerce(convert::convert(value, schema), schema)
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
    let compiled = jsonschema::validator_for(&with_typebox_types(schema))
        .ok()
        .map(Arc::new);
    let mut cache = VALIDATORS.lock().unwrap_or_else(PoisonError::into_inner);
    if cache.len() >= MAX_CACHED_VALIDATORS {
        cache.clear();
    }
    // One live schema per address: a different schema there replaces the stale entry.
    cache.insert(key, (schema.clone(), compiled.clone()));
    compiled
}

/// `schema` as the validator takes it: TypeBox's `bigint` (converted arguments hold it as
/// an integer) checks as `integer`, and `undefined` (a converted property is gone) as
/// `null`. Reports still name the written types.
fn with_typebox_types(schema: &Value) -> std::borrow::Cow<'_, Value> {
    fn rewrite(value: &mut Value) {
        match value {
            Value::Object(map) => {
                for (key, child) in map.iter_mut() {
                    if key == "type" {
                        let swap = |t: &mut Value| match t.as_str() {
                            Some("bigint") => *t = Value::from("integer"),
                            Some("undefined") => *t = Value::from("null"),
                            _ => {}
                        };
                        match child {
                            Value::Array(types) => types.iter_mut().for_each(swap),
                            other => swap(other),
                        }
                    } else {
                        rewrite(child);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(rewrite),
            _ => {}
        }
    }
    let text = schema.to_string();
    if !text.contains("\"bigint\"") && !text.contains("\"undefined\"") {
        return std::borrow::Cow::Borrowed(schema);
    }
    let mut owned = schema.clone();
    rewrite(&mut owned);
    std::borrow::Cow::Owned(owned)
}

#[cfg(test)]
mod tests;
