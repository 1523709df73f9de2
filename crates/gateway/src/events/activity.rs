//! The hard and idle limits of a run: when the model last produced a token.

use pi_agent_core::AgentEvent;
use pi_coding_agent::session_event::AgentSessionEvent;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::{Limits, TerminationReason};
/// When the model last produced something, for the idle and hard limits of a run.
#[derive(Debug)]
pub struct Activity {
    origin: Instant,
    /// Microseconds since `origin`.
    run_started: AtomicU64,
    last_token: AtomicU64,
    waiting: AtomicBool,
}

impl Default for Activity {
    fn default() -> Self {
        Self {
            origin: Instant::now(),
            run_started: AtomicU64::new(0),
            last_token: AtomicU64::new(0),
            waiting: AtomicBool::new(false),
        }
    }
}

impl Activity {
    fn now(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_micros()).unwrap_or(u64::MAX)
    }

    fn at(&self, micros: u64) -> Instant {
        self.origin + Duration::from_micros(micros)
    }

    /// A run starts: the hard limit counts from now, and the model is awaited.
    pub fn begin_run(&self) {
        let now = self.now();
        self.run_started.store(now, Ordering::SeqCst);
        self.last_token.store(now, Ordering::SeqCst);
        self.waiting.store(true, Ordering::SeqCst);
    }

    /// The run ended.
    pub fn end_run(&self) {
        self.waiting.store(false, Ordering::SeqCst);
    }

    fn touch(&self, waiting: bool) {
        self.last_token.store(self.now(), Ordering::SeqCst);
        self.waiting.store(waiting, Ordering::SeqCst);
    }

    /// Notes model activity: a call starting, a token arriving, a reply ending.
    pub fn observe(&self, event: &AgentSessionEvent) {
        let AgentSessionEvent::Agent(event) = event else {
            return;
        };
        match event {
            AgentEvent::TurnStart | AgentEvent::MessageUpdate { .. } => self.touch(true),
            AgentEvent::MessageStart { message } if message.is_assistant() => self.touch(true),
            AgentEvent::MessageEnd { message } if message.is_assistant() => self.touch(false),
            AgentEvent::AgentEnd { .. } => self.touch(false),
            _ => {}
        }
    }
}

/// Resolves with the limit a run passes: the hard limit from [`Activity::begin_run`], or the
/// idle limit while the model is awaited without producing tokens.
pub async fn watch(limits: Limits, activity: &Activity) -> TerminationReason {
    loop {
        let now = Instant::now();
        let hard = activity
            .at(activity.run_started.load(Ordering::SeqCst))
            .checked_add(limits.hard);
        if hard.is_some_and(|hard| now >= hard) {
            return TerminationReason::Timeout;
        }
        let idle = if activity.waiting.load(Ordering::SeqCst) {
            let deadline = activity
                .at(activity.last_token.load(Ordering::SeqCst))
                .checked_add(limits.idle);
            if deadline.is_some_and(|d| now >= d) {
                return TerminationReason::IdleTimeout;
            }
            deadline
        } else {
            now.checked_add(limits.idle)
        };
        let next = match (hard, idle) {
            (Some(h), Some(i)) => h.min(i),
            (Some(h), None) => h,
            (None, Some(i)) => i,
            (None, None) => now + Duration::from_secs(3600),
        };
        tokio::time::sleep_until(tokio::time::Instant::from_std(next)).await;
    }
}
