//! Compaction inside a session: the threshold and overflow triggers checked after each
//! run, and manual compaction. A compaction appends a `compaction` entry and the agent's
//! context becomes the summary plus the kept messages.

use std::sync::atomic::Ordering;

use tokio_util::sync::CancellationToken;

use pi_ai::{AssistantMessage, StopReason};

use super::{AgentSession, SessionOpError, lock};
use crate::compaction::{
    CompactionError, CompactionResult, calculate_context_tokens, compact, estimate_context_tokens,
    estimate_projected_context_tokens, prepare_compaction, should_compact,
};
use crate::extensions::ExtensionEvent;
use crate::extensions::actions::StartSignal;
use crate::session::{EntryKind, SessionEntry};
use crate::session_event::{CompactionReason, SessionOnlyEvent, SummarySource};

/// The text of an overflow that compaction could not fix.
const LENGTH_RETRY_FAILED: &str =
    "Truncated response recovery failed after one compact-and-retry attempt.";
const OVERFLOW_RETRY_FAILED: &str = "Context overflow recovery failed after one compact-and-retry attempt. Try reducing context or switching to a larger-context model.";

/// The latest compaction entry on the current branch, with its timestamp in ms.
fn latest_compaction_millis(path: &[&SessionEntry]) -> Option<i64> {
    path.iter()
        .rev()
        .find(|e| matches!(e.kind, EntryKind::Compaction { .. }))
        .map(|e| crate::session::time::parse_iso_millis(&e.timestamp).unwrap_or(0))
}

impl AgentSession {
    /// Checks `message` (the last assistant message) for a context overflow or a context
    /// over the threshold and compacts. Returns `true` when the caller should continue
    /// the run (after an overflow recovery, or when queued messages are waiting).
    pub(super) async fn check_compaction(
        &self,
        message: &AssistantMessage,
        skip_aborted: bool,
        allow_threshold: bool,
    ) -> bool {
        let inner = &self.inner;
        let model = self.model();
        let settings = inner
            .settings
            .get()
            .compaction_settings_for(Some(&model_key(&model)));
        if !settings.enabled {
            return false;
        }
        if skip_aborted && message.stop_reason == StopReason::Aborted {
            return false;
        }
        let message_model = self.model_for_message(message);
        let same_model = message_model.is_some();
        let limits = message_model.unwrap_or_else(|| model.clone());
        let compaction_at = {
            let session = lock(&inner.session);
            latest_compaction_millis(&session.branch_entries())
        };
        if compaction_at.is_some_and(|at| message.timestamp <= at) {
            return false;
        }
        let overflow =
            same_model && pi_ai::is_context_overflow(message, Some(limits.context_window));
        // pi 1.6: a reply cut off before it used its output budget ran out of context
        // window, and is recovered from as an overflow is.
        let cut_short = same_model
            && message.stop_reason == StopReason::Length
            && limits.max_tokens > 0
            && message.usage.output < limits.max_tokens;
        if overflow || cut_short {
            // A completed reply over the window is compacted but kept: nothing to retry.
            if message.stop_reason == StopReason::Stop {
                return self
                    .run_auto_compaction(CompactionReason::Overflow, false)
                    .await;
            }
            if inner
                .overflow_recovery_attempted
                .swap(true, Ordering::SeqCst)
            {
                let text = if overflow {
                    OVERFLOW_RETRY_FAILED
                } else {
                    LENGTH_RETRY_FAILED
                };
                inner.emit_session(SessionOnlyEvent::CompactionEnd {
                    reason: CompactionReason::Overflow,
                    result: None,
                    aborted: false,
                    will_retry: false,
                    error_message: Some(text.into()),
                });
                self.emit_compact_failed(
                    CompactionReason::Overflow,
                    Some(text.into()),
                    false,
                    false,
                )
                .await;
                return false;
            }
            inner.agent.update_messages(|messages| {
                if messages.last().is_some_and(|m| m.is_assistant()) {
                    messages.pop();
                }
            });
            // The attempt stays in the file but leaves the context (pi 1.6.0's recovery
            // omission), so the retry and later requests do not carry it.
            inner.omit_last_reply();
            return self
                .run_auto_compaction(CompactionReason::Overflow, true)
                .await;
        }
        // A failed reply, or one without usage (a provider that streams none), is measured
        // by estimate from the last usage report, as pi 1.6.0 does.
        let direct_tokens = calculate_context_tokens(&message.usage);
        let context_tokens = if message.stop_reason == StopReason::Error || direct_tokens == 0 {
            let (estimate, usage_time) = inner.agent.with_messages(|messages| {
                let estimate = estimate_context_tokens(messages);
                let usage_time = estimate
                    .last_usage_index
                    .and_then(|i| messages[i].as_assistant())
                    .map(|a| a.timestamp);
                (estimate, usage_time)
            });
            // A usage report from before the latest compaction measured the old context.
            if usage_time.is_some_and(|time| compaction_at.is_some_and(|at| time <= at)) {
                return false;
            }
            estimate.tokens
        } else {
            direct_tokens
        };
        if allow_threshold && should_compact(context_tokens, limits.context_window, &settings) {
            return self
                .run_auto_compaction(CompactionReason::Threshold, false)
                .await;
        }
        false
    }

