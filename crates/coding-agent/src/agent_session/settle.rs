//! What follows a run: auto-retry of a transient failure, recovery from a context overflow,
//! compaction past the threshold, and finally `agent_settled` (pi 1.5), the last event of
//! a run once nothing more will start on its own.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use pi_ai::StopReason;

use super::{AgentSession, lock, retry};
use crate::session_event::SessionOnlyEvent;

/// Counts a run as active from its start until it settled.
pub(super) struct RunGuard {
    inner: std::sync::Weak<super::Inner>,
    /// The run reported `agent_settled` (counted in `settled_runs` until the guard drops).
    settled: AtomicBool,
}

impl RunGuard {
    /// The run is about to report `agent_settled`: from now on it no longer keeps a prompt
    /// a client sends on seeing that event from settling.
    fn mark_settled(&self) {
        if !self.settled.swap(true, Ordering::SeqCst)
            && let Some(inner) = self.inner.upgrade()
        {
            inner.settled_runs.fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.upgrade() {
            if self.settled.load(Ordering::SeqCst) {
                inner.settled_runs.fetch_sub(1, Ordering::SeqCst);
            }
            inner.active_runs.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

impl AgentSession {
    /// Marks a run as started; it counts until the guard drops (after `settle`).
    pub(super) fn run_guard(&self) -> RunGuard {
        self.inner.active_runs.fetch_add(1, Ordering::SeqCst);
        RunGuard {
            inner: Arc::downgrade(&self.inner),
            settled: AtomicBool::new(false),
        }
    }

    /// Waits (at most `limit`) until every started run settled: an RPC `abort` answers
    /// after the run's `agent_settled`, as pi 1.5 does.
    pub async fn wait_settled(&self, limit: Duration) {
        let deadline = tokio::time::Instant::now() + limit;
        while self.inner.active_runs.load(Ordering::SeqCst) > 0
            && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    /// The flag that is true while the `agent_end` just emitted will be followed by an
    /// auto-retry (pi 1.5's `agent_end.willRetry`).
    pub fn will_retry_flag(&self) -> Arc<AtomicBool> {
        self.inner.will_retry.clone()
    }

    /// Retries, recovers or compacts after a run, repeating while a new run was started;
    /// then reports `agent_settled` (aborted when the last reply was aborted). The run is
    /// marked settled just before, so a prompt an extension handles right after a client saw
    /// that event still gets its own `agent_settled`.
    pub(super) async fn settle(&self, run: &RunGuard) {
        let mut aborted = false;
        let mut outcome = "completed";
        loop {
            self.apply_reprojection();
            let Some(last) = lock(&self.inner.ended_assistant).take() else {
                if self.continue_queued(aborted).await
                    || self.continue_before_settle(aborted, outcome).await
                {
                    continue;
                }
                break;
            };
            aborted = last.stop_reason == StopReason::Aborted;
            outcome = super::boundary::outcome_of(&last);
            if retry::is_retryable_for(
                &last,
                &self
                    .model_for_message(&last)
                    .unwrap_or_else(|| self.model()),
            ) && self.retry_after_failure(&last).await
            {
                if self.inner.agent.continue_run().await.is_err() {
                    break;
                }
                continue;
            }
            self.end_failed_retries(&last);
            if self
                .check_compaction(
                    &last,
                    true,
                    self.inner.compact_after_runs.load(Ordering::SeqCst),
                )
                .await
            {
                if self.inner.agent.continue_run().await.is_err() {
                    break;
                }
                continue;
            }
            if self.continue_queued(aborted).await
                || self.continue_before_settle(aborted, outcome).await
            {
                continue;
            }
            break;
        }
        self.apply_reprojection();
        // Sent with `triggerTurn: false` after the last turn ended (pi 1.6.0's run `finally`);
        // a run an extension asked for meanwhile is pi 1.6.0's continuation: it records them
        // at its first turn's end.
        if self.inner.requested_runs.load(Ordering::SeqCst) == 0 {
            self.inner.flush_pending_custom(false);
        }
        // Extensions hear of it too (queued first, so anything a client does once it saw
        // `agent_settled` reaches them after it); a prompt an extension took without a run
        // does not settle for them (pi 1.6.0 emits nothing then).
        // pi 1.6.0 tells clients once every settled handler finished (a client that ends pi
        // when it sees `agent_settled` does not cut them short); runs the handlers ask for
        // start after that.
        self.inner.ext.settling.open();
        self.emit_extension_event_later(crate::extensions::ExtensionEvent::AgentSettled {
            aborted,
        });
        self.extension_events_settled().await;
        self.inner.cache_warming_settled();
        run.mark_settled();
        self.inner.emit_settled(aborted);
        self.inner.ext.settling.close();
    }

    /// pi 1.6.0: the run's loop drained its queues before `agent_end`, so what is queued now
    /// came from `agent_end` handlers (or a client meanwhile) and runs at once, before the
    /// session settles. False when nothing is queued, the run was aborted, or it could not
    /// continue.
    async fn continue_queued(&self, aborted: bool) -> bool {
        !aborted
            && self.inner.agent.has_queued_messages()
            && self.inner.agent.continue_run().await.is_ok()
    }

    /// pi 1.6.0's `agent_before_settle` (skipped after an abort): true when the run went on.
    async fn continue_before_settle(&self, aborted: bool, outcome: &str) -> bool {
        !aborted
            && self.before_settle_continues(outcome).await
            && self.inner.agent.continue_run().await.is_ok()
    }

    /// After a run whose boundaries appended entries, the agent's transcript becomes the
    /// session's projection again.
    fn apply_reprojection(&self) {
        if self.inner.ext.reproject.swap(false, Ordering::SeqCst) {
            let messages = lock(&self.inner.session).build_context().messages;
            self.inner.agent.replace_messages(messages);
        }
    }

    /// Ends a prompt that an extension command or `input` handler took (issue 36, item 9:
    /// pi 1.6.0 sends no `agent_settled` then, and clients that wait for it hang). Sent
    /// unless a run settled meanwhile, a run is going, or one the extension asked for is
    /// still to come; that run's own `agent_settled` ends the prompt.
    pub(super) fn settle_handled(&self, settled_before: u64) {
        let inner = &self.inner;
        if inner.settled_count.load(Ordering::SeqCst) == settled_before
            && inner.active_runs.load(Ordering::SeqCst) == inner.settled_runs.load(Ordering::SeqCst)
            && inner.requested_runs.load(Ordering::SeqCst) == 0
            && !self.is_streaming()
        {
            inner.emit_settled(false);
        }
    }

    /// Counts a run an extension asked for until the guard drops (see `settle_handled`).
    pub fn run_requested(&self) -> RequestedRun {
        self.inner.requested_runs.fetch_add(1, Ordering::SeqCst);
        RequestedRun(Arc::clone(&self.inner.requested_runs))
    }
}

/// A run an extension asked for, counted while it is to come or going.
pub struct RequestedRun(Arc<AtomicU32>);

impl Drop for RequestedRun {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl super::Inner {
    fn emit_settled(&self, aborted: bool) {
        self.settled_count.fetch_add(1, Ordering::SeqCst);
        self.emit_session(SessionOnlyEvent::AgentSettled { aborted });
    }
}
