//! Prompt cache warming (pi 1.6.0's `cacheWarming`): after each request of the session,
//! a timer re-sends that request with a one-token output cap shortly before the model's
//! cache entry would expire, while the transcript still extends it and the expected saving
//! is worth the price. `"streaming"` warms during runs only; `"idle"` (the default) also
//! for up to 30 minutes after a run settles; `"off"` never. Each refresh is recorded as a
//! `usage` entry of kind `cache_warm` and announced (`entry_appended`); extensions may
//! overrule each decision (`cache_warming_decision`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use pi_agent_core::{AgentMessage, StreamFn};
use pi_ai::cache_warming::{self, Phase};
use pi_ai::{Context, Model, SimpleStreamOptions, StopReason};
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
}

/// The session's cache warmer: at most one request is kept warm, the latest.
#[derive(Default)]
pub(super) struct CacheWarmer {
    run: Mutex<Option<Arc<Run>>>,
    next_id: AtomicU64,
}

impl CacheWarmer {
    fn current(&self, id: u64) -> bool {
        lock(&self.run).as_ref().is_some_and(|run| run.id == id)
    }

    /// Stops keeping anything warm.
    pub(super) fn stop(&self) {
        if let Some(run) = lock(&self.run).take() {
            run.cancel.cancel();
        }
    }

    fn stop_run(&self, id: u64) {
        let mut slot = lock(&self.run);
        if slot.as_ref().is_some_and(|run| run.id == id)
            && let Some(run) = slot.take()
        {
            run.cancel.cancel();
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
        self.cache_warmer.stop();
        if self.cache_warming_mode() == Mode::Off
            || !cache_warming::replayable(model, options.reasoning.is_some())
        {
            return;
        }
        let Some(ttl) = cache_warming::prompt_cache_ttl(
            model,
            options.stream.cache_retention,
            options.stream.env.as_deref(),
        ) else {
            return;
        };
        let Some(delay) = cache_warming::delay(ttl) else {
            return;
        };
        let run = Arc::new(Run {
            id: self.cache_warmer.next_id.fetch_add(1, Ordering::SeqCst),
            model: model.clone(),
            context: context.clone(),
            options: options.clone(),
            messages: self.agent.with_messages(<[AgentMessage]>::to_vec),
            ttl,
            delay,
            started: Instant::now(),
            phase: Mutex::new(Phase::Streaming),
            cancel: CancellationToken::new(),
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
        if self.cache_warming_mode() != Mode::Idle {
            self.cache_warmer.stop_run(run.id);
            return;
        }
        *lock(&run.phase) = Phase::Idle;
    }

    /// Whether the run may go on now.
    fn warm_run_valid(&self, run: &Run) -> bool {
        let mode = self.cache_warming_mode();
        let phase = *lock(&run.phase);
        self.cache_warmer.current(run.id)
            && mode != Mode::Off
            && !(mode == Mode::Streaming && phase == Phase::Idle)
            && self.run_is_current(run)
    }

    /// One refresh: pi's decision (which an extension may overrule), then the request.
    /// False when warming stops.
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
        if !warm || !self.warm_run_valid(run) {
            return false;
        }
        let mut options = run.options.clone();
        options.stream.max_tokens = Some(1);
        options.stream.max_retries = Some(0);
        options.stream.disable_continuation = true;
        options.stream.cancel = Some(run.cancel.clone());
        let reply = pi_ai::stream_simple(&run.model, &run.context, options)
            .result()
            .await;
        if !self.warm_run_valid(run) {
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
    loop {
        let limit = match *lock(&run.phase) {
            Phase::Streaming => cache_warming::MAX_AGE,
            Phase::Idle => cache_warming::MAX_IDLE_AGE,
        };
        let next = Instant::now() + run.delay;
        if next > run.started + limit {
            break;
        }
        // A refresh later than halfway through the margin left would write the cache
        // anew at full price instead of keeping it.
        let deadline = next + (run.ttl - run.delay) / 2;
        tokio::select! {
            () = run.cancel.cancelled() => return,
            () = tokio::time::sleep(run.delay) => {}
        }
        let Some(inner) = inner.upgrade() else {
            return;
        };
        if !inner.warm_run_valid(&run) || Instant::now() > deadline {
            break;
        }
        if !inner.refresh(&run).await {
            break;
        }
    }
    if let Some(inner) = inner.upgrade() {
        inner.cache_warmer.stop_run(run.id);
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
        self.inner.cache_warmer.stop();
    }
}
