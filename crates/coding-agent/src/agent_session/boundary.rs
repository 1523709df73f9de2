//! pi 1.6.0's actionable boundaries from the session's side: `turn_end` (after a turn's
//! messages were stored) and `agent_before_settle` (before a run that was not aborted
//! settles). Handlers propose session entries and a continuation; the proposal is checked
//! as a whole, appended in order, and a continuation runs only when the model has
//! something to answer.

use std::sync::atomic::Ordering;

use serde_json::{Map, Value, json};

use pi_agent_core::AgentMessage;
use pi_ai::{AssistantMessage, StopReason, ToolResultMessage};

use super::{AgentSession, Inner, lock};
use crate::extensions::ExtensionErrorInfo;
use crate::extensions::ExtensionEvent;
use crate::session::EntryKind;

/// Which boundary a proposal came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Boundary {
    TurnEnd,
    BeforeSettle,
}

impl Boundary {
    fn event(self) -> &'static str {
        match self {
            Self::TurnEnd => "turn_end",
            Self::BeforeSettle => "agent_before_settle",
        }
    }
}

/// pi 1.6.0's `outcome` of a reply: `completed`, `error` or `aborted`.
pub(super) fn outcome_of(reply: &AssistantMessage) -> &'static str {
    match reply.stop_reason {
        StopReason::Aborted => "aborted",
        StopReason::Error => "error",
        _ => "completed",
    }
}

impl Inner {
    /// The boundary's `context`: the session's projection as the model would get it, what
    /// is queued, and whether a continuation has anything to answer.
    fn boundary_context(&self, boundary: Boundary) -> (Value, bool) {
        let (entries, messages) = {
            let session = lock(&self.session);
            let entries: Vec<Value> = session
                .branch_entries()
                .iter()
                .filter_map(|e| e.to_json().ok().map(Value::Object))
                .collect();
            (entries, session.build_context().messages)
        };
        let llm = crate::messages::convert_to_llm(&messages);
        let last_role = llm.last().map(|m| m.role().to_owned());
        // pi-ai 1.6 keeps system messages among the LLM messages.
        let llm_messages: Vec<Value> = messages
            .iter()
            .flat_map(|m| {
                if m.role() == "system" {
                    vec![serde_json::to_value(m).unwrap_or(Value::Null)]
                } else {
                    crate::messages::convert_to_llm(std::slice::from_ref(m))
                        .iter()
                        .map(|l| serde_json::to_value(l).unwrap_or(Value::Null))
                        .collect()
                }
            })
            .collect();
        let pending_custom: Vec<AgentMessage> = lock(&self.ext.pending_custom)
            .iter()
            .map(|(_, m)| m.clone())
            .collect();
        let mut pending = self.agent.steering_messages();
        pending.extend(self.agent.follow_up_messages());
        pending.extend(pending_custom.iter().cloned());
        let queued = self.agent.has_queued_messages();
        let answerable = !llm.is_empty() && last_role.as_deref() != Some("assistant");
        let can_continue = answerable
            || !pending_custom.is_empty()
            || match boundary {
                Boundary::TurnEnd => queued,
                Boundary::BeforeSettle => last_role.as_deref() == Some("assistant") && queued,
            };
        let context = json!({
            "contextEntries": entries,
            "contextMessages": messages,
            "llmMessages": llm_messages,
            "pendingMessages": pending,
            "canContinue": can_continue,
        });
        (context, can_continue)
    }

    /// The id of the newest stored entry holding `message` (by role and timestamp).
    fn stored_entry_id(&self, matches: impl Fn(&AgentMessage) -> bool) -> Option<String> {
        let session = lock(&self.session);
        session
            .branch_entries()
            .iter()
            .rev()
            .find(|e| e.message().is_some_and(&matches))
            .map(|e| e.id.clone())
    }

    /// `turn_end` for extensions that handle it: the stored ids of the reply and its tool
    /// results, the proposal applied, and a continuation asked of the loop when valid.
    pub(super) async fn turn_end_boundary(
        &self,
        turn_index: u64,
        reply: &AssistantMessage,
        tool_results: &[ToolResultMessage],
    ) {
        let outcome = outcome_of(reply);
        let entry_id = self.stored_entry_id(|m| {
            m.as_assistant()
                .is_some_and(|a| a.timestamp == reply.timestamp)
        });
        let Some(entry_id) = entry_id else {
            self.report_boundary_error(
                Boundary::TurnEnd,
                "turn_end could not resolve the persisted assistant entry ID",
            );
            return;
        };
        let result_ids = tool_results
            .iter()
            .filter_map(|result| {
                self.stored_entry_id(|m| match m {
                    AgentMessage::Llm(pi_ai::Message::ToolResult(stored)) => {
                        stored.tool_call_id == result.tool_call_id
                    }
                    _ => false,
                })
            })
            .collect();
        let (context, _) = self.boundary_context(Boundary::TurnEnd);
        let event = ExtensionEvent::TurnEnd {
            turn_index,
            message: AgentMessage::from(reply.clone()),
            tool_results: tool_results
                .iter()
                .map(|r| serde_json::to_value(r).unwrap_or(Value::Null))
                .collect(),
            message_entry_id: Some(entry_id),
            tool_result_entry_ids: result_ids,
            outcome: outcome.into(),
            entries: Vec::new(),
            continue_: false,
            context,
        };
        let proposal = self.ext.runtime.emit_boundary(event).await;
        let committed = self.commit_boundary(Boundary::TurnEnd, proposal.entries, true);
        if !(committed && proposal.continue_) || reply.stop_reason.is_failure() {
            return;
        }
        if self.boundary_context(Boundary::TurnEnd).1 {
            self.ext.boundary_continue.store(true, Ordering::SeqCst);
        } else {
            self.report_invalid_continuation(Boundary::TurnEnd);
        }
    }

