//! The extension UI of RPC mode: dialogs become `extension_ui_request` lines answered by
//! `extension_ui_response` lines; fire-and-forget calls become requests nobody answers.
//! Byte-compatible with the TypeScript pi's RPC mode (component factories, working
//! indicators and the like have no RPC form and are dropped, as there).

use std::collections::HashMap;
use std::sync::Mutex;

use futures_util::future::BoxFuture;
use serde_json::{Map, Value};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::Output;
use crate::extensions::{ExtensionUi, UiDialog, UiNotice};

/// RPC mode's `ctx.ui`.
pub struct RpcUi {
    output: Output,
    pending: Mutex<HashMap<String, oneshot::Sender<Map<String, Value>>>>,
}

impl RpcUi {
    pub(super) fn new(output: Output) -> Self {
        Self {
            output,
            pending: Mutex::new(HashMap::new()),
        }
    }

    /// Hands an `extension_ui_response` to the dialog waiting for it.
    pub(super) fn answer(&self, response: Map<String, Value>) {
        let Some(id) = response
            .get("id")
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            return;
        };
        let waiting = self
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&id);
        if let Some(waiting) = waiting {
            let _ = waiting.send(response);
        }
    }

    fn request(&self, id: &str, fields: Value) {
        let mut line = Map::new();
        line.insert("type".into(), "extension_ui_request".into());
        line.insert("id".into(), id.into());
        if let Value::Object(fields) = fields {
            line.extend(fields);
        }
        self.output.line(&Value::Object(line));
    }
}

/// The answer a dialog takes from a response, as the TypeScript pi reads it.
fn parse_answer(dialog: &UiDialog, response: &Map<String, Value>) -> Value {
    let cancelled = response.get("cancelled").and_then(Value::as_bool) == Some(true);
    match dialog {
        UiDialog::Confirm { .. } => Value::Bool(
            !cancelled && response.get("confirmed").and_then(Value::as_bool) == Some(true),
        ),
        _ if cancelled => Value::Null,
        _ => response.get("value").cloned().unwrap_or(Value::Null),
    }
}

impl ExtensionUi for RpcUi {
    fn has_ui(&self) -> bool {
        true
    }

    fn dialog(&self, dialog: UiDialog, cancel: CancellationToken) -> BoxFuture<'_, Value> {
        Box::pin(async move {
            if matches!(dialog, UiDialog::Custom { .. }) {
                return Value::Null;
            }
            let empty = dialog.empty_answer();
            if cancel.is_cancelled() {
                return empty;
            }
            let id = uuid::Uuid::new_v4().to_string();
            let (tx, rx) = oneshot::channel();
            self.pending
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(id.clone(), tx);
            self.request(&id, serde_json::to_value(&dialog).unwrap_or(Value::Null));
            let timeout = dialog.timeout_ms().filter(|ms| *ms > 0);
            let sleep = async {
                match timeout {
                    Some(ms) => tokio::time::sleep(std::time::Duration::from_millis(ms)).await,
                    None => std::future::pending::<()>().await,
                }
            };
            let answer = tokio::select! {
                response = rx => response.ok().map(|r| parse_answer(&dialog, &r)),
                () = cancel.cancelled() => None,
                () = sleep => None,
            };
            self.pending
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&id);
            answer.unwrap_or(empty)
        })
    }

    fn notice(&self, notice: UiNotice) {
        let notice = match notice {
            UiNotice::PasteToEditor { text } => UiNotice::SetEditorText { text: Some(text) },
            UiNotice::SetWidget {
                component_id: Some(_),
                ..
            } => return,
            other @ (UiNotice::Notify { .. }
            | UiNotice::SetStatus { .. }
            | UiNotice::SetWidget { .. }
            | UiNotice::SetTitle { .. }
            | UiNotice::SetEditorText { .. }) => other,
            _ => return,
        };
        let id = uuid::Uuid::new_v4().to_string();
        self.request(&id, serde_json::to_value(&notice).unwrap_or(Value::Null));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_parse_as_the_typescript_pi_reads_them() {
        let confirm = UiDialog::Confirm {
            title: "t".into(),
            message: "m".into(),
            timeout: None,
        };
        let yes: Map<String, Value> =
            serde_json::from_str(r#"{"id":"1","confirmed":true}"#).unwrap();
        assert_eq!(parse_answer(&confirm, &yes), Value::Bool(true));
        let cancelled: Map<String, Value> =
            serde_json::from_str(r#"{"id":"1","cancelled":true,"value":"x"}"#).unwrap();
        assert_eq!(parse_answer(&confirm, &cancelled), Value::Bool(false));
        let select = UiDialog::Select {
            title: "t".into(),
            options: vec!["a".into()],
            timeout: None,
        };
        assert_eq!(parse_answer(&select, &cancelled), Value::Null);
        let value: Map<String, Value> = serde_json::from_str(r#"{"id":"1","value":"a"}"#).unwrap();
        assert_eq!(parse_answer(&select, &value), Value::String("a".into()));
    }
}
