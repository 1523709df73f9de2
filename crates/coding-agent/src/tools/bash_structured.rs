//! What a codemode script's `bash` call resolves to (pi 1.6's bash output schema): the
//! combined output up to 1 MiB (longer output keeps its first and last 512 KiB around an
//! omission marker), the exit code and the wall time, also for a failing command.

use std::time::Duration;

use serde_json::{Map, Value, json};

use super::bash_process::CommandOutput;

/// The most output a structured result holds.
const MAX_BYTES: usize = 1024 * 1024;

/// The output schema of `bash`.
pub fn schema() -> Value {
    json!({
        "type": "object",
        "required": ["output", "truncated", "exit_code", "wall_time_seconds"],
        "properties": {
            "output": {"type": "string", "description": "Standard output and error together, cut when very long"},
            "truncated": {"type": "boolean"},
            "full_output_path": {"type": "string", "description": "The whole output, when it was cut"},
            "exit_code": {"type": "number"},
            "wall_time_seconds": {"type": "number"}
        }
    })
}

/// The whole output as far as it fits: read back from the temp file when the model's view
/// was cut. Whether it had to be cut.
fn full_output(output: &CommandOutput) -> (String, bool) {
    let bytes = match &output.full_output_path {
        Some(path) => match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(_) => return (output.output.clone(), false),
        },
        None => return (output.output.clone(), false),
    };
    if bytes.len() <= MAX_BYTES {
        return (String::from_utf8_lossy(&bytes).into_owned(), false);
    }
    let half = MAX_BYTES / 2;
    let omitted = bytes.len() - 2 * half;
    let head = String::from_utf8_lossy(&bytes[..half]);
    let tail = String::from_utf8_lossy(&bytes[bytes.len() - half..]);
    (
        format!("{head}\n\n[... {omitted} bytes omitted ...]\n\n{tail}"),
        true,
    )
}

/// The structured result of a command that ran to its end.
pub fn value(output: &CommandOutput, took: Duration) -> Value {
    let (text, truncated) = full_output(output);
    let code = match (output.exit_code, output.signal) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        (None, None) => 1,
    };
    let tenths = (took.as_secs_f64() * 10.0).round() / 10.0;
    let seconds = if tenths.fract() == 0.0 {
        json!(tenths as i64)
    } else {
        json!(tenths)
    };
    let mut map = Map::new();
    map.insert("output".into(), Value::String(text));
    map.insert("truncated".into(), Value::Bool(truncated));
    if truncated && let Some(path) = &output.full_output_path {
        map.insert(
            "full_output_path".into(),
            Value::String(path.display().to_string()),
        );
    }
    map.insert("exit_code".into(), json!(code));
    map.insert("wall_time_seconds".into(), seconds);
    Value::Object(map)
}
