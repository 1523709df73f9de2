//! A validation failure in words: each violated constraint as a dotted path and an AJV-style
//! message, and the report with the arguments as received.

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

pub(super) fn issue_for(error: &jsonschema::ValidationError<'_>) -> ValidationIssue {
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
