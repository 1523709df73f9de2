//! The records of a script's tool calls (`details.calls`, drawn in the codemode row) and
//! what each call gives back to the script.

use pi_agent_core::{AgentTool, NestedOutcome};
use pi_ai::InputBlock;
use serde::Serialize;
use serde_json::Value;

const MAX_ARGS_PREVIEW: usize = 200;
const MAX_ERROR: usize = 500;

/// Where a call stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Running,
    Ok,
    Error,
    Cancelled,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Ok => "ok",
            Self::Error => "error",
            Self::Cancelled => "cancelled",
        }
    }
}

/// One call a script made.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallRecord {
    /// `<codemode call>/<n>` once the call ran; `<codemode call>/?` before.
    pub id: String,
    pub name: String,
    /// The arguments as JSON, cut to 200 characters.
    pub args: String,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What a model call cost (when its provider counted usage).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
}

/// `text` cut to `max` characters with `...` at the end.
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let kept: String = text.chars().take(max - 3).collect();
    format!("{kept}...")
}

impl CallRecord {
    /// A call just asked for.
    pub fn running(parent: &str, name: &str, args_json: &str) -> Self {
        Self {
            id: format!("{parent}/?"),
            name: name.to_owned(),
            args: cut(args_json, MAX_ARGS_PREVIEW),
            status: Status::Running,
            duration_ms: None,
            error: None,
            cost: None,
        }
    }

    /// A model call (`models.classify`, `models.generateImages`), the script's `n`-th:
    /// named by the model it runs.
    pub fn model(parent: &str, name: &str, n: u32, reference: &str) -> Self {
        Self {
            id: format!("{parent}/{name}/{n}"),
            name: name.to_owned(),
            args: reference.to_owned(),
            status: Status::Running,
            duration_ms: None,
            error: None,
            cost: None,
        }
    }

    /// The model call ended with `result` (a `ClassifierResult` or `ImagesResult`).
    pub fn model_ended(&mut self, result: &Value, took: std::time::Duration) {
        self.duration_ms = Some(took.as_millis() as u64);
        self.status = match result["stopReason"].as_str() {
            Some("stop") => Status::Ok,
            Some("aborted") => Status::Cancelled,
            _ => Status::Error,
        };
        if let Some(message) = result["errorMessage"].as_str().filter(|m| !m.is_empty()) {
            self.error = Some(cut(message, MAX_ERROR));
        }
        if let Some(total) = result["usage"]["cost"]["total"].as_f64() {
            self.cost = Some(total);
        }
    }

    /// The call ended with `outcome`; `cancelled` when the script's end stopped it.
    pub fn ended(&mut self, outcome: &NestedOutcome, cancelled: bool) {
        self.id = outcome.tool_call_id.clone();
        self.duration_ms = outcome.duration_ms;
        self.status = match (outcome.is_error, cancelled) {
            (false, _) => Status::Ok,
            (true, true) => Status::Cancelled,
            (true, false) => Status::Error,
        };
        if outcome.is_error {
            let text = result_text(&outcome.result.content);
            let text = if text.is_empty() {
                format!("Tool \"{}\" failed", self.name)
            } else {
                text
            };
            self.error = Some(cut(&text, MAX_ERROR));
        }
    }
}

/// The text blocks of a result, joined by newlines.
pub fn result_text(content: &[InputBlock]) -> String {
    content
        .iter()
        .filter_map(|block| match block {
            InputBlock::Text(text) => Some(text.text.to_string()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// What the call gives the script: the structured result of a tool declaring one (on
/// failure too), else its text; `Err` is the rejection's message.
pub fn script_value(tool: &dyn AgentTool, outcome: &NestedOutcome) -> Result<Value, String> {
    if tool.output_schema().is_some()
        && let Some(structured) = &outcome.result.structured_content
    {
        return Ok((**structured).clone());
    }
    let text = result_text(&outcome.result.content);
    if outcome.is_error {
        return Err(if text.is_empty() {
            format!("Tool \"{}\" failed", tool.name())
        } else {
            text
        });
    }
    Ok(Value::String(text))
}

/// The failure's last words: which calls ran before it.
pub fn summary(records: &[CallRecord]) -> String {
    if records.is_empty() {
        return "No tool calls were made.".into();
    }
    let calls: Vec<String> = records
        .iter()
        .map(|r| format!("{} ({})", r.name, r.status.as_str()))
        .collect();
    format!(
        "Tool calls made before the failure (they are not undone): {}",
        calls.join(", ")
    )
}
