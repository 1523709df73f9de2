//! Prompt cache warming (pi 1.6.0's `cacheWarming`): after each request of the session,
//! a timer re-sends that request with a one-token output cap shortly before the model's
//! cache entry would expire, while the transcript still extends it and the expected saving
//! is worth the price. `"streaming"` warms during runs only; `"idle"` (the default) also
//! for up to 30 minutes after a run settles; `"off"` never. Each refresh is recorded as a
//! `usage` entry of kind `cache_warm` and announced (`entry_appended`); extensions may
//! overrule each decision (`cache_warming_decision`).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use pi_agent_core::{AgentMessage, StreamFn};
use pi_ai::cache_warming::{self, Decision, Phase};
use pi_ai::{CacheRetention, Context, Model, SimpleStreamOptions, StopReason};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{AgentSession, Inner, lock};
use crate::extensions::ExtensionEvent;
use crate::session::EntryKind;

/// The `cacheWarming` setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Off,
    Streaming,
    Idle,
}

/// The request being kept warm.
struct Run {
    id: u64,
    model: Model,
    context: Context,
    options: SimpleStreamOptions,
    /// The transcript when the request was made: warming stops once it is no longer a
    /// prefix of the session's transcript.
    messages: Vec<AgentMessage>,
    ttl: Duration,
    delay: Duration,
    started: Instant,
    phase: Mutex<Phase>,
    cancel: CancellationToken,
    /// When the next refresh is due.
    next_warm_at: Mutex<Instant>,
    /// A refresh is being weighed or sent.
    refreshing: AtomicBool,
    /// An extension overruled the decision of the refresh under way.
    extension_override: AtomicBool,
}

/// Why nothing is kept warm, and the decision that stopped warming, if one did.
#[derive(Debug, Clone)]
struct Stopped {
    reason: String,
    decision: Option<(Decision, bool)>,
}

/// What the cache warmer is doing (pi 1.6.0's `CacheWarmingStatus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheWarmingState {
    Inactive,
    Refreshing,
    Scheduled,
}

/// The cache warmer's state, for `/session`.
#[derive(Debug, Clone)]
pub struct CacheWarmingStatus {
    pub state: CacheWarmingState,
    pub reason: Option<String>,
    pub next_warm_at: Option<Instant>,
    pub decision: Option<Decision>,
    pub extension_override: bool,
}

impl CacheWarmingStatus {
    fn inactive(reason: &str) -> Self {
        CacheWarmingStatus {
            state: CacheWarmingState::Inactive,
            reason: Some(reason.to_owned()),
            next_warm_at: None,
            decision: None,
            extension_override: false,
        }
    }
}

/// `$0.123`, `-$0.123`.
fn format_dollars(value: f64) -> String {
    if value < 0.0 {
        format!("-${:.3}", value.abs())
    } else {
        format!("${value:.3}")
    }
}

fn format_economics(decision: &Decision) -> String {
    if !decision.economics_available {
        return "cache economics unavailable".to_owned();
    }
    let probability = (decision.continuation_probability * 100.0).round();
    let probability = match decision.phase {
        Phase::Streaming => {
            format!("{probability}% continuation probability while agent is running")
        }
        Phase::Idle => format!("{probability}% continuation probability"),
    };
    let comparison = if decision.warm { ">=" } else { "<" };
    format!(
        "{probability}, expected savings {} {comparison} ${:.3}",
        format_dollars(decision.expected_savings),
        cache_warming::MINIMUM_EXPECTED_SAVINGS
    )
}

fn format_decision_time(next_warm_at: Option<Instant>, now: Instant) -> String {
    let Some(at) = next_warm_at.filter(|at| *at > now) else {
        return "Decision now".to_owned();
    };
    let left = at - now;
    let mut seconds = left.as_secs() + u64::from(left.subsec_nanos() > 0);
    let hours = seconds / 3600;
    seconds %= 3600;
    let minutes = seconds / 60;
    seconds %= 60;
    let mut parts = Vec::new();
    if hours > 0 {
        parts.push(format!("{hours}h"));
    }
    if minutes > 0 {
        parts.push(format!("{minutes}m"));
    }
    if seconds > 0 || parts.is_empty() {
        parts.push(format!("{seconds}s"));
    }
    format!("Decision in {}", parts.join(" "))
}

