//! The RPC commands read from stdin and the responses written for them, in the TypeScript
//! pi's JSON shapes.

use serde::Deserialize;
use serde_json::{Map, Value};

use pi_agent_core::QueueMode;
use pi_ai::{ImageContent, ThinkingLevel};

use crate::agent_session::StreamingBehavior;

/// The command types of the protocol, in the reference's order (pi 1.5's 33).
pub const COMMAND_TYPES: [&str; 33] = [
    "prompt",
    "steer",
    "follow_up",
    "abort",
    "new_session",
    "get_state",
    "set_model",
    "cycle_model",
    "get_available_models",
    "set_thinking_level",
    "cycle_thinking_level",
    "set_steering_mode",
    "set_follow_up_mode",
    "compact",
    "set_auto_compaction",
    "set_auto_retry",
    "abort_retry",
    "bash",
    "abort_bash",
    "get_session_stats",
    "export_html",
    "switch_session",
    "fork",
    "clone",
    "get_fork_messages",
    "get_last_assistant_text",
    "set_session_name",
    "get_messages",
    "get_commands",
    "clear_queue",
    "get_available_thinking_levels",
    "get_entries",
    "get_tree",
];

/// One command (its `id` travels separately).
#[derive(Debug, Clone, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum RpcCommand {
    Prompt {
        message: String,
        #[serde(default)]
        images: Vec<ImageContent>,
        #[serde(default)]
        streaming_behavior: Option<StreamingBehavior>,
    },
    Steer {
        message: String,
        #[serde(default)]
        images: Vec<ImageContent>,
    },
    FollowUp {
        message: String,
        #[serde(default)]
        images: Vec<ImageContent>,
    },
    Abort,
    NewSession {
        #[serde(default)]
        parent_session: Option<String>,
    },
    GetState,
    SetModel {
        provider: String,
        model_id: String,
    },
    CycleModel,
    GetAvailableModels,
    SetThinkingLevel {
        level: ThinkingLevel,
    },
    CycleThinkingLevel,
    SetSteeringMode {
        mode: QueueMode,
    },
    SetFollowUpMode {
        mode: QueueMode,
    },
    Compact {
        #[serde(default)]
        custom_instructions: Option<String>,
    },
    SetAutoCompaction {
        enabled: bool,
    },
    SetAutoRetry {
        enabled: bool,
    },
    AbortRetry,
    Bash {
        command: String,
        /// Keep the output out of the model's context (`!!`).
        #[serde(default)]
        exclude_from_context: bool,
    },
    AbortBash,
    GetSessionStats,
    ExportHtml {
        #[serde(default)]
        output_path: Option<String>,
    },
    SwitchSession {
        session_path: String,
    },
    Fork {
        entry_id: String,
    },
    Clone,
    GetForkMessages,
    GetLastAssistantText,
    SetSessionName {
        name: String,
    },
    GetMessages,
    GetCommands,
    ClearQueue,
    GetAvailableThinkingLevels,
    GetEntries {
        #[serde(default)]
        since: Option<String>,
    },
    GetTree,
}

/// A parsed input line.
#[derive(Debug)]
pub enum Input {
    Command {
        id: Option<Value>,
        kind: String,
        command: RpcCommand,
    },
    /// An answer to an extension UI request.
    UiResponse(Map<String, Value>),
    /// A line that gets an error response and nothing else.
    Invalid(Map<String, Value>),
}

/// Parses one line: not JSON → a `parse` error; an unknown type → `Unknown command` (with
/// the id, as pi 1.5 answers); bad fields → an error naming the command.
pub fn parse_line(line: &str) -> Input {
    let value: Value = match serde_json::from_str(line) {
        Ok(value) => value,
        Err(e) => {
            return Input::Invalid(error(
                None,
                "parse",
                &format!("Failed to parse command: {}", json_error_text(&e, line)),
            ));
        }
    };
    let id = value.get("id").cloned().filter(|v| !v.is_null());
    let kind = match value.get("type") {
        Some(Value::String(kind)) => kind.clone(),
        Some(other) => other.to_string(),
        None => "undefined".to_owned(),
    };
    if kind == "extension_ui_response" {
        return Input::UiResponse(match value {
            Value::Object(map) => map,
            _ => Map::new(),
        });
    }
    if !COMMAND_TYPES.contains(&kind.as_str()) {
        return Input::Invalid(error(
            id.as_ref(),
            &kind,
            &format!("Unknown command: {kind}"),
        ));
    }
    match RpcCommand::deserialize(&value) {
        Ok(command) => Input::Command { id, kind, command },
        Err(e) => Input::Invalid(error(
            id.as_ref(),
            &kind,
            &format!("Invalid {kind} command: {e}"),
        )),
    }
}

/// A JSON syntax error described like node 22's `JSON.parse` does for the common cases.
fn json_error_text(error: &serde_json::Error, line: &str) -> String {
    // serde_json counts lines at `\n` only and columns in bytes, so this is a byte offset
    // (`lines()` would also drop each `\r` and miscount).
    let position = line
        .split('\n')
        .take(error.line().saturating_sub(1))
        .map(|l| l.len() + 1)
        .sum::<usize>()
        + error.column().saturating_sub(1);
    let text = error.to_string();
    let at = format!(
        "position {position} (line {} column {})",
        error.line(),
        error.column()
    );
    if text.starts_with("key must be a string") {
        format!("Expected property name or '}}' in JSON at {at}")
    } else if text.starts_with("EOF while parsing") {
        "Unexpected end of JSON input".to_owned()
    } else if text.starts_with("trailing characters") {
        format!("Unexpected non-whitespace character after JSON at {at}")
    } else {
        let mut start = position.min(line.len());
        while !line.is_char_boundary(start) {
            start -= 1;
        }
        let token = line[start..].chars().next();
        match token {
            Some(c) => format!("Unexpected token '{c}', \"{line}\" is not valid JSON"),
            None => "Unexpected end of JSON input".to_owned(),
        }
    }
}

