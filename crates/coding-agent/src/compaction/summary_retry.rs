//! Summary requests retry transient provider failures as agent turns do (pi 1.x
//! `retryAssistantCall`): the session's `retry` settings, the same retryable errors, and
//! events that say when a retry waits, starts and ends.

use std::sync::Arc;

use crate::retry::RetrySettings;

/// What a retrying summary request reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SummaryRetryEvent {
    /// The request failed and is sent again after `delay_ms`.
    Scheduled {
        attempt: u32,
        max_attempts: u32,
        delay_ms: u64,
        error_message: String,
    },
    /// The retried request starts.
    AttemptStart,
    /// No more retries: the request succeeded, failed for good, or was cancelled.
    Finished,
}

/// How summary requests retry, and where their retry events go.
#[derive(Clone)]
pub struct SummaryRetry {
    pub settings: RetrySettings,
    pub emit: Arc<dyn Fn(SummaryRetryEvent) + Send + Sync>,
}

impl std::fmt::Debug for SummaryRetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SummaryRetry")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl SummaryRetry {
    /// Retries allowed after the first request (none when retries are off).
    pub fn max_attempts(&self) -> u32 {
        if self.settings.enabled {
            self.settings.max_retries
        } else {
            0
        }
    }
}