/// The status in pi 1.6.0's words (`formatCacheWarmingStatus`).
pub fn format_cache_warming_status(status: &CacheWarmingStatus, now: Instant) -> String {
    let inactive = status.state == CacheWarmingState::Inactive;
    let decision = match &status.decision {
        Some(d) if !(inactive && !d.economics_available && !status.extension_override) => d,
        _ => {
            return format!(
                "Inactive ({})",
                status.reason.as_deref().unwrap_or("unknown reason")
            );
        }
    };
    let details = if status.extension_override {
        format!("extension override, {}", format_economics(decision))
    } else {
        let action = if decision.warm { "warm" } else { "stop" };
        format!("{} -> {action}", format_economics(decision))
    };
    match status.state {
        CacheWarmingState::Inactive => format!("Stopped ({details})"),
        CacheWarmingState::Refreshing => format!("Warming cache ({details})"),
        CacheWarmingState::Scheduled => format!(
            "{} ({details})",
            format_decision_time(status.next_warm_at, now)
        ),
    }
}

/// The session's cache warmer: at most one request is kept warm, the latest.
#[derive(Default)]
pub(super) struct CacheWarmer {
    run: Mutex<Option<Arc<Run>>>,
    next_id: AtomicU64,
    /// Why nothing is kept warm (none: no request yet).
    stopped: Mutex<Option<Stopped>>,
}

impl CacheWarmer {
    fn current(&self, id: u64) -> bool {
        lock(&self.run).as_ref().is_some_and(|run| run.id == id)
    }

    /// Drops the request kept warm.
    fn clear(&self) {
        if let Some(run) = lock(&self.run).take() {
            run.cancel.cancel();
        }
    }

    /// Stops keeping anything warm, for `reason`.
    pub(super) fn stop(&self, reason: &str) {
        self.stop_with(reason, None);
    }

    fn stop_with(&self, reason: &str, decision: Option<(Decision, bool)>) {
        self.clear();
        *lock(&self.stopped) = Some(Stopped {
            reason: reason.to_owned(),
            decision,
        });
    }

    /// Stops warming `id`, if it is still the request kept warm.
    fn stop_run(&self, id: u64, reason: &str, decision: Option<(Decision, bool)>) {
        if self.current(id) {
            self.stop_with(reason, decision);
        }
    }
}

impl Inner {
    fn cache_warming_mode(&self) -> Mode {
        match self
            .settings
            .global_value("cacheWarming")
            .as_ref()
            .and_then(Value::as_str)
        {
            Some("off") => Mode::Off,
            Some("streaming") => Mode::Streaming,
            _ => Mode::Idle,
        }
    }

    /// Prompt size of the branch's newest reply, as the provider reported it.
    fn last_prompt_tokens(&self) -> u64 {
        lock(&self.session)
            .branch_entries()
            .iter()
            .rev()
            .find_map(|e| e.message().and_then(|m| m.as_assistant()))
            .map(|reply| reply.usage.input + reply.usage.cache_read + reply.usage.cache_write)
            .unwrap_or(0)
    }

    /// Whether the request of `run` still leads the conversation: same model, and its
    /// transcript a prefix of the session's.
    fn run_is_current(&self, run: &Run) -> bool {
        let model = self.agent.model();
        model.provider == run.model.provider
            && model.id == run.model.id
            && self.agent.with_messages(|now| {
                now.len() >= run.messages.len() && now[..run.messages.len()] == run.messages[..]
            })
    }

    /// A session request is being sent: keep it warm from now on (it replaces any other).
    fn start_cache_warming(
        self: &Arc<Self>,
        model: &Model,
        context: &Context,
        options: &SimpleStreamOptions,
    ) {
        let warmer = &self.cache_warmer;
        warmer.clear();
        if self.cache_warming_mode() == Mode::Off {
            return warmer.stop("cache warming disabled");
        }
        if !cache_warming::replayable(model, options.reasoning.is_some()) {
            return warmer.stop("request cannot be replayed safely");
        }
        let Some(ttl) = cache_warming::prompt_cache_ttl(
            model,
            options.stream.cache_retention,
            options.stream.env.as_deref(),
        ) else {
            return warmer.stop(
                if options.stream.cache_retention == Some(CacheRetention::None) {
                    "request disabled prompt caching"
                } else {
                    "cache lifetime unavailable"
                },
            );
        };
        let Some(delay) = cache_warming::delay(ttl) else {
            return warmer.stop("cache lifetime unavailable");
        };
        let now = Instant::now();
        let run = Arc::new(Run {
            id: self.cache_warmer.next_id.fetch_add(1, Ordering::SeqCst),
            model: model.clone(),
            context: context.clone(),
            options: options.clone(),
            messages: self.agent.with_messages(<[AgentMessage]>::to_vec),
            ttl,
            delay,
            started: now,
            phase: Mutex::new(Phase::Streaming),
            cancel: CancellationToken::new(),
            next_warm_at: Mutex::new(now + delay),
            refreshing: AtomicBool::new(false),
            extension_override: AtomicBool::new(false),
        });
        *lock(&self.cache_warmer.run) = Some(Arc::clone(&run));
        tokio::spawn(keep_warm(Arc::downgrade(self), run));
    }