    /// Compacts between a turn's tool results and the next request of the same run when
    /// they pushed the context past the threshold (pi 1.6.0's
    /// `_compactBeforeNextAssistantResponse`), so a large tool result never reaches the
    /// provider uncompacted; the rest of the run sends the session's projection.
    pub(super) async fn compact_before_next_turn(&self) {
        let model = self.model();
        // A virtual model's request is checked against the model it is routed to.
        if !crate::virtual_models::is_virtual(&model) {
            self.compact_for_window(&model).await;
        }
    }

    /// Compacts when the session's projected context passes the threshold of `limits`'s
    /// window (the selected model's, or the one a virtual model's request is routed to);
    /// `true` when it compacted and the transcript must be read again.
    pub(super) async fn compact_for_window(&self, limits: &pi_ai::Model) -> bool {
        let inner = &self.inner;
        if !inner.compact_after_runs.load(Ordering::SeqCst) {
            return false;
        }
        let model = limits;
        let settings = inner
            .settings
            .get()
            .compaction_settings_for(Some(&model_key(&self.model())));
        if !settings.enabled || model.context_window == 0 {
            return false;
        }
        let tokens = {
            let session = lock(&inner.session);
            let path: Vec<SessionEntry> = session.branch_entries().into_iter().cloned().collect();
            estimate_projected_context_tokens(&path, &session.build_context().messages)
        };
        if !should_compact(tokens, model.context_window, &settings) {
            return false;
        }
        self.run_auto_compaction(CompactionReason::Threshold, false)
            .await;
        inner.ext.reproject.store(true, Ordering::SeqCst);
        true
    }

