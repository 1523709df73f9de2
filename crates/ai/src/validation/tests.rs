//! Validation as the TypeScript pi does it: what is coerced and how, what is rejected, and the
//! paths and messages of the report (in pi 1.6.0's words).

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
    validate_tool_arguments("t", &prop_schema(ty), &json!({ "v": v })).map(|args| args["v"].clone())
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
    // A decimal string converts and is truncated (pi-schema), a word does not.
    assert_coerces(&[(json!("integer"), json!("5.5"), json!(5))]);
    let err = coerce_prop(json!("integer"), json!("five")).unwrap_err();
    let expected = ValidationIssue {
        path: "v".into(),
        message: "expected integer, got string".into(),
    };
    assert_eq!(err.issues, vec![expected]);
}

#[test]
fn non_numeric_strings_are_rejected_for_number() {
    // JavaScript's `+""` is 0: a blank string converts.
    assert_coerces(&[
        (json!("number"), json!(""), json!(0)),
        (json!("number"), json!("   "), json!(0)),
    ]);
    for bad in ["abc", "1,2", "Infinity", "inf", "NaN", "-0x10", "1e"] {
        let err = coerce_prop(json!("number"), json!(bad)).unwrap_err();
        assert_eq!(err.issues.len(), 1, "{bad:?}");
        assert_eq!(err.issues[0].path, "v", "{bad:?}");
        assert_eq!(
            err.issues[0].message, "expected number, got string",
            "{bad:?}"
        );
        assert!(
            err.message.contains("  - v: expected number, got string"),
            "{bad:?}"
        );
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
    assert_eq!(err.issues[0].message, "expected boolean, got string");
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
        // pi-schema converts first, as TypeBox does: `String(null)`.
        (json!("string"), Value::Null, json!("null")),
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
            message: "missing".into()
        }]
    );
    assert!(err.message.contains("  - path: missing"));
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
            message: "missing".into()
        }]
    );

    let coerced = coerce_to_schema(args, &edit_schema());
    assert_eq!(
        coerced["edits"][0],
        json!({ "oldText": "42", "newText": "true" })
    );
}

#[test]
fn additional_properties_are_reported_at_the_unknown_key() {
    let args = json!({
        "path": "a.txt",
        "edits": [{ "oldText": "a", "newText": "b", "extra": 1 }]
    });
    let err = validate_tool_arguments("edit", &edit_schema(), &args).unwrap_err();
    assert_eq!(
        err.issues,
        vec![ValidationIssue {
            path: "edits.0.extra".into(),
            message: "unknown field".into()
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
    // Nothing matches: the value is returned unchanged and validation reports the first
    // alternative's error, as pi 1.6.0 does.
    assert_eq!(coerce_to_schema(json!("abc"), &schema), json!("abc"));
    let err = validate_tool_arguments("t", &schema, &json!("abc")).unwrap_err();
    assert_eq!(err.issues[0].path, "root");
    assert_eq!(err.issues[0].message, "expected boolean, got string");
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
    let err = validate_tool_arguments("t", &json!({ "type": ["string", "number"] }), &json!([]))
        .unwrap_err();
    // The types as the schema lists them.
    assert_eq!(
        err.issues[0].message,
        "expected string or number, got array"
    );
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
    let tuple = json!({ "type": "array", "items": [{ "type": "integer" }, { "type": "string" }] });
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
    let lines: Vec<String> = err
        .issues
        .iter()
        .map(|i| format!("  - {}: {}", i.path, i.message))
        .collect();
    // pi 1.6.0 reports an object's missing properties before its properties' issues.
    assert_eq!(
        lines,
        vec![
            "  - path: missing".to_owned(),
            "  - limit: expected >= 1".to_owned()
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
            message: "expected object, got string".into()
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

#[test]
fn single_values_are_wrapped_into_arrays_and_optional_nulls_dropped() {
    let schema = json!({
        "type": "object",
        "properties": {
            "tags": { "type": "array", "items": { "type": "string" } },
            "sizes": { "type": "array", "items": { "type": "number" } },
            "note": { "type": "string" },
            "maybe": { "type": ["string", "null"] }
        }
    });
    let out = validate_tool_arguments(
        "t",
        &schema,
        &json!({ "tags": 7, "sizes": "5", "note": null, "maybe": null }),
    )
    .unwrap();
    assert_eq!(out, json!({ "tags": ["7"], "sizes": [5], "maybe": null }));
}

#[test]
fn typebox_bigint_and_undefined_types_convert_and_validate() {
    let schema = json!({
        "type": "object",
        "properties": { "n": { "type": "bigint" }, "gone": { "type": "undefined" } }
    });
    let out = validate_tool_arguments("t", &schema, &json!({ "n": "42", "gone": null })).unwrap();
    assert_eq!(out, json!({ "n": 42 }));
    let err = validate_tool_arguments("t", &schema, &json!({ "n": "nope" })).unwrap_err();
    assert_eq!(err.issues[0].message, "expected bigint, got string");
}
