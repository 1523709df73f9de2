//! Auto-retry (seed 002 §5.8, pi 1.6's agent-session): a transient failure is announced
//! (`auto_retry_start`), dropped from the agent's context (the session file keeps it), pi
//! sleeps `baseDelayMs × 2^(n-1)` — cancellable by abort — and continues; after
//! `maxRetries` the failure stands and `auto_retry_end` reports it.

use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use pi_ai::{AssistantMessage, Model, StopReason};

use super::{AgentSession, Inner, lock};
use crate::retry::is_retryable;
use crate::session_event::SessionOnlyEvent;

/// Whether `message` is a transient failure for the model in use.
pub(super) fn is_retryable_for(message: &AssistantMessage, model: &Model) -> bool {
    is_retryable(message, model.context_window)
}

impl Inner {
    /// Whether `settle` will retry after a run that ended with `message` (checked at its
    /// `agent_end`, before the retry starts).
    pub(super) fn retry_follows(&self, message: &AssistantMessage) -> bool {
        let settings = self.settings.get().retry.unwrap_or_default();
        settings.enabled
            && self.retry_attempt.load(Ordering::SeqCst) < settings.max_retries
            && is_retryable_for(message, &self.agent.model())
    }
}

impl AgentSession {
    /// Announces and waits out one retry of a retryable failure (pi 1.6's `_prepareRetry`);
    /// `true` when the caller should continue the run. `false` when retries are off,
    /// spent (the attempt count stays for [`Self::end_failed_retries`]) or cancelled.
    pub(super) async fn retry_after_failure(&self, failed: &AssistantMessage) -> bool {
        let inner = &self.inner;
        let settings = inner.settings.get().retry.unwrap_or_default();
        if !settings.enabled {
            return false;
        }
        let attempt = inner.retry_attempt.load(Ordering::SeqCst) + 1;
        if attempt > settings.max_retries {
            return false;
        }
        inner.retry_attempt.store(attempt, Ordering::SeqCst);
        let delay_ms = settings.delay_ms(attempt);
        let cancel = CancellationToken::new();
        *lock(&inner.retry_cancel) = Some(cancel.clone());
        inner.emit_session(SessionOnlyEvent::AutoRetryStart {
            attempt,
            max_attempts: settings.max_retries,
            delay_ms,
            error_message: failed
                .error_message
                .clone()
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| "Unknown error".into()),
        });
        inner.drop_failed_reply();
        *lock(&inner.failed_response) = Some(failed.clone());
        inner.agent.update_messages(|messages| {
            if messages.last().is_some_and(|m| m.is_assistant()) {
                messages.pop();
            }
        });
        let slept = tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(delay_ms)) => true,
            _ = cancel.cancelled() => false,
        };
        if !slept {
            let attempt = inner.retry_attempt.swap(0, Ordering::SeqCst);
            inner.emit_session(SessionOnlyEvent::AutoRetryEnd {
                success: false,
                attempt,
                final_error: Some("Retry cancelled".into()),
            });
        }
        *lock(&inner.retry_cancel) = None;
        slept
    }

    /// After retries, a run that still ended in an error (the last retry failed, or failed
    /// in a way not worth retrying) reports `auto_retry_end` with that error, once.
    pub(super) fn end_failed_retries(&self, last: &AssistantMessage) {
        if last.stop_reason != StopReason::Error {
            return;
        }
        let attempt = self.inner.retry_attempt.swap(0, Ordering::SeqCst);
        if attempt > 0 {
            self.inner.emit_session(SessionOnlyEvent::AutoRetryEnd {
                success: false,
                attempt,
                final_error: last.error_message.clone(),
            });
        }
    }

    /// Cancels a retry sleep in progress.
    pub fn abort_retry(&self) {
        if let Some(cancel) = lock(&self.inner.retry_cancel).as_ref() {
            cancel.cancel();
        }
    }

    /// Cancels a retry sleep and waits (briefly) until its end is reported.
    pub(super) async fn abort_retry_and_wait(&self) {
        self.abort_retry();
        for _ in 0..500 {
            if lock(&self.inner.retry_cancel).is_none() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }
}
