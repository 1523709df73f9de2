//! Session events: listeners, emission, and the handling of each agent event (persisting
//! finished messages, dropping delivered queue texts, ending a retry sequence).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use pi_agent_core::{AgentEvent, AgentMessage};

use super::{AgentSession, Inner, SessionListener, lock, user_text};
use crate::compaction::{SummaryRetry, SummaryRetryEvent};
use crate::session_event::{AgentSessionEvent, CompactionReason, SessionOnlyEvent, SummarySource};

impl AgentSession {
    /// Adds a listener for every session event; returns its id.
    pub fn subscribe(&self, listener: impl Fn(&AgentSessionEvent) + Send + Sync + 'static) -> u64 {
        let id = self.inner.next_listener.fetch_add(1, Ordering::SeqCst);
        lock(&self.inner.listeners).push((id, Arc::new(listener)));
        id
    }

    /// Removes a listener.
    pub fn unsubscribe(&self, id: u64) {
        lock(&self.inner.listeners).retain(|(i, _)| *i != id);
    }
}

impl Inner {
    pub(super) fn emit(&self, event: &AgentSessionEvent) {
        let listeners: Vec<SessionListener> = lock(&self.listeners)
            .iter()
            .map(|(_, l)| l.clone())
            .collect();
        for listener in listeners {
            listener(event);
        }
    }

    pub(super) fn emit_session(&self, event: SessionOnlyEvent) {
        self.emit(&AgentSessionEvent::Session(event));
    }

    /// Retries of a summary request for `source` under the session's `retry` settings,
    /// reported as `summarization_retry_*` events while the session lives.
    pub(super) fn summary_retry(
        self: &Arc<Self>,
        source: SummarySource,
        reason: Option<CompactionReason>,
    ) -> SummaryRetry {
        let weak = Arc::downgrade(self);
        SummaryRetry {
            settings: self.settings.get().retry.unwrap_or_default(),
            emit: Arc::new(move |event| {
                let Some(inner) = weak.upgrade() else { return };
                inner.emit_session(match event {
                    SummaryRetryEvent::Scheduled {
                        attempt,
                        max_attempts,
                        delay_ms,
                        error_message,
                    } => SessionOnlyEvent::SummarizationRetryScheduled {
                        attempt,
                        max_attempts,
                        delay_ms,
                        error_message,
                    },
                    SummaryRetryEvent::AttemptStart => {
                        SessionOnlyEvent::SummarizationRetryAttemptStart { source, reason }
                    }
                    SummaryRetryEvent::Finished => SessionOnlyEvent::SummarizationRetryFinished,
                });
            }),
        }
    }

    pub(super) fn emit_queue_update(&self) {
        let (steering, follow_up) = {
            let queued = lock(&self.queued);
            (queued.steering.clone(), queued.follow_up.clone())
        };
        self.emit_session(SessionOnlyEvent::QueueUpdate {
            steering,
            follow_up,
        });
    }

    /// Persists finished messages, keeps the queue texts in step with delivered messages,
    /// and ends a retry sequence when a reply succeeds.
    pub(super) fn on_agent_event(&self, event: &AgentEvent) {
        if let AgentEvent::MessageStart { message } = event
            && let Some(text) = user_text(message)
        {
            {
                self.overflow_recovery_attempted
                    .store(false, Ordering::SeqCst);
                let removed = {
                    let mut queued = lock(&self.queued);
                    let matches = |t: &String| super::queue::is_queued_text(t, &text);
                    if let Some(at) = queued.steering.iter().position(matches) {
                        queued.steering.remove(at);
                        true
                    } else if let Some(at) = queued.follow_up.iter().position(matches) {
                        queued.follow_up.remove(at);
                        true
                    } else {
                        false
                    }
                };
                if removed {
                    self.emit_queue_update();
                }
            }
        }
        match event {
            AgentEvent::AgentStart => self.run_ended.store(false, Ordering::SeqCst),
            AgentEvent::AgentEnd { .. } => {
                let ended = lock(&self.last_assistant).take();
                let will_retry = ended.as_ref().is_some_and(|m| self.retry_follows(m));
                self.will_retry.store(will_retry, Ordering::SeqCst);
                *lock(&self.ended_assistant) = ended;
                self.run_ended.store(true, Ordering::SeqCst);
            }
            _ => {}
        }
        self.emit(&AgentSessionEvent::Agent(event.clone()));
        let AgentEvent::MessageEnd { message } = event else {
            return;
        };
        let stored = match message {
            AgentMessage::Llm(_) => lock(&self.session).append_message(message.clone()),
            AgentMessage::Custom(custom) if custom.role == "system" => {
                lock(&self.session).append_message(message.clone())
            }
            AgentMessage::Custom(custom) if custom.role == "custom" => {
                let get = |key: &str| custom.get(key).cloned();
                lock(&self.session).append_custom_message(
                    custom
                        .get("customType")
                        .and_then(serde_json::Value::as_str)
                        .unwrap_or_default(),
                    get("content").unwrap_or_default(),
                    custom
                        .get("display")
                        .and_then(serde_json::Value::as_bool)
                        .unwrap_or(false),
                    get("details"),
                )
            }
            AgentMessage::Custom(_) => Ok(String::new()),
        };
        if let Err(e) = stored {
            eprintln!("Warning: {e}");
        }
        if let Some(assistant) = message.as_assistant() {
            *lock(&self.last_assistant) = Some(assistant.clone());
            // A reply cut short is a recovery attempt too: a second one must not start
            // another compact-and-retry (pi 1.6.0).
            if !matches!(
                assistant.stop_reason,
                pi_ai::StopReason::Error | pi_ai::StopReason::Length
            ) {
                self.overflow_recovery_attempted
                    .store(false, Ordering::SeqCst);
            }
            if assistant.stop_reason != pi_ai::StopReason::Error {
                let attempt = self.retry_attempt.swap(0, Ordering::SeqCst);
                if attempt > 0 {
                    self.emit_session(SessionOnlyEvent::AutoRetryEnd {
                        success: true,
                        attempt,
                        final_error: None,
                    });
                }
            }
        }
    }
}
