//! Moving between sessions and within one: new session, switch, fork, clone, tree
//! navigation with branch summaries, and the session name. Refused while a compaction runs.

use std::path::Path;

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use pi_agent_core::AgentMessage;
use pi_ai::ThinkingLevel;

use super::{AgentSession, SessionOpError, lock, user_text};
use crate::compaction::{
    BranchSummaryError, GenerateBranchSummaryOptions, collect_entries_for_branch_summary,
    generate_branch_summary,
};
use crate::session::{EntryKind, SessionManager};
use crate::session_event::{SessionOnlyEvent, SummarySource};

/// What `fork` did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ForkResult {
    /// The text of the user message forked from (to edit and resend).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    pub cancelled: bool,
}

/// Options of [`AgentSession::navigate_tree`].
#[derive(Debug, Clone, Default)]
pub struct NavigateOptions {
    /// Summarize the branch being left.
    pub summarize: bool,
    pub custom_instructions: Option<String>,
    /// The custom instructions replace the default summary prompt.
    pub replace_instructions: bool,
    /// A label for the summary (or the target when there is no summary).
    pub label: Option<String>,
}

/// What tree navigation did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NavigateResult {
    /// The text of a user message navigated to (it goes back to the editor).
    pub editor_text: Option<String>,
    pub cancelled: bool,
    pub aborted: bool,
    /// Id of the `branch_summary` entry written.
    pub summary_entry_id: Option<String>,
}

impl AgentSession {
    fn refuse_while_compacting(&self) -> Result<(), SessionOpError> {
        if self.is_compacting() {
            return Err(SessionOpError::new(
                "Cannot change the session while a compaction is running",
            ));
        }
        Ok(())
    }

    /// Starts a new, empty session in the same directory (optionally naming a parent
    /// session), keeping the model and thinking level; keys and `models.json` are read
    /// again, and a session without a model takes one if there now is one.
    pub async fn new_session(&self, parent_session: Option<String>) -> Result<(), SessionOpError> {
        self.refuse_while_compacting()?;
        self.abort().await;
        self.reload_models_for_new_session();
        let mut session = lock(&self.inner.session);
        session.new_session(parent_session);
        let model = self.model();
        let level = self.thinking_level();
        let recorded = if crate::auth_guidance::is_unknown_model(&model) {
            session.append_thinking_level_change(level.as_str())
        } else {
            session
                .append_model_change(&model.provider, &model.id)
                .and_then(|_| session.append_thinking_level_change(level.as_str()))
        };
        if let Err(e) = recorded {
            eprintln!("Warning: {e}");
        }
        drop(session);
        self.reset_runtime(Vec::new());
        Ok(())
    }

    /// Opens another session file and continues it (model and thinking level restored
    /// from it where possible).
    pub async fn switch_session(&self, path: &Path) -> Result<(), SessionOpError> {
        self.switch_session_into(path, false).await
    }

    /// [`Self::switch_session`]; with `missing_cwd_ok` a session whose folder is gone is
    /// opened too and runs in this folder (the file keeps its own, so pi asks again next
    /// time).
    pub async fn switch_session_into(
        &self,
        path: &Path,
        missing_cwd_ok: bool,
    ) -> Result<(), SessionOpError> {
        self.refuse_while_compacting()?;
        let opened = SessionManager::open(path, self.cwd())
            .map_err(|e| SessionOpError::new(e.to_string()))?;
        if !missing_cwd_ok && !Path::new(opened.cwd()).is_dir() {
            return Err(SessionOpError::new(format!(
                "The session's working directory no longer exists: {}",
                opened.cwd()
            )));
        }
        self.abort().await;
        *lock(&self.inner.session) = opened;
        self.restore_from_session();
        self.restore_session_tools();
        Ok(())
    }

    /// Forks from a user message: a new session holding the path before it; returns the
    /// message's text.
    pub async fn fork(&self, entry_id: &str) -> Result<ForkResult, SessionOpError> {
        let (target, text) = {
            let session = lock(&self.inner.session);
            let entry = session
                .entry(entry_id)
                .ok_or_else(|| SessionOpError::new("Invalid entry ID for forking"))?;
            let text = match &entry.kind {
                EntryKind::Message { message } => user_text(message),
                _ => None,
            }
            .ok_or_else(|| SessionOpError::new("Invalid entry ID for forking"))?;
            (entry.parent_id.clone(), text)
        };
        self.branch_into_new_session(target.as_deref()).await?;
        Ok(ForkResult {
            text: Some(text),
            cancelled: false,
        })
    }

    /// Copies the current branch into a new session.
    pub async fn clone_session(&self) -> Result<(), SessionOpError> {
        let leaf = lock(&self.inner.session).leaf_id().map(str::to_owned);
        let Some(leaf) = leaf else {
            return Err(SessionOpError::new(
                "Cannot clone session: no current entry selected",
            ));
        };
        self.branch_into_new_session(Some(&leaf)).await
    }