    /// Checks and appends a boundary's draft entries in order, announcing each
    /// (`entry_appended`). An invalid proposal is reported and appends nothing (false).
    /// `in_run`: the loop's next request reads the session's projection.
    pub(super) fn commit_boundary(
        &self,
        boundary: Boundary,
        drafts: Vec<Value>,
        in_run: bool,
    ) -> bool {
        if drafts.is_empty() {
            return true;
        }
        let kinds = match drafts
            .iter()
            .filter_map(|draft| self.draft_entry(draft).transpose())
            .collect::<Result<Vec<EntryKind>, String>>()
        {
            Ok(kinds) => kinds,
            Err(reason) => {
                self.report_boundary_error(
                    boundary,
                    &format!("Invalid boundary entries: {reason}"),
                );
                return false;
            }
        };
        for kind in kinds {
            if let Err(e) = self.append_announced(kind) {
                eprintln!("Warning: {e}");
            }
        }
        if in_run {
            self.ext.reproject.store(true, Ordering::SeqCst);
        } else {
            let messages = lock(&self.session).build_context().messages;
            self.agent.replace_messages(messages);
        }
        true
    }

    /// The session entry a draft stands for, or why it cannot be one. pi 1.6.0 appends
    /// `custom`, `custom_message`, `context_edit` and `compaction` drafts and passes over
    /// any other type (`None`).
    fn draft_entry(&self, draft: &Value) -> Result<Option<EntryKind>, String> {
        let Value::Object(fields) = draft else {
            return Err("an entry is not an object".into());
        };
        let kind = fields.get("type").and_then(Value::as_str).unwrap_or("");
        let mut fields: Map<String, Value> = fields.clone();
        fields.shift_remove("type");
        // Worded as pi 1.6.0's session manager refuses a missing entry.
        let on_branch = |id: Option<&Value>| match id.and_then(Value::as_str) {
            Some(id) if lock(&self.session).entry(id).is_some() => Ok(()),
            Some(id) => Err(format!("Entry {id} not found")),
            None => Err("Entry undefined not found".to_owned()),
        };
        match kind {
            "custom" | "custom_message" => {
                if !fields.get("customType").is_some_and(Value::is_string) {
                    return Err(format!("{kind} entry has no customType"));
                }
                if kind == "custom_message" {
                    fields.entry("content").or_insert_with(|| json!([]));
                }
            }
            "context_edit" => on_branch(fields.get("targetId"))?,
            "compaction" => {
                on_branch(fields.get("firstKeptEntryId"))?;
                if !fields.get("summary").is_some_and(Value::is_string) {
                    return Err("compaction entry has no summary".into());
                }
                let messages = lock(&self.session).build_context().messages;
                let before = crate::compaction::tokens::estimate_context_tokens(&messages).tokens;
                return Ok(Some(EntryKind::Compaction {
                    summary: fields["summary"].as_str().unwrap_or_default().to_owned(),
                    first_kept_entry_id: fields["firstKeptEntryId"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                    tokens_before: before,
                    details: fields.get("details").cloned(),
                    usage: fields.get("usage").cloned(),
                    from_hook: Some(true),
                    system_message: super::system_message::system_checkpoint(&self.agent),
                }));
            }
            _ => return Ok(None),
        }
        let mut tagged = Map::with_capacity(1);
        tagged.insert(kind.to_owned(), Value::Object(fields));
        serde_json::from_value(Value::Object(tagged))
            .map(Some)
            .map_err(|e| format!("{kind} entry: {e}"))
    }

    fn report_boundary_error(&self, boundary: Boundary, error: &str) {
        self.ext.runtime.report_error(ExtensionErrorInfo {
            extension_path: "<boundary>".into(),
            event: boundary.event().into(),
            error: error.into(),
            stack: None,
        });
    }

    fn report_invalid_continuation(&self, boundary: Boundary) {
        let event = boundary.event();
        self.report_boundary_error(
            boundary,
            &format!("{event} requested continuation without runnable model context"),
        );
    }
}

impl AgentSession {
    /// `agent_before_settle` for a run that was not aborted: the proposal is applied and the
    /// run goes on when a handler asked to (or something is queued) and the model has
    /// something to answer.
    pub(super) async fn before_settle_continues(&self, outcome: &str) -> bool {
        let inner = &self.inner;
        if !inner.ext.runtime.has_handlers("agent_before_settle") {
            return false;
        }
        let (context, _) = inner.boundary_context(Boundary::BeforeSettle);
        let event = ExtensionEvent::AgentBeforeSettle {
            outcome: outcome.into(),
            entries: Vec::new(),
            continue_: false,
            context,
        };
        let proposal = inner.ext.runtime.emit_boundary(event).await;
        let committed = inner.commit_boundary(Boundary::BeforeSettle, proposal.entries, false);
        inner.flush_pending_custom(false);
        let asked = committed && proposal.continue_;
        let continues = asked || inner.agent.has_queued_messages();
        if continues && !inner.boundary_context(Boundary::BeforeSettle).1 {
            if asked {
                inner.report_invalid_continuation(Boundary::BeforeSettle);
            }
            return false;
        }
        continues
    }
}