    /// The run settled: warming goes on between runs (`"idle"`) or stops (`"streaming"`).
    pub(super) fn cache_warming_settled(&self) {
        let run = lock(&self.cache_warmer.run).clone();
        let Some(run) = run else {
            return;
        };
        if self.cache_warming_mode() == Mode::Streaming {
            self.cache_warmer
                .stop_run(run.id, "agent run settled", None);
            return;
        }
        *lock(&run.phase) = Phase::Idle;
        let deadline = run.started + cache_warming::MAX_IDLE_AGE;
        if *lock(&run.next_warm_at) > deadline || Instant::now() >= deadline {
            self.cache_warmer
                .stop_run(run.id, "30-minute idle safety limit reached", None);
        }
    }

    /// Why the run may not go on now, if it may not (pi 1.6.0's reasons).
    fn warm_run_stop_reason(&self, run: &Run) -> Option<&'static str> {
        let mode = self.cache_warming_mode();
        if mode == Mode::Off {
            Some("cache warming disabled")
        } else if mode == Mode::Streaming && *lock(&run.phase) == Phase::Idle {
            Some("agent run settled")
        } else if !self.run_is_current(run) {
            Some("conversation context changed")
        } else {
            None
        }
    }

    /// pi 1.6.0's `validateRun`: whether `run` is still the one kept warm and may go on;
    /// one that may not is stopped with the reason.
    fn validate_run(&self, run: &Run) -> bool {
        if !self.cache_warmer.current(run.id) {
            return false;
        }
        match self.warm_run_stop_reason(run) {
            Some(reason) => {
                self.cache_warmer.stop_run(run.id, reason, None);
                false
            }
            None => true,
        }
    }

    /// What the cache warmer is doing.
    fn cache_warming_status(&self) -> CacheWarmingStatus {
        if self.cache_warming_mode() == Mode::Off {
            return CacheWarmingStatus::inactive("cache warming disabled");
        }
        let run = lock(&self.cache_warmer.run).clone();
        let Some(run) = run else {
            return match lock(&self.cache_warmer.stopped).clone() {
                None => CacheWarmingStatus::inactive("waiting for first request"),
                Some(Stopped { reason, decision }) => CacheWarmingStatus {
                    state: CacheWarmingState::Inactive,
                    reason: Some(reason),
                    next_warm_at: None,
                    decision: decision.map(|(d, _)| d),
                    extension_override: decision.is_some_and(|(_, o)| o),
                },
            };
        };
        if !self.run_is_current(&run) {
            return CacheWarmingStatus::inactive("conversation context changed");
        }
        let phase = *lock(&run.phase);
        let decision = cache_warming::evaluate(&run.model, self.last_prompt_tokens(), phase);
        let refreshing = run.refreshing.load(Ordering::SeqCst);
        if !decision.economics_available && !refreshing {
            return CacheWarmingStatus::inactive("cache economics unavailable");
        }
        CacheWarmingStatus {
            state: if refreshing {
                CacheWarmingState::Refreshing
            } else {
                CacheWarmingState::Scheduled
            },
            reason: None,
            next_warm_at: Some(*lock(&run.next_warm_at)),
            decision: Some(decision),
            extension_override: run.extension_override.load(Ordering::SeqCst),
        }
    }

    /// One refresh: pi's decision (which an extension may overrule), then the request.
    /// False when warming stopped.
    async fn refresh(&self, run: &Run) -> bool {
        let phase = *lock(&run.phase);
        let decision = cache_warming::evaluate(&run.model, self.last_prompt_tokens(), phase);
        let mut warm = decision.warm;
        let runtime = self.ext.runtime.clone();
        if runtime.has_handlers("cache_warming_decision") {
            let event = ExtensionEvent::CacheWarmingDecision {
                warm_cost: decision.warm_cost,
                miss_cost: decision.miss_cost,
                continuation_probability: decision.continuation_probability,
                action: if warm { "warm" } else { "stop" }.to_owned(),
            };
            match runtime.emit_cache_warming_decision(&event).await.as_deref() {
                Some("warm") => warm = true,
                Some("stop") => warm = false,
                _ => {}
            }
        }
        let overridden = warm != decision.warm;
        if !self.validate_run(run) {
            return false;
        }
        if !warm {
            let reason = if overridden {
                "stopped by extension"
            } else if decision.economics_available {
                "expected savings below threshold"
            } else {
                "cache economics unavailable"
            };
            self.cache_warmer
                .stop_run(run.id, reason, Some((decision, overridden)));
            return false;
        }
        run.extension_override.store(overridden, Ordering::SeqCst);
        let mut options = run.options.clone();
        options.stream.max_tokens = Some(1);
        options.stream.max_retries = Some(0);
        options.stream.disable_continuation = true;
        options.stream.cancel = Some(run.cancel.clone());
        let reply = pi_ai::stream_simple(&run.model, &run.context, options)
            .result()
            .await;
        if !self.validate_run(run) {
            return false;
        }
        if !matches!(reply.stop_reason, StopReason::Error | StopReason::Aborted) {
            let kind = EntryKind::Usage {
                kind: "cache_warm".into(),
                provider: Some(reply.provider.clone()),
                model: Some(reply.response_model.clone().unwrap_or(reply.model.clone())),
                usage: serde_json::to_value(reply.usage).unwrap_or(Value::Null),
                note: overridden.then(|| "extension override".to_owned()),
            };
            if let Err(e) = self.append_announced(kind) {
                eprintln!("Warning: {e}");
            }
        }
        true
    }
}

