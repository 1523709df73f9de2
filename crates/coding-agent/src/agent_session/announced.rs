//! Entries pi appends outside the message flow, announced as pi 1.5's `entry_appended`
//! event (an extension's `appendEntry`, the context edit of a retried failure).

use pi_ai::StopReason;
use serde_json::Value;

use super::{Inner, lock};
use crate::session::{EntryKind, SessionError};
use crate::session_event::SessionOnlyEvent;

impl Inner {
    /// Appends `kind` at the leaf and emits `entry_appended` with the stored entry.
    pub(super) fn append_announced(&self, kind: EntryKind) -> Result<String, SessionError> {
        let (id, entry) = {
            let mut session = lock(&self.session);
            let id = session.append(kind)?;
            let entry = session
                .entry(&id)
                .and_then(|e| e.to_json().ok())
                .map(Value::Object);
            (id, entry)
        };
        if let Some(entry) = entry {
            self.emit_session(SessionOnlyEvent::EntryAppended { entry });
        }
        Ok(id)
    }

    /// Leaves the newest assistant reply out of the context from now on (a `context_edit`
    /// with `replacement: null`), as pi 1.6 does with a reply it recovers from.
    pub(super) fn omit_last_reply(&self) {
        self.omit_newest_reply(|_| true);
    }

    /// Leaves the failed reply a retry replaces out of the context from now on (pi 1.5's
    /// `context_edit` with `replacement: null`); the file keeps the reply itself.
    pub(super) fn drop_failed_reply(&self) {
        self.omit_newest_reply(|reply| reply.stop_reason == StopReason::Error);
    }

    /// Appends a `context_edit` removing the newest assistant reply on the branch that
    /// `which` accepts; the file keeps the reply itself.
    fn omit_newest_reply(&self, which: impl Fn(&pi_ai::AssistantMessage) -> bool) {
        let target = {
            let session = lock(&self.session);
            session
                .branch_entries()
                .iter()
                .rev()
                .find(|e| {
                    e.message()
                        .and_then(|m| m.as_assistant())
                        .is_some_and(&which)
                })
                .map(|e| e.id.clone())
        };
        if let Some(target_id) = target
            && let Err(e) = self.append_announced(EntryKind::ContextEdit {
                target_id,
                replacement: None,
            })
        {
            eprintln!("Warning: {e}");
        }
    }
}
