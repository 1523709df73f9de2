//! Tests of the schema rewrites, per provider family.

use serde_json::json;

use super::*;

fn sample() -> Value {
    json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": "urn:tool",
        "type": "object",
        "$defs": {"Mode": {"type": "string", "enum": ["fast", "slow"], "description": "Mode"}},
        "properties": {
            "path": {"type": "string", "description": "File", "examples": ["/a"], "default": "/tmp"},
            "mode": {"$ref": "#/$defs/Mode", "description": "How"},
            "kind": {"const": "file"},
            "limit": {"type": ["integer", "null"], "minimum": 0},
            "owner": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "Who"},
            "level": {"oneOf": [{"const": "a", "type": "string"}, {"const": "b", "type": "string"}]},
            "either": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            "meta": {"type": "object", "additionalProperties": {"type": "string"},
                     "patternProperties": {"^x": {"type": "string"}}},
            "definitions": {"type": "string", "description": "a property named like a keyword"}
        },
        "required": ["path"],
        "additionalProperties": false
    })
}

#[test]
fn families_follow_the_api() {
    assert_eq!(
        SchemaFamily::from_api("google-generative-ai"),
        SchemaFamily::Google
    );
    assert_eq!(
        SchemaFamily::from_api("google-vertex"),
        SchemaFamily::Google
    );
    assert_eq!(
        SchemaFamily::from_api("google-gemini-cli"),
        SchemaFamily::Google
    );
    for openai in [
        "openai-completions",
        "openai-responses",
        "azure-openai-responses",
        "openai-codex-responses",
    ] {
        assert_eq!(SchemaFamily::from_api(openai), SchemaFamily::OpenAi);
    }
    assert_eq!(
        SchemaFamily::from_api("anthropic-messages"),
        SchemaFamily::Anthropic
    );
    assert_eq!(
        SchemaFamily::from_api("bedrock-converse-stream"),
        SchemaFamily::Other
    );
    assert_eq!(
        SchemaFamily::from_api("mistral-conversations"),
        SchemaFamily::Other
    );
}

#[test]
fn google_gets_the_openapi_subset() {
    let out = normalize_schema(&sample(), SchemaFamily::Google);
    let expected = json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File", "default": "/tmp"},
            "mode": {"type": "string", "enum": ["fast", "slow"], "description": "How"},
            "kind": {"enum": ["file"]},
            "limit": {"type": "integer", "nullable": true, "minimum": 0},
            "owner": {"type": "string", "nullable": true, "description": "Who"},
            "level": {"type": "string", "enum": ["a", "b"]},
            "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "meta": {"type": "object"},
            "definitions": {"type": "string", "description": "a property named like a keyword"}
        },
        "required": ["path"]
    });
    assert_eq!(out, expected);
    // Key order is preserved, not just equality.
    assert_eq!(out.to_string(), expected.to_string());
}

#[test]
fn google_handles_multi_type_arrays_and_null_unions_with_several_variants() {
    let schema = json!({
        "type": "object",
        "properties": {
            "a": {"type": ["string", "integer", "null"]},
            "b": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
            "c": {"anyOf": [{"const": "x", "type": "string"}, {"const": null}], "description": "C"}
        }
    });
    let out = normalize_schema(&schema, SchemaFamily::Google);
    assert_eq!(
        out["properties"]["a"],
        json!({"anyOf": [{"type": "string"}, {"type": "integer"}], "nullable": true})
    );
    assert_eq!(
        out["properties"]["b"],
        json!({"anyOf": [{"type": "string"}, {"type": "integer"}], "nullable": true})
    );
    assert_eq!(
        out["properties"]["c"],
        json!({"type": "string", "nullable": true, "enum": ["x"], "description": "C"})
    );
}

#[test]
fn google_output_is_stable_under_a_second_pass() {
    let once = normalize_schema(&sample(), SchemaFamily::Google);
    assert_eq!(normalize_schema(&once, SchemaFamily::Google), once);
}

#[test]
fn openai_top_level_is_a_closed_object() {
    let out = normalize_schema(
        &json!({"$schema": "x", "properties": {"a": {"type": "string"}}}),
        SchemaFamily::OpenAi,
    );
    assert_eq!(
        out.to_string(),
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false}).to_string()
    );

    let out = normalize_schema(
        &json!({"type": "object", "required": []}),
        SchemaFamily::OpenAi,
    );
    assert_eq!(
        out.to_string(),
        json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false})
            .to_string()
    );

    // An explicit `additionalProperties` and nested schemas are left alone.
    let open = json!({"type": "object", "properties": {"m": {"type": "object"}}, "additionalProperties": true});
    assert_eq!(normalize_schema(&open, SchemaFamily::OpenAi), open);

    assert_eq!(
        normalize_schema(&Value::Null, SchemaFamily::OpenAi),
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    );
}

#[test]
fn anthropic_inlines_refs_and_drops_schema() {
    let out = normalize_schema(&sample(), SchemaFamily::Anthropic);
    assert!(out.get("$schema").is_none() && out.get("$id").is_none());
    assert!(out.get("$defs").is_none());
    assert_eq!(
        out["properties"]["mode"],
        json!({"type": "string", "enum": ["fast", "slow"], "description": "How"})
    );
    // Everything Anthropic accepts stays.
    assert_eq!(out["additionalProperties"], false);
    assert_eq!(out["properties"]["kind"], json!({"const": "file"}));
    assert_eq!(
        out["properties"]["limit"]["type"],
        json!(["integer", "null"])
    );
    assert_eq!(out["properties"]["path"]["examples"], json!(["/a"]));
    assert_eq!(
        out["properties"]["definitions"]["description"],
        "a property named like a keyword"
    );
}

#[test]
fn other_apis_only_lose_schema() {
    let schema = json!({"$schema": "x", "type": "object", "properties": {
        "d": {"type": "object", "default": {"$schema": "kept: a value, not a schema"}}}});
    let out = normalize_schema(&schema, SchemaFamily::Other);
    assert_eq!(
        out,
        json!({"type": "object", "properties": {
            "d": {"type": "object", "default": {"$schema": "kept: a value, not a schema"}}}})
    );
}

#[test]
fn refs_resolve_legacy_nested_and_escaped_definitions() {
    let schema = json!({
        "definitions": {"a/b": {"type": "integer"}},
        "type": "object",
        "properties": {
            "x": {"$ref": "#/definitions/a~1b"},
            "y": {"$defs": {"Inner": {"type": "boolean"}}, "type": "object",
                  "properties": {"z": {"$ref": "#/$defs/Inner"}}},
            "u": {"$ref": "https://example.com/remote.json", "description": "Remote"}
        }
    });
    let out = inline_refs(&schema);
    assert_eq!(
        out,
        json!({"type": "object", "properties": {
            "x": {"type": "integer"},
            "y": {"type": "object", "properties": {"z": {"type": "boolean"}}},
            "u": {"description": "Remote"}
        }})
    );
}

#[test]
fn recursive_refs_stop_at_a_shallow_copy() {
    let schema = json!({
        "$defs": {"Node": {"type": "object", "description": "A node",
                           "properties": {"next": {"$ref": "#/$defs/Node"}}}},
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/Node"}}
    });
    let out = inline_refs(&schema);
    assert_eq!(
        out["properties"]["root"],
        json!({"type": "object", "description": "A node",
               "properties": {"next": {"type": "object", "description": "A node"}}})
    );
}