/// Refreshes `run` before each expiry until it is replaced, stops paying off, or reaches
/// its age limit.
async fn keep_warm(inner: Weak<Inner>, run: Arc<Run>) {
    let mut next = *lock(&run.next_warm_at);
    loop {
        let phase = *lock(&run.phase);
        let limit = match phase {
            Phase::Streaming => cache_warming::MAX_AGE,
            Phase::Idle => cache_warming::MAX_IDLE_AGE,
        };
        let deadline = run.started + limit;
        if next > deadline || Instant::now() >= deadline {
            if let Some(inner) = inner.upgrade() {
                let reason = match phase {
                    Phase::Idle => "30-minute idle safety limit reached",
                    Phase::Streaming => "one-hour safety limit reached",
                };
                inner.cache_warmer.stop_run(run.id, reason, None);
            }
            return;
        }
        // A refresh later than halfway through the margin left would write the cache
        // anew at full price instead of keeping it.
        let refresh_deadline = next + (run.ttl - run.delay) / 2;
        tokio::select! {
            () = run.cancel.cancelled() => return,
            () = tokio::time::sleep_until(tokio::time::Instant::from_std(next)) => {}
        }
        let Some(inner) = inner.upgrade() else {
            return;
        };
        run.refreshing.store(true, Ordering::SeqCst);
        if !inner.validate_run(&run) {
            return;
        }
        if Instant::now() > refresh_deadline {
            inner
                .cache_warmer
                .stop_run(run.id, "cache refresh deadline missed", None);
            return;
        }
        if !inner.refresh(&run).await || !inner.cache_warmer.current(run.id) {
            return;
        }
        next = Instant::now() + run.delay;
        run.extension_override.store(false, Ordering::SeqCst);
        *lock(&run.next_warm_at) = next;
        run.refreshing.store(false, Ordering::SeqCst);
    }
}

/// The agent's stream function: pi-ai's, noting each request of this session for warming.
pub(super) fn warming_stream_fn(inner: Weak<Inner>) -> StreamFn {
    Arc::new(
        move |model: &Model, context: &Context, options: SimpleStreamOptions| {
            if let Some(inner) = inner.upgrade() {
                let ours =
                    options.stream.session_id.as_deref() == Some(lock(&inner.session).session_id());
                if ours {
                    inner.start_cache_warming(model, context, &options);
                }
            }
            pi_ai::stream_simple(model, context, options)
        },
    )
}

impl AgentSession {
    /// Stops cache warming (the session is replaced or closed).
    pub(super) fn stop_cache_warming(&self) {
        self.inner.cache_warmer.stop("inactive");
    }

    /// What the cache warmer is doing (pi 1.6.0's `cacheWarmingStatus`).
    pub fn cache_warming_status(&self) -> CacheWarmingStatus {
        self.inner.cache_warming_status()
    }
}