    /// Runs a threshold or overflow compaction with its events; `true` when the run should
    /// continue afterwards (`will_retry`: the failed turn is asked for again).
    async fn run_auto_compaction(&self, reason: CompactionReason, will_retry: bool) -> bool {
        let inner = &self.inner;
        // Nothing to summarize: no compaction starts, and nothing is retried (pi 1.6.0).
        let settings = inner
            .settings
            .get()
            .compaction_settings_for(Some(&model_key(&self.model())));
        let preparable = {
            let session = lock(&inner.session);
            let path: Vec<SessionEntry> = session.branch_entries().into_iter().cloned().collect();
            prepare_compaction(&path, &settings).is_some()
        };
        if !preparable {
            return false;
        }
        inner.emit_session(SessionOnlyEvent::CompactionStart { reason });
        let cancel = CancellationToken::new();
        *lock(&inner.auto_compaction_cancel) = Some(cancel.clone());
        let mut from_extension = false;
        let outcome = self
            .compact_now(
                None,
                reason,
                will_retry,
                &mut from_extension,
                cancel.clone(),
            )
            .await;
        *lock(&inner.auto_compaction_cancel) = None;
        inner.auto_compaction_ended.notify_waiters();
        let end = |result: Option<CompactionResult>,
                   aborted: bool,
                   will_retry: bool,
                   error_message: Option<String>| {
            inner.emit_session(SessionOnlyEvent::CompactionEnd {
                reason,
                result,
                aborted,
                will_retry,
                error_message,
            });
        };
        match outcome {
            Ok(result) => {
                end(Some(result), false, will_retry, None);
                if will_retry {
                    inner.agent.update_messages(|messages| {
                        let failed = messages
                            .last()
                            .and_then(|m| m.as_assistant())
                            .is_some_and(|a| a.stop_reason == StopReason::Error);
                        if failed {
                            messages.pop();
                        }
                    });
                    return true;
                }
                inner.agent.has_queued_messages()
            }
            Err(CompactionRun::Skipped) => {
                end(None, false, false, None);
                false
            }
            Err(CompactionRun::Failed(CompactionError::Aborted)) => {
                end(None, true, false, None);
                self.emit_compact_failed(reason, None, true, from_extension)
                    .await;
                false
            }
            Err(CompactionRun::Failed(error)) => {
                let text = match reason {
                    CompactionReason::Overflow => {
                        format!("Context overflow recovery failed: {error}")
                    }
                    _ => format!("Auto-compaction failed: {error}"),
                };
                end(None, false, false, Some(text.clone()));
                self.emit_compact_failed(reason, Some(text), false, from_extension)
                    .await;
                false
            }
        }
    }

    /// Cancels a running threshold or overflow compaction and waits until it has ended.
    async fn cancel_auto_compaction(&self) {
        let inner = &self.inner;
        loop {
            let ended = inner.auto_compaction_ended.notified();
            tokio::pin!(ended);
            // Registered before the check, so an end between the two is not missed.
            ended.as_mut().enable();
            match lock(&inner.auto_compaction_cancel).as_ref() {
                Some(cancel) => cancel.cancel(),
                None => return,
            }
            ended.await;
        }
    }

    /// Compacts the session now, with optional instructions for the summary; aborts a
    /// running prompt first.
    pub async fn compact(
        &self,
        custom_instructions: Option<&str>,
    ) -> Result<CompactionResult, SessionOpError> {
        self.compact_signalled(custom_instructions, &StartSignal::default())
            .await
    }

    /// [`compact`](Self::compact), firing `started` once `compaction_start` is out, or
    /// before waiting for a run to stop (which may need the caller to go on).
    pub(crate) async fn compact_signalled(
        &self,
        custom_instructions: Option<&str>,
        started: &StartSignal,
    ) -> Result<CompactionResult, SessionOpError> {
        let inner = &self.inner;
        if inner.agent.is_streaming() || lock(&inner.retry_cancel).is_some() {
            started.fire();
        }
        // A threshold or overflow compaction still summarizing is cancelled, and has ended,
        // before this one starts (pi 0.84.0: the two raced).
        self.cancel_auto_compaction().await;
        self.abort().await;
        let cancel = CancellationToken::new();
        *lock(&inner.compaction_cancel) = Some(cancel.clone());
        inner.emit_session(SessionOnlyEvent::CompactionStart {
            reason: CompactionReason::Manual,
        });
        started.fire();
        let mut from_extension = false;
        let outcome = self
            .compact_now(
                custom_instructions,
                CompactionReason::Manual,
                false,
                &mut from_extension,
                cancel,
            )
            .await;
        *lock(&inner.compaction_cancel) = None;
        let (result, aborted, error) = match outcome {
            Ok(result) => (Some(result), false, None),
            Err(CompactionRun::Skipped) => {
                let last_is_compaction = {
                    let session = lock(&inner.session);
                    session
                        .branch_entries()
                        .last()
                        .is_some_and(|e| matches!(e.kind, EntryKind::Compaction { .. }))
                };
                let text = if last_is_compaction {
                    "Already compacted"
                } else {
                    "Nothing to compact (session too small)"
                };
                (None, false, Some(text.to_owned()))
            }
            Err(CompactionRun::Failed(CompactionError::Aborted)) => {
                (None, true, Some("Compaction cancelled".to_owned()))
            }
            Err(CompactionRun::Failed(error)) => (None, false, Some(error.to_string())),
        };
        let error_message = match (&error, aborted) {
            (Some(text), false) => Some(format!("Compaction failed: {text}")),
            _ => None,
        };
        inner.emit_session(SessionOnlyEvent::CompactionEnd {
            reason: CompactionReason::Manual,
            result: result.clone(),
            aborted,
            will_retry: false,
            error_message: error_message.clone(),
        });
        if result.is_none() {
            self.emit_compact_failed(
                CompactionReason::Manual,
                error_message,
                aborted,
                from_extension,
            )
            .await;
        }
        match (result, error) {
            (Some(result), _) => Ok(result),
            (None, error) => Err(SessionOpError::new(
                error.unwrap_or_else(|| "Compaction failed".into()),
            )),
        }
    }