/// `{id?, type:"response", command, success:true[, data]}`.
pub fn success(id: Option<&Value>, command: &str, data: Option<Value>) -> Map<String, Value> {
    let mut map = Map::new();
    if let Some(id) = id {
        map.insert("id".into(), id.clone());
    }
    map.insert("type".into(), "response".into());
    map.insert("command".into(), command.into());
    map.insert("success".into(), true.into());
    if let Some(data) = data {
        map.insert("data".into(), data);
    }
    map
}

/// `{id?, type:"response", command, success:false, error}`.
pub fn error(id: Option<&Value>, command: &str, message: &str) -> Map<String, Value> {
    let mut map = Map::new();
    if let Some(id) = id {
        map.insert("id".into(), id.clone());
    }
    map.insert("type".into(), "response".into());
    map.insert("command".into(), command.into());
    map.insert("success".into(), false.into());
    map.insert("error".into(), message.into());
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    fn invalid(line: &str) -> String {
        match parse_line(line) {
            Input::Invalid(map) => serde_json::to_string(&map).unwrap(),
            other => panic!("{other:?}"),
        }
    }

    /// Found by the rpc_command fuzz target: a CR before the error and a multi-byte
    /// character at it put the error's position inside the character, and slicing there
    /// panicked.
    #[test]
    fn a_syntax_error_after_crlf_or_inside_a_character_is_answered() {
        for (line, token) in [
            ("\r\n\"\u{fffd}\u{0}\n", "'\\u0000'"),
            ("{\"a\":\"\\é\"}", "'é'"),
            ("\r\n\r\n{\"é\": x}", "'x'"),
        ] {
            let error = invalid(line);
            assert!(
                error.contains(&format!("Unexpected token {token}")),
                "{error}"
            );
        }
    }

    #[test]
    fn errors_have_the_reference_shapes() {
        assert_eq!(
            invalid(r#"{"id":"u1","type":"no_such_command"}"#),
            r#"{"id":"u1","type":"response","command":"no_such_command","success":false,"error":"Unknown command: no_such_command"}"#
        );
        assert_eq!(
            invalid("{this is not json"),
            r#"{"type":"response","command":"parse","success":false,"error":"Failed to parse command: Expected property name or '}' in JSON at position 1 (line 1 column 2)"}"#
        );
        assert!(invalid(r#"{"id":"x","type":"set_model"}"#).starts_with(
            r#"{"id":"x","type":"response","command":"set_model","success":false,"error":"Invalid set_model command: missing field"#
        ));
    }

    #[test]
    fn every_command_type_parses() {
        let lines = [
            r#"{"type":"prompt","message":"hi","streamingBehavior":"followUp"}"#,
            r#"{"type":"steer","message":"hi"}"#,
            r#"{"type":"follow_up","message":"hi"}"#,
            r#"{"type":"abort"}"#,
            r#"{"type":"new_session","parentSession":"/x.jsonl"}"#,
            r#"{"type":"get_state"}"#,
            r#"{"type":"set_model","provider":"p","modelId":"m"}"#,
            r#"{"type":"cycle_model"}"#,
            r#"{"type":"get_available_models"}"#,
            r#"{"type":"set_thinking_level","level":"high"}"#,
            r#"{"type":"cycle_thinking_level"}"#,
            r#"{"type":"set_steering_mode","mode":"all"}"#,
            r#"{"type":"set_follow_up_mode","mode":"one-at-a-time"}"#,
            r#"{"type":"compact","customInstructions":"short"}"#,
            r#"{"type":"set_auto_compaction","enabled":false}"#,
            r#"{"type":"set_auto_retry","enabled":true}"#,
            r#"{"type":"abort_retry"}"#,
            r#"{"type":"bash","command":"ls"}"#,
            r#"{"type":"abort_bash"}"#,
            r#"{"type":"get_session_stats"}"#,
            r#"{"type":"export_html","outputPath":"/tmp/x.html"}"#,
            r#"{"type":"switch_session","sessionPath":"/x.jsonl"}"#,
            r#"{"type":"fork","entryId":"abcd1234"}"#,
            r#"{"type":"clone"}"#,
            r#"{"type":"get_fork_messages"}"#,
            r#"{"type":"get_last_assistant_text"}"#,
            r#"{"type":"set_session_name","name":"n"}"#,
            r#"{"type":"get_messages"}"#,
            r#"{"type":"get_commands"}"#,
            r#"{"type":"clear_queue"}"#,
            r#"{"type":"get_available_thinking_levels"}"#,
            r#"{"type":"get_entries","since":"abcd1234"}"#,
            r#"{"type":"get_tree"}"#,
        ];
        assert_eq!(lines.len(), COMMAND_TYPES.len());
        for (line, kind) in lines.iter().zip(COMMAND_TYPES) {
            match parse_line(line) {
                Input::Command { kind: parsed, .. } => assert_eq!(parsed, kind),
                other => panic!("{line}: {other:?}"),
            }
        }
    }
}