    pub(super) async fn branch_into_new_session(
        &self,
        leaf: Option<&str>,
    ) -> Result<(), SessionOpError> {
        self.refuse_while_compacting()?;
        // A file session is written from its first message on; before that there is
        // nothing to copy from (pi 0.80.9). Checked before the run is aborted.
        let unsaved = lock(&self.inner.session)
            .session_file()
            .is_some_and(|file| !file.exists());
        if leaf.is_some() && unsaved {
            return Err(SessionOpError::new(
                "This session has not been saved yet. Send a message before cloning or forking it.",
            ));
        }
        self.abort().await;
        // The stopped run reports its end (`agent_end`, `agent_settled`) before the session
        // is replaced and the caller answered (bounded: a fork asked for from inside a run
        // cannot wait for that run).
        self.wait_settled(std::time::Duration::from_secs(2)).await;
        {
            let mut session = lock(&self.inner.session);
            match leaf {
                Some(leaf) => session
                    .create_branched_session(leaf)
                    .map_err(|e| SessionOpError::new(e.to_string()))?,
                None => {
                    let parent = session
                        .session_file()
                        .map(|p| p.to_string_lossy().into_owned());
                    session.new_session(parent);
                }
            }
        }
        self.restore_from_session();
        self.restore_session_tools();
        Ok(())
    }