    /// Cancels a running compaction (manual or automatic).
    pub fn abort_compaction(&self) {
        for slot in [
            &self.inner.compaction_cancel,
            &self.inner.auto_compaction_cancel,
        ] {
            if let Some(cancel) = lock(slot).as_ref() {
                cancel.cancel();
            }
        }
    }

    /// Tells extensions a compaction failed or was aborted (`session_compact_failed`, pi
    /// 1.6.0), after its `compaction_end`.
    async fn emit_compact_failed(
        &self,
        reason: CompactionReason,
        error_message: Option<String>,
        aborted: bool,
        from_extension: bool,
    ) {
        let runtime = self.inner.ext.runtime.clone();
        if runtime.has_handlers("session_compact_failed") {
            let event = ExtensionEvent::SessionCompactFailed {
                reason,
                error_message,
                aborted,
                will_retry: false,
                from_extension,
            };
            runtime.emit(&event, CancellationToken::new()).await;
        }
    }

    /// Prepares, summarizes, records the entry and resets the agent's context;
    /// `from_extension` is set once an extension's `session_before_compact` gave the summary.
    async fn compact_now(
        &self,
        custom_instructions: Option<&str>,
        reason: CompactionReason,
        will_retry: bool,
        from_extension: &mut bool,
        cancel: CancellationToken,
    ) -> Result<CompactionResult, CompactionRun> {
        let inner = &self.inner;
        let model = self.model();
        let settings = inner
            .settings
            .get()
            .compaction_settings_for(Some(&model_key(&model)));
        let (preparation, path) = {
            let session = lock(&inner.session);
            let path: Vec<SessionEntry> = session.branch_entries().into_iter().cloned().collect();
            (prepare_compaction(&path, &settings), path)
        };
        // Nothing to compact is said before a missing key (as pi 1.6.0 checks).
        let preparation = preparation.ok_or(CompactionRun::Skipped)?;
        let (model, level, auth) = inner
            .direct_target(model, self.thinking_level(), &cancel)
            .await
            .map_err(|e| CompactionRun::Failed(CompactionError::Summarization(e)))?;
        let runtime = inner.ext.runtime.clone();
        let mut extension_result: Option<(CompactionResult, Option<serde_json::Value>)> = None;
        if runtime.has_handlers("session_before_compact") {
            let event = ExtensionEvent::SessionBeforeCompact {
                preparation: preparation_json(&preparation),
                branch_entries: path
                    .iter()
                    .filter_map(|e| e.to_json().ok().map(serde_json::Value::Object))
                    .collect(),
                custom_instructions: custom_instructions.map(str::to_owned),
                reason,
                will_retry,
            };
            let outcome = runtime.emit_session_before(&event, cancel.clone()).await;
            if outcome.cancel {
                return Err(CompactionRun::Failed(CompactionError::Aborted));
            }
            if let Some(custom) = outcome.result.get("compaction") {
                extension_result = extension_compaction(custom, &preparation);
            }
        }
        let from_hook = extension_result.is_some();
        *from_extension = from_hook;
        let (mut result, details) = match extension_result {
            Some(found) => found,
            None => {
                let result = compact(
                    &preparation,
                    &model,
                    &auth,
                    custom_instructions,
                    Some(level),
                    cancel.clone(),
                    Some(inner.summary_retry(SummarySource::Compaction, Some(reason))),
                )
                .await
                .map_err(CompactionRun::Failed)?;
                let details = serde_json::to_value(&result.details).ok();
                (result, details)
            }
        };
        if cancel.is_cancelled() {
            return Err(CompactionRun::Failed(CompactionError::Aborted));
        }
        let checkpoint = super::system_message::system_checkpoint(&inner.agent);
        let (messages, entry) = {
            let mut session = lock(&inner.session);
            let id = match session.append_compaction(crate::session::NewCompaction {
                summary: &result.summary,
                first_kept_entry_id: &result.first_kept_entry_id,
                tokens_before: result.tokens_before,
                details,
                usage: result.usage.and_then(|u| serde_json::to_value(u).ok()),
                from_hook: Some(from_hook),
                system_message: checkpoint,
            }) {
                Ok(id) => Some(id),
                Err(e) => {
                    eprintln!("Warning: {e}");
                    None
                }
            };
            let entry = id
                .and_then(|id| session.entry(&id).cloned())
                .and_then(|e| e.to_json().ok());
            (session.build_context().messages, entry)
        };
        // pi 1.6 reports how large the context is estimated to be now.
        result.estimated_tokens_after = Some(
            messages
                .iter()
                .map(crate::compaction::estimate_tokens)
                .sum(),
        );
        inner.agent.replace_messages(messages);
        if let Some(entry) = entry
            && runtime.has_handlers("session_compact")
        {
            let event = ExtensionEvent::SessionCompact {
                compaction_entry: serde_json::Value::Object(entry),
                from_extension: from_hook,
                reason,
                will_retry,
            };
            runtime.emit(&event, CancellationToken::new()).await;
        }
        Ok(result)
    }
}

