//! Extension dialogs under ACP: a confirmation or a choice becomes a
//! `session/request_permission` the editor shows, text input and the editor a one-field form
//! (`elicitation/create`) when the editor fills in forms; a dialog it cannot show (text
//! without forms, a custom component) gets its empty answer at once and the user a note, so
//! an extension never waits on a question nobody can see. A dialog's timeout dismisses it.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, PermissionOptionKind, SessionUpdate, StringPropertySchema,
    TextContent,
};
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::link::Link;
use crate::extensions::{ExtensionUi, UiDialog, UiNotice};

/// ACP mode's `ctx.ui`.
pub struct AcpUi {
    link: Arc<Link>,
    asked: AtomicU64,
}

impl AcpUi {
    pub fn new(link: Arc<Link>) -> Self {
        Self {
            link,
            asked: AtomicU64::new(0),
        }
    }

    fn say(&self, text: String) {
        self.link
            .update(SessionUpdate::AgentMessageChunk(ContentChunk::new(
                ContentBlock::Text(TextContent::new(text)),
            )));
    }

    /// An extension's question to the editor (see [`Link::ask`]).
    async fn ask(
        &self,
        title: &str,
        raw_input: Value,
        options: Vec<(String, String, PermissionOptionKind)>,
        cancel: CancellationToken,
    ) -> Option<String> {
        let n = self.asked.fetch_add(1, Ordering::Relaxed) + 1;
        self.link
            .ask(&format!("pi-ui-{n}"), title, raw_input, options, cancel)
            .await
    }
}

impl AcpUi {
    /// Text from the editor's form, or the empty answer and a note when it takes none.
    async fn text(
        &self,
        title: &str,
        field: StringPropertySchema,
        dialog: &UiDialog,
        cancel: CancellationToken,
    ) -> Value {
        match self.link.ask_text(title, field, cancel).await {
            Some(text) => text.map_or(Value::Null, Value::String),
            None => {
                self.say(format!(
                    "An extension asked for text (\"{title}\"), which this editor cannot ask for; it got no answer."
                ));
                dialog.empty_answer()
            }
        }
    }
}

impl ExtensionUi for AcpUi {
    fn has_ui(&self) -> bool {
        true
    }

    fn dialog(&self, dialog: UiDialog, cancel: CancellationToken) -> BoxFuture<'_, Value> {
        Box::pin(async move {
            let cancel = cancel.child_token();
            // Ends the timer below once the dialog is answered.
            let _answered = cancel.clone().drop_guard();
            if let Some(ms) = dialog.timeout_ms().filter(|ms| *ms > 0) {
                let timer = cancel.clone();
                tokio::spawn(async move {
                    tokio::select! {
                        () = tokio::time::sleep(Duration::from_millis(ms)) => timer.cancel(),
                        () = timer.cancelled() => {}
                    }
                });
            }
            match &dialog {
                UiDialog::Confirm { title, message, .. } => {
                    let options = vec![
                        (
                            "yes".to_owned(),
                            "Yes".to_owned(),
                            PermissionOptionKind::AllowOnce,
                        ),
                        (
                            "no".to_owned(),
                            "No".to_owned(),
                            PermissionOptionKind::RejectOnce,
                        ),
                    ];
                    let raw = json!({"method": "confirm", "title": title, "message": message});
                    let chosen = self.ask(title, raw, options, cancel).await;
                    Value::Bool(chosen.as_deref() == Some("yes"))
                }
                UiDialog::Select { title, options, .. } => {
                    let choices = options
                        .iter()
                        .enumerate()
                        .map(|(i, o)| {
                            (
                                format!("choice-{i}"),
                                o.clone(),
                                PermissionOptionKind::AllowOnce,
                            )
                        })
                        .collect();
                    let raw = json!({"method": "select", "title": title, "options": options});
                    let chosen = self.ask(title, raw, choices, cancel).await;
                    chosen
                        .and_then(|id| id.strip_prefix("choice-")?.parse::<usize>().ok())
                        .and_then(|i| options.get(i).cloned())
                        .map_or(Value::Null, Value::String)
                }
                UiDialog::Input {
                    title, placeholder, ..
                } => {
                    let field = StringPropertySchema::new().description(placeholder.clone());
                    self.text(title, field, &dialog, cancel).await
                }
                UiDialog::Editor { title, prefill } => {
                    let field = StringPropertySchema::new().default_value(prefill.clone());
                    self.text(title, field, &dialog, cancel).await
                }
                UiDialog::Custom { .. } => dialog.empty_answer(),
            }
        })
    }

    fn notice(&self, notice: UiNotice) {
        if let UiNotice::Notify { message, .. } = notice {
            self.say(message);
        }
    }
}