    /// Moves the leaf to `target` in the same file; optionally summarizes the branch left
    /// behind as a `branch_summary` entry at the new position.
    pub async fn navigate_tree(
        &self,
        target: &str,
        options: NavigateOptions,
    ) -> Result<NavigateResult, SessionOpError> {
        // A prompt and a navigation never overlap (pi 1.5.1): each would install its own
        // conversation.
        if self.is_streaming()
            || self
                .inner
                .ext
                .starting
                .load(std::sync::atomic::Ordering::SeqCst)
                > 0
        {
            return Err(SessionOpError::new(
                "Wait for the current response to finish before navigating the session tree.",
            ));
        }
        if self.is_compacting() {
            return Err(SessionOpError::new(
                "Wait for the current compaction or tree navigation to finish before navigating the session tree.",
            ));
        }
        let (target_entry, to_summarize) = {
            let session = lock(&self.inner.session);
            let old_leaf = session.leaf_id().map(str::to_owned);
            if old_leaf.as_deref() == Some(target) {
                return Ok(NavigateResult::default());
            }
            let entry = session
                .entry(target)
                .cloned()
                .ok_or_else(|| SessionOpError::new(format!("Entry {target} not found")))?;
            let collected = (
                collect_entries_for_branch_summary(session.entries(), old_leaf.as_deref(), target)
                    .entries,
                old_leaf.clone(),
            );
            (entry, collected)
        };
        let (target_entry, to_summarize, old_leaf) = (target_entry, to_summarize.0, to_summarize.1);
        let mut options = options;
        let mut summary: Option<(String, serde_json::Value, Option<serde_json::Value>)> = None;
        let mut from_extension = false;
        let runtime = self.inner.ext.runtime.clone();
        if runtime.has_handlers("session_before_tree") {
            let preparation = serde_json::json!({
                "targetId": target,
                "oldLeafId": old_leaf,
                "commonAncestorId": serde_json::Value::Null,
                "entriesToSummarize": to_summarize.iter().filter_map(|e| e.to_json().ok().map(serde_json::Value::Object)).collect::<Vec<_>>(),
                "userWantsSummary": options.summarize,
                "customInstructions": options.custom_instructions,
                "replaceInstructions": options.replace_instructions,
                "label": options.label,
            });
            let event = crate::extensions::ExtensionEvent::SessionBeforeTree { preparation };
            let outcome = runtime
                .emit_session_before(&event, CancellationToken::new())
                .await;
            if outcome.cancel {
                return Ok(NavigateResult {
                    cancelled: true,
                    ..NavigateResult::default()
                });
            }
            let answer = &outcome.result;
            if let Some(text) = answer
                .get("summary")
                .and_then(|s| s.get("summary"))
                .and_then(serde_json::Value::as_str)
                && options.summarize
            {
                let details = answer
                    .get("summary")
                    .and_then(|s| s.get("details"))
                    .cloned()
                    .unwrap_or(serde_json::Value::Null);
                // An extension's summary may say what it cost (pi 1.6).
                let usage = answer
                    .get("summary")
                    .and_then(|s| s.get("usage"))
                    .filter(|u| u.is_object())
                    .cloned();
                summary = Some((text.to_owned(), details, usage));
                from_extension = true;
            }
            if let Some(text) = answer
                .get("customInstructions")
                .and_then(serde_json::Value::as_str)
            {
                options.custom_instructions = Some(text.to_owned());
            }
            if let Some(flag) = answer
                .get("replaceInstructions")
                .and_then(serde_json::Value::as_bool)
            {
                options.replace_instructions = flag;
            }
            if let Some(label) = answer.get("label").and_then(serde_json::Value::as_str) {
                options.label = Some(label.to_owned());
            }
        }
        if summary.is_none() && options.summarize && !to_summarize.is_empty() {
            let cancel = CancellationToken::new();
            *lock(&self.inner.branch_summary_cancel) = Some(cancel.clone());
            let (model, level, auth) = self
                .inner
                .direct_target(self.model(), self.thinking_level(), &cancel)
                .await
                .map_err(SessionOpError::new)?;
            let reserve_tokens = self
                .inner
                .settings
                .get()
                .branch_summary
                .unwrap_or_default()
                .reserve_tokens;
            let generated = generate_branch_summary(
                &to_summarize,
                &GenerateBranchSummaryOptions {
                    model: &model,
                    auth: &auth,
                    custom_instructions: options.custom_instructions.as_deref(),
                    replace_instructions: options.replace_instructions,
                    reserve_tokens,
                    cancel,
                    thinking_level: Some(level),
                    retry: Some(self.inner.summary_retry(SummarySource::BranchSummary, None)),
                },
            )
            .await;
            *lock(&self.inner.branch_summary_cancel) = None;
            match generated {
                Ok(result) => {
                    let details = serde_json::json!({
                        "readFiles": result.read_files,
                        "modifiedFiles": result.modified_files,
                    });
                    let usage = result.usage.and_then(|u| serde_json::to_value(u).ok());
                    summary = Some((result.summary, details, usage));
                }
                Err(BranchSummaryError::Aborted) => {
                    return Ok(NavigateResult {
                        cancelled: true,
                        aborted: true,
                        ..NavigateResult::default()
                    });
                }
                Err(error) => return Err(SessionOpError::new(error.to_string())),
            }
        }
        let (new_leaf, editor_text) = match &target_entry.kind {
            EntryKind::Message { message } if user_text(message).is_some() => {
                (target_entry.parent_id.clone(), user_text(message))
            }
            EntryKind::CustomMessage { content, .. } => {
                let text = match content {
                    serde_json::Value::String(text) => text.clone(),
                    serde_json::Value::Array(blocks) => blocks
                        .iter()
                        .filter(|b| b.get("type").and_then(|t| t.as_str()) == Some("text"))
                        .filter_map(|b| b.get("text").and_then(|t| t.as_str()))
                        .collect(),
                    _ => String::new(),
                };
                (target_entry.parent_id.clone(), Some(text))
            }
            _ => (Some(target_entry.id.clone()), None),
        };
        let mut summary_entry_id = None;
        let messages = {
            let mut session = lock(&self.inner.session);
            let written = match summary {
                Some((text, details, usage)) => session
                    .branch_with_summary(
                        new_leaf.as_deref(),
                        &text,
                        Some(details),
                        usage,
                        from_extension.then_some(true),
                    )
                    .map(|id| {
                        summary_entry_id = Some(id.clone());
                        if let Some(label) = &options.label {
                            let _ = session.append_label(&id, Some(label));
                        }
                    }),
                None => {
                    let moved = match &new_leaf {
                        Some(id) => session.branch(id),
                        None => {
                            session.reset_leaf();
                            Ok(())
                        }
                    };
                    moved.and_then(|()| match &options.label {
                        Some(label) => session.append_label(target, Some(label)).map(|_| ()),
                        None => Ok(()),
                    })
                }
            };
            written.map_err(|e| SessionOpError::new(e.to_string()))?;
            session.build_context().messages
        };
        self.inner.agent.replace_messages(messages);
        // The branch moved to keeps the tools it recorded (pi 1.6.0).
        self.restore_tools_from_transcript(&crate::tool_selection::ToolEdits::default());
        if runtime.has_handlers("session_tree") {
            let (new_leaf_id, summary_entry) = {
                let session = lock(&self.inner.session);
                (
                    session.leaf_id().map(str::to_owned),
                    summary_entry_id
                        .as_deref()
                        .and_then(|id| session.entry(id))
                        .and_then(|e| e.to_json().ok())
                        .map(serde_json::Value::Object),
                )
            };
            let event = crate::extensions::ExtensionEvent::SessionTree {
                new_leaf_id,
                old_leaf_id: old_leaf,
                summary_entry,
                from_extension: summary_entry_id.as_ref().map(|_| from_extension),
            };
            runtime.emit(&event, CancellationToken::new()).await;
        }
        Ok(NavigateResult {
            editor_text,
            cancelled: false,
            aborted: false,
            summary_entry_id,
        })
    }

