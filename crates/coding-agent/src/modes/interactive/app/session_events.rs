//! Session events and finished background operations, applied to the view.

use pi_agent_core::{AgentEvent, AgentMessage};
use pi_tui::components::loader::Loader;

use super::{App, Completion, Status};
use crate::modes::interactive::chat::NoticeKind;
use crate::modes::interactive::theme::ThemeColor;
use crate::session_event::{AgentSessionEvent, CompactionReason, SessionOnlyEvent};

impl App {
    fn loader(&self, message: &str) -> Loader {
        Loader::new(
            message,
            self.theme.fg(ThemeColor::Accent),
            self.theme.fg(ThemeColor::Muted),
        )
    }

    pub(super) fn on_session_event(&mut self, event: AgentSessionEvent) {
        self.report_program_status(&event);
        match event {
            AgentSessionEvent::Agent(event) => self.on_agent_event(event),
            AgentSessionEvent::Session(event) => self.on_session_only(event),
        }
    }

    fn on_agent_event(&mut self, event: AgentEvent) {
        if !matches!(event, AgentEvent::MessageUpdate { .. }) {
            self.footer_dirty = true;
        }
        match event {
            AgentEvent::AgentStart => {
                let message = self.working_message();
                self.status = Status::Working(self.loader(&message));
                self.apply_working_settings();
            }
            AgentEvent::AgentEnd { .. } => {
                if matches!(self.status, Status::Working(_)) {
                    self.status = Status::Idle;
                }
                self.chat.end_run();
                if self.ext.shutdown_requested {
                    self.quit = Some(0);
                }
            }
            AgentEvent::MessageStart { message } => match &message {
                AgentMessage::Llm(pi_ai::Message::Assistant(a)) => self.chat.start_assistant(a),
                AgentMessage::Llm(pi_ai::Message::ToolResult(_)) => {}
                other => self.chat.add_message(other),
            },
            AgentEvent::MessageUpdate { message, .. } => self.chat.update_assistant(&message),
            AgentEvent::MessageEnd { message } => {
                if let AgentMessage::Llm(pi_ai::Message::Assistant(a)) = &message {
                    self.chat.end_assistant(a);
                }
            }
            // A script's calls show only in the codemode row, as pi 1.6 draws them.
            AgentEvent::ToolExecutionStart {
                parent_tool_call_id: Some(_),
                ..
            }
            | AgentEvent::ToolExecutionUpdate {
                parent_tool_call_id: Some(_),
                ..
            }
            | AgentEvent::ToolExecutionEnd {
                parent_tool_call_id: Some(_),
                ..
            } => {}
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                args,
                ..
            } => self.chat.tool_started(&tool_call_id, &tool_name, &args),
            AgentEvent::ToolExecutionUpdate {
                tool_call_id,
                partial_result,
                ..
            } => self.chat.tool_updated(&tool_call_id, &partial_result),
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                result,
                is_error,
                ..
            } => self.chat.tool_ended(&tool_call_id, &result, is_error),
            AgentEvent::TurnStart | AgentEvent::TurnEnd { .. } => {}
        }
    }

    fn on_session_only(&mut self, event: SessionOnlyEvent) {
        self.footer_dirty = true;
        match event {
            SessionOnlyEvent::QueueUpdate {
                steering,
                follow_up,
            } => {
                self.steering = steering;
                self.follow_up = follow_up;
            }
            SessionOnlyEvent::CompactionStart { reason } => {
                let cancel = format!("({} to cancel)", self.key_text("app.interrupt"));
                let label = match reason {
                    CompactionReason::Manual => format!("Compacting context... {cancel}"),
                    CompactionReason::Overflow => {
                        format!("Context overflow detected, Auto-compacting... {cancel}")
                    }
                    CompactionReason::Threshold => format!("Auto-compacting... {cancel}"),
                };
                self.status = Status::Compacting(self.loader(&label));
            }
            SessionOnlyEvent::CompactionEnd {
                result,
                aborted,
                error_message,
                will_retry,
                ..
            } => {
                self.status = if self.session.is_streaming() || will_retry {
                    Status::Working(self.loader(&self.working_message()))
                } else {
                    Status::Idle
                };
                self.apply_working_settings();
                if aborted {
                    self.notice(NoticeKind::Error, "Compaction cancelled");
                } else if let Some(error) = error_message {
                    self.notice(NoticeKind::Error, &format!("Compaction failed: {error}"));
                } else if result.is_some() {
                    self.reload_history();
                }
                self.flush_after_compaction();
            }
            SessionOnlyEvent::SummarizationRetryScheduled {
                attempt,
                max_attempts,
                delay_ms,
                error_message,
            } => {
                let seconds = delay_ms.div_ceil(1000);
                self.notice(
                    NoticeKind::Warning,
                    &format!(
                        "Summary request failed, retrying ({attempt}/{max_attempts}) in {seconds}s: {error_message}"
                    ),
                );
            }
            // The compaction's or branch summary's own indicator stays up meanwhile.
            SessionOnlyEvent::SummarizationRetryAttemptStart { .. }
            | SessionOnlyEvent::SummarizationRetryFinished => {}
            SessionOnlyEvent::AutoRetryStart {
                attempt,
                max_attempts,
                delay_ms,
                error_message,
            } => {
                let seconds = delay_ms.div_ceil(1000);
                let label = format!(
                    "Retrying ({attempt}/{max_attempts}) in {seconds}s... ({} to cancel)",
                    self.key_text("app.interrupt")
                );
                self.notice(NoticeKind::Warning, &error_message);
                self.status = Status::Retrying(self.loader(&label));
            }
            SessionOnlyEvent::AutoRetryEnd {
                success,
                final_error,
                ..
            } => {
                if matches!(self.status, Status::Retrying(_)) {
                    self.status = Status::Idle;
                }
                if !success && let Some(error) = final_error {
                    self.notice(NoticeKind::Error, &format!("Retry failed: {error}"));
                }
            }
            SessionOnlyEvent::EntryAppended { entry } => {
                if entry.get("type").and_then(|t| t.as_str()) == Some("custom") {
                    self.chat.add_custom_entry(&entry);
                }
            }
            SessionOnlyEvent::SessionInfoChanged { .. } | SessionOnlyEvent::AgentSettled { .. } => {
            }
            SessionOnlyEvent::ThinkingLevelChanged { .. } => self.update_editor_border(),
        }
    }

    fn flush_after_compaction(&mut self) {
        for text in std::mem::take(&mut self.after_compaction) {
            let session = self.session.clone();
            let tx = self.tx.clone();
            tokio::spawn(async move {
                let options = crate::agent_session::PromptOptions {
                    streaming_behavior: Some(crate::agent_session::StreamingBehavior::FollowUp),
                    ..Default::default()
                };
                if let Err(e) = session.prompt(&text, options, None).await {
                    let _ = tx.send(crate::modes::interactive::AppEvent::Done(
                        Completion::PromptFailed(e.0),
                    ));
                }
            });
        }
    }

    pub(super) fn on_completion(&mut self, done: Completion) {
        self.footer_dirty = true;
        match done {
            Completion::PromptFailed(error) => self.notice(NoticeKind::Error, &error),
            Completion::Notice(kind, text) => self.notice(kind, &text),
            Completion::Share(id, event) => self.on_share_event(id, event),
            Completion::Bug(id, event) => self.on_bug_event(id, event),
            Completion::LocalLlm(event) => self.on_local_llm(event),
            Completion::Compacted(Err(error)) => {
                if !error.contains("Already compacted") || self.status_is_idle() {
                    self.notice(NoticeKind::Error, &error);
                }
            }
            Completion::Compacted(Ok(())) => {}
            Completion::Navigated(Ok(result)) => {
                if result.aborted {
                    self.notice(NoticeKind::Info, "Branch summarization cancelled");
                    return;
                }
                if result.cancelled {
                    return;
                }
                self.reload_history();
                if let Some(text) = result.editor_text {
                    self.set_editor_text(&text);
                }
                self.notice(NoticeKind::Info, "Navigated to selected point");
            }
            Completion::Forked(Ok(result)) => {
                if result.cancelled {
                    return;
                }
                self.reload_history();
                if let Some(text) = result.text {
                    self.set_editor_text(&text);
                }
                self.notice(NoticeKind::Info, "Branched to new session");
            }
            Completion::Replaced(Ok(notice)) => {
                self.steering.clear();
                self.follow_up.clear();
                self.reset_program_status();
                self.reload_history();
                if let Some(notice) = notice {
                    self.chat.add_success(&notice);
                }
                self.update_editor_border();
            }
            Completion::Switched(Ok(status)) => {
                self.steering.clear();
                self.follow_up.clear();
                self.reload_history();
                self.update_editor_border();
                self.notice(NoticeKind::Info, &status);
            }
            Completion::Switched(Err(error)) if error.ends_with(" cancelled") => {
                self.notice(NoticeKind::Info, &error);
            }
            Completion::Switched(Err(error)) => self.notice(NoticeKind::Error, &error),
            Completion::Navigated(Err(error))
            | Completion::Forked(Err(error))
            | Completion::Replaced(Err(error)) => self.notice(NoticeKind::Error, &error),
            Completion::BashChunk(chunk) => self.chat.bash_output(&chunk),
            Completion::BashDone(result) => self.chat.end_bash(result),
        }
    }

    fn status_is_idle(&self) -> bool {
        matches!(self.status, Status::Idle)
    }
}
