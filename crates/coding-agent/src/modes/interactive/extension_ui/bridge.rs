//! `ctx.ui` of interactive mode: every call becomes an [`ExtEvent`] on the UI task's
//! channel; dialogs wait for the UI's answer (or their cancellation), fire-and-forget
//! calls do not wait at all. Also binds the session's extensions to it.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::ExtEvent;
use crate::agent_session::AgentSession;
use crate::extensions::{ExtensionErrorInfo, ExtensionUi, UiDialog, UiNotice};
use crate::modes::interactive::AppEvent;

/// Interactive mode's [`ExtensionUi`].
pub(crate) struct InteractiveUi {
    tx: UnboundedSender<AppEvent>,
}

impl InteractiveUi {
    pub(crate) fn new(tx: UnboundedSender<AppEvent>) -> Self {
        InteractiveUi { tx }
    }

    fn send(&self, event: ExtEvent) -> bool {
        self.tx.send(AppEvent::Ext(event)).is_ok()
    }
}

impl ExtensionUi for InteractiveUi {
    fn has_ui(&self) -> bool {
        true
    }

    fn dialog(&self, dialog: UiDialog, cancel: CancellationToken) -> BoxFuture<'_, Value> {
        Box::pin(async move {
            let empty = dialog.empty_answer();
            if cancel.is_cancelled() {
                return empty;
            }
            let (reply, answer) = oneshot::channel();
            let opened = self.send(ExtEvent::Dialog {
                dialog,
                reply,
                cancel: cancel.clone(),
            });
            if !opened {
                // The UI is gone (pi is quitting).
                return empty;
            }
            tokio::select! {
                answer = answer => answer.unwrap_or(empty),
                () = cancel.cancelled() => {
                    // Wake the UI so it drops the dialog.
                    self.send(ExtEvent::DialogCancelled);
                    empty
                }
            }
        })
    }

    fn notice(&self, notice: UiNotice) {
        self.send(ExtEvent::Notice(notice));
    }
}

/// Connects the session's extensions to the UI (which must already run: `session_start`
/// handlers may open dialogs) and emits `session_start`; [`ExtEvent::Bound`] follows.
pub(crate) fn spawn_bind(session: &AgentSession, tx: UnboundedSender<AppEvent>) {
    let session = session.clone();
    tokio::spawn(async move {
        let ui = Arc::new(InteractiveUi::new(tx.clone()));
        let errors = {
            let tx = tx.clone();
            Arc::new(move |error: ExtensionErrorInfo| {
                let _ = tx.send(AppEvent::Ext(ExtEvent::Error(error)));
            })
        };
        let shutdown = {
            let tx = tx.clone();
            Arc::new(move || {
                let _ = tx.send(AppEvent::Ext(ExtEvent::Shutdown));
            })
        };
        session.bind_extensions(ui, errors, shutdown).await;
        let _ = tx.send(AppEvent::Ext(ExtEvent::Bound));
    });
}