    /// Cancels a running branch summary.
    pub fn abort_branch_summary(&self) {
        if let Some(cancel) = lock(&self.inner.branch_summary_cancel).as_ref() {
            cancel.cancel();
        }
    }

    /// Names the session (a `session_info` entry) and announces it.
    /// Labels an entry of the session (`/tree`'s label editor); `None` removes the label.
    pub fn set_entry_label(
        &self,
        entry_id: &str,
        label: Option<&str>,
    ) -> Result<(), SessionOpError> {
        lock(&self.inner.session)
            .append_label(entry_id, label)
            .map(|_| ())
            .map_err(|e| SessionOpError::new(e.to_string()))
    }

    pub fn set_session_name(&self, name: &str) -> Result<(), SessionOpError> {
        let name = {
            let mut session = lock(&self.inner.session);
            session
                .append_session_info(name)
                .map_err(|e| SessionOpError::new(e.to_string()))?;
            session.name().map(str::to_owned)
        };
        self.inner
            .emit_session(SessionOnlyEvent::SessionInfoChanged { name: name.clone() });
        self.emit_extension_event_later(crate::extensions::ExtensionEvent::SessionInfoChanged {
            name,
        });
        Ok(())
    }

    /// The user messages of the session (entry id and text), to fork from.
    pub fn user_messages_for_forking(&self) -> Vec<(String, String)> {
        lock(&self.inner.session)
            .entries()
            .iter()
            .filter_map(|e| match &e.kind {
                EntryKind::Message { message } => user_text(message)
                    .filter(|t| !t.is_empty())
                    .map(|t| (e.id.clone(), t)),
                _ => None,
            })
            .collect()
    }

    /// After the session manager changed files: messages, model and thinking level from
    /// the session, queues and pending state cleared.
    fn restore_from_session(&self) {
        let inner = &self.inner;
        let (context, has_thinking_entry) = {
            let session = lock(&inner.session);
            let branch = session.branch_entries();
            let has_thinking = branch
                .iter()
                .any(|e| matches!(e.kind, EntryKind::ThinkingLevelChange { .. }));
            let registry = inner.registry.current();
            let mut context = session.build_context();
            context.model = crate::virtual_models::branch_selection(&branch, |p, i| {
                registry.find(p, i).cloned()
            })
            .or(context.model);
            (context, has_thinking)
        };
        if let Some((provider, id)) = &context.model {
            let restored = inner.registry.current().find(provider, id).cloned();
            if let Some(model) = restored.filter(|m| inner.request_auth(m).is_ok()) {
                let auth = inner.request_auth(&model).unwrap_or_default();
                let mut options = inner.agent.stream_options();
                options.api_key = auth.api_key;
                options.headers = auth.headers;
                options.env = auth.env;
                inner.agent.set_stream_options(options);
                inner.agent.set_model(model);
            }
        }
        let model = self.model();
        let level = if has_thinking_entry {
            ThinkingLevel::parse(&context.thinking_level)
        } else {
            inner
                .settings
                .get()
                .default_thinking_level
                .as_deref()
                .and_then(ThinkingLevel::parse)
        }
        .unwrap_or_default();
        let level = pi_ai::clamp_thinking_level(&model, level);
        inner.agent.set_thinking_level(level);
        {
            let mut session = lock(&inner.session);
            let result = if context.messages.is_empty() && session.entries().is_empty() {
                session
                    .append_model_change(&model.provider, &model.id)
                    .and_then(|_| session.append_thinking_level_change(level.as_str()))
                    .map(|_| ())
            } else if !has_thinking_entry {
                session
                    .append_thinking_level_change(level.as_str())
                    .map(|_| ())
            } else {
                Ok(())
            };
            if let Err(e) = result {
                eprintln!("Warning: {e}");
            }
        }
        self.reset_runtime(context.messages);
    }

    /// Clears the runtime state of the previous session and installs `messages`.
    fn reset_runtime(&self, messages: Vec<AgentMessage>) {
        self.stop_cache_warming();
        let inner = &self.inner;
        // Requests name the session they belong to (prompt cache key, session headers), as
        // pi 1.6.0's agent does with its `sessionId`.
        let mut options = inner.agent.stream_options();
        options.session_id = Some(lock(&inner.session).session_id().to_owned());
        inner.agent.set_stream_options(options);
        // Callers abort the run first; one still going keeps its transcript and the
        // messages are installed over it.
        if let Err(error) = inner.agent.reset() {
            eprintln!("Warning: {error}");
        }
        inner.agent.replace_messages(messages);
        *lock(&inner.queued) = Default::default();
        lock(&inner.pending_bash).clear();
        *lock(&inner.last_assistant) = None;
        *lock(&inner.ended_assistant) = None;
        inner
            .retry_attempt
            .store(0, std::sync::atomic::Ordering::SeqCst);
    }
}
