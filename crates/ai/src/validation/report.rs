//! A validation failure in words: each violated constraint as a dotted path and a message
//! as pi 1.6.0's validator words it, and the report with the arguments as received.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::Value;

use super::{ValidationError, ValidationIssue};

pub(super) fn build_error(
    tool_name: &str,
    issues: Vec<ValidationIssue>,
    original: &Value,
) -> ValidationError {
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
pub(super) fn dotted_path(pointer: &str) -> String {
    match pointer.strip_prefix('/') {
        None => String::new(),
        Some(rest) => rest
            .split('/')
            .map(|segment| segment.replace("~1", "/").replace("~0", "~"))
            .collect::<Vec<_>>()
            .join("."),
    }
}

/// The issues of one validation error in pi 1.6.0's words (its pi-ai validator's
/// `Explainer`): `missing`, `expected string, got integer`, `unknown field`, ...
/// `schema` is the root schema, read for a `type` list in its written order.
pub(super) fn issues_for(
    error: &jsonschema::ValidationError<'_>,
    schema: &Value,
) -> Vec<ValidationIssue> {
    let path = dotted_path(error.instance_path().as_str());
    let at = |key: &str| {
        if path.is_empty() {
            key.to_owned()
        } else {
            format!("{path}.{key}")
        }
    };
    let one = |message: String| vec![issue(path.clone(), message)];
    match error.kind() {
        ValidationErrorKind::Required { property } => {
            let name = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_owned);
            vec![issue(at(&name), "missing".to_owned())]
        }
        ValidationErrorKind::AdditionalProperties { unexpected }
        | ValidationErrorKind::UnevaluatedProperties { unexpected } => unexpected
            .iter()
            .map(|key| issue(at(key), "unknown field".to_owned()))
            .collect(),
        ValidationErrorKind::Type { kind } => {
            let written =
                schema
                    .pointer(error.schema_path().as_str())
                    .and_then(|types| match types {
                        Value::String(one) => Some(vec![one.clone()]),
                        Value::Array(list) => {
                            list.iter().map(|t| t.as_str().map(str::to_owned)).collect()
                        }
                        _ => None,
                    });
            let types = written.unwrap_or_else(|| match kind {
                TypeKind::Single(ty) => vec![ty.as_str().to_owned()],
                TypeKind::Multiple(types) => {
                    types.iter().map(|ty| ty.as_str().to_owned()).collect()
                }
            });
            one(format!(
                "expected {}, got {}",
                types.join(" or "),
                type_name(error.instance())
            ))
        }
        ValidationErrorKind::Minimum { limit } => one(format!("expected >= {}", js_number(limit))),
        ValidationErrorKind::Maximum { limit } => one(format!("expected <= {}", js_number(limit))),
        ValidationErrorKind::ExclusiveMinimum { limit } => {
            one(format!("expected > {}", js_number(limit)))
        }
        ValidationErrorKind::ExclusiveMaximum { limit } => {
            one(format!("expected < {}", js_number(limit)))
        }
        ValidationErrorKind::MinLength { limit } => {
            one(format!("expected at least {limit} characters"))
        }
        ValidationErrorKind::MaxLength { limit } => {
            one(format!("expected at most {limit} characters"))
        }
        ValidationErrorKind::MinItems { limit } => one(format!("expected at least {limit} items")),
        ValidationErrorKind::MaxItems { limit } => one(format!("expected at most {limit} items")),
        ValidationErrorKind::MinProperties { limit } => {
            one(format!("expected at least {limit} properties"))
        }
        ValidationErrorKind::MaxProperties { limit } => {
            one(format!("expected at most {limit} properties"))
        }
        ValidationErrorKind::UniqueItems => one("expected unique items".to_owned()),
        ValidationErrorKind::Contains => one("expected at least 1 matching item".to_owned()),
        ValidationErrorKind::Enum { options } => {
            one(format!("expected one of {}", list_values(options)))
        }
        ValidationErrorKind::Constant { expected_value } => one(format!(
            "expected {}",
            serde_json::to_string(expected_value.as_ref()).unwrap_or_default()
        )),
        ValidationErrorKind::Pattern { pattern } => one(format!("expected to match {pattern}")),
        ValidationErrorKind::Format { format } => one(format!("expected format {format}")),
        ValidationErrorKind::MultipleOf { multiple_of } => {
            one(format!("expected a multiple of {multiple_of}"))
        }
        ValidationErrorKind::Not { .. } => one("must not match the schema in not".to_owned()),
        ValidationErrorKind::FalseSchema => one("no value is allowed here".to_owned()),
        ValidationErrorKind::OneOfMultipleValid { .. } => {
            one("matches more than one alternative".to_owned())
        }
        ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
            best_alternative(context, schema)
                .unwrap_or_else(|| one("matches no alternative".to_owned()))
        }
        _ => one(error.to_string()),
    }
}

/// The errors of the alternative pi reports for a failed `anyOf`/`oneOf`: the first one
/// whose first error lies deepest.
fn best_alternative(
    branches: &[Vec<jsonschema::ValidationError<'static>>],
    schema: &Value,
) -> Option<Vec<ValidationIssue>> {
    let mut best: Option<(usize, &Vec<jsonschema::ValidationError<'static>>)> = None;
    for errors in branches {
        let Some(first) = errors.first() else {
            continue;
        };
        let depth = first.instance_path().as_str().len();
        if best.is_none_or(|(deepest, _)| depth > deepest) {
            best = Some((depth, errors));
        }
    }
    best.map(|(_, errors)| errors.iter().flat_map(|e| issues_for(e, schema)).collect())
}

/// Orders issues as pi 1.6.0 walks a value: an object's missing properties first, and no
/// other issue for a value whose type is wrong.
pub(super) fn in_pi_order(issues: Vec<ValidationIssue>) -> Vec<ValidationIssue> {
    let wrong_type: Vec<String> = issues
        .iter()
        .filter(|i| i.message.starts_with("expected ") && i.message.contains(", got "))
        .map(|i| i.path.clone())
        .collect();
    let (mut missing, rest): (Vec<_>, Vec<_>) = issues
        .into_iter()
        .filter(|i| {
            !wrong_type.contains(&i.path)
                || (i.message.starts_with("expected ") && i.message.contains(", got "))
        })
        .partition(|i| i.message == "missing");
    missing.extend(rest);
    missing
}

fn issue(path: String, message: String) -> ValidationIssue {
    let path = if path.is_empty() {
        "root".to_owned()
    } else {
        path
    };
    ValidationIssue { path, message }
}

/// A value's type as pi names it in `got ...`: `integer` for a whole number.
fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A number as JavaScript prints it (`1`, not `1.0`).
fn js_number(value: &Value) -> String {
    match value.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() < 1e21 && !(value.is_i64() || value.is_u64()) => {
            format!("{}", f as i64)
        }
        _ => value.to_string(),
    }
}

/// An enum's values as pi lists them: the JSON array, cut after 20 values.
fn list_values(options: &Value) -> String {
    const LISTED: usize = 20;
    match options.as_array() {
        Some(values) if values.len() > LISTED => {
            let shown = serde_json::to_string(&values[..LISTED]).unwrap_or_default();
            format!(
                "{}, ... and {} more]",
                shown.trim_end_matches(']'),
                values.len() - LISTED
            )
        }
        _ => serde_json::to_string(options).unwrap_or_default(),
    }
}