/// The preparation as `session_before_compact` handlers see it.
fn preparation_json(preparation: &crate::compaction::CompactionPreparation) -> serde_json::Value {
    serde_json::json!({
        "firstKeptEntryId": preparation.first_kept_entry_id,
        "messagesToSummarize": preparation.messages_to_summarize,
        "turnPrefixMessages": preparation.turn_prefix_messages,
        "isSplitTurn": preparation.is_split_turn,
        "tokensBefore": preparation.tokens_before,
        "previousSummary": preparation.previous_summary,
        "fileOps": {
            "read": preparation.file_ops.read,
            "written": preparation.file_ops.written,
            "edited": preparation.file_ops.edited,
        },
        "settings": preparation.settings,
    })
}

/// A compaction an extension supplied (`{summary, firstKeptEntryId?, tokensBefore?,
/// details?}`), with its raw details for the entry.
fn extension_compaction(
    value: &serde_json::Value,
    preparation: &crate::compaction::CompactionPreparation,
) -> Option<(CompactionResult, Option<serde_json::Value>)> {
    let summary = value.get("summary")?.as_str()?.to_owned();
    let first_kept_entry_id = value
        .get("firstKeptEntryId")
        .and_then(serde_json::Value::as_str)
        .unwrap_or(&preparation.first_kept_entry_id)
        .to_owned();
    let tokens_before = value
        .get("tokensBefore")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(preparation.tokens_before);
    let details = value.get("details").cloned().filter(|d| !d.is_null());
    let typed = details
        .clone()
        .and_then(|d| serde_json::from_value(d).ok())
        .unwrap_or_default();
    Some((
        CompactionResult {
            summary,
            first_kept_entry_id,
            tokens_before,
            estimated_tokens_after: None,
            usage: value
                .get("usage")
                .and_then(|u| serde_json::from_value(u.clone()).ok()),
            details: typed,
        },
        details,
    ))
}

/// The key of a model in `compaction.modelOverrides`: `provider/modelId`.
fn model_key(model: &pi_ai::Model) -> String {
    format!("{}/{}", model.provider, model.id)
}

/// Why [`AgentSession::compact_now`] made no compaction.
enum CompactionRun {
    /// Nothing to compact.
    Skipped,
    Failed(CompactionError),
}
