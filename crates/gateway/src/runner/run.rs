//! `run_embedded`: one prompt through an [`AgentSession`], retried by the runner (the
//! session's own auto-retry and compaction never run: the runner drives the agent
//! directly). Each attempt uses an auth profile; failures are classified and recovered as
//! seed 004's retry table says.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use pi_agent_core::{AgentEvent, AgentMessage};
use pi_ai::{AssistantMessage, ImageContent, InputBlock, ThinkingLevel, UserMessage};
use pi_coding_agent::agent_session::AgentSession;
use pi_coding_agent::compaction::should_compact;

use super::auth_profiles::{AuthProfile, AuthProfileStore, SecretRedactor};
use super::classify::{
    FailureKind, classify_failure, friendly_message, supported_fallback_thinking_level,
};
use super::compact::{CompactOptions, SessionCompactionError, compact_session, compaction_count};
use super::params::{
    AttemptRecord, EmbeddedRunParams, EmbeddedRunResult, Payload, RunError, RunMeta, RunnerConfig,
    default_max_run_loop_iterations,
};
use super::prompt::{PromptParams, build_system_prompt};
use super::truncation::{max_tool_result_chars, truncate_oversized_tool_results};
use super::usage::UsageAccumulator;

/// Retries inside one request for a session run without auth profiles: the runner has no
/// other key to rotate to and the session's auto-retry is off, so the request retries (as
/// the provider layer did by default before it followed pi 1.6.0's none).
const SINGLE_KEY_RETRIES: u32 = 2;

/// Assistant messages finished during the run, in order.
#[derive(Default)]
struct RunLog {
    assistants: Vec<AssistantMessage>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The agent settings a run changes, put back when it ends.
struct Saved {
    options: pi_ai::StreamOptions,
    thinking_level: ThinkingLevel,
    system_prompt: Option<String>,
}

/// Per-run loop state.
struct Run<'a> {
    session: &'a AgentSession,
    store: &'a AuthProfileStore,
    config: &'a RunnerConfig,
    provider: String,
    context_window: u64,
    cancel: CancellationToken,
    profile: Option<AuthProfile>,
    tried: Vec<String>,
    attempts: Vec<AttemptRecord>,
    last_failure: Option<(FailureKind, String)>,
    auto_compactions: u32,
    overflow_compactions: u32,
    truncation_attempted: bool,
    truncated: usize,
    /// Keys to keep out of error texts.
    secrets: SecretRedactor,
}

impl Run<'_> {
    fn compact_options(&self) -> CompactOptions {
        CompactOptions {
            api_key: self.profile.as_ref().map(|p| p.api_key().to_owned()),
            parts: self.config.compaction_parts,
            retry_delay: self.config.summary_retry_delay,
            custom_instructions: None,
        }
    }

    /// Puts the profile's key (and the headers derived from it) on the agent.
    fn apply_profile(&self, base: &pi_ai::StreamOptions) {
        let agent = self.session.agent();
        let mut options = base.clone();
        if let Some(profile) = &self.profile {
            options.api_key = Some(profile.api_key().to_owned());
            if let Ok(auth) = self
                .session
                .registry()
                .request_auth(&self.session.model(), Some(profile.api_key()))
            {
                options.headers = auth.headers;
            }
        }
        if let Some(ms) = self.config.idle_timeout_ms {
            options.idle_timeout_ms = Some(ms);
        }
        if let Some(ms) = self.config.request_timeout_ms {
            options.timeout_ms = Some(ms);
        }
        // With profiles the runner rotates instead of retrying; with the session's single
        // key, retries inside the request (retry-after, backoff) are all there is, since
        // the session's own auto-retry does not run under the runner.
        match (self.profile.is_some(), self.config.provider_max_retries) {
            (true, Some(retries)) => options.max_retries = Some(retries),
            (false, _) if options.max_retries.is_none() => {
                options.max_retries = Some(SINGLE_KEY_RETRIES);
            }
            _ => {}
        }
        agent.set_stream_options(options);
    }

    /// Drops the failed reply ending the context, so the retry starts where it started.
    fn drop_failed_tail(&self) {
        self.session.agent().update_messages(|messages| {
            let failed = messages
                .last()
                .and_then(AgentMessage::as_assistant)
                .is_some_and(|a| a.stop_reason.is_failure());
            if failed {
                messages.pop();
            }
        });
    }

    /// `text` without any key the run knows of (providers echo keys in error texts).
    fn redact(&self, text: &str) -> String {
        self.secrets.redact(text)
    }

    fn error(&self, kind: FailureKind, message: impl Into<String>) -> RunError {
        RunError {
            kind,
            message: message.into(),
        }
    }

    /// The error when no profile is left to try.
    fn exhausted(&self) -> RunError {
        let (kind, detail) = match &self.last_failure {
            Some((kind, raw)) => (*kind, friendly_message(*kind, raw)),
            None => {
                let kind = self
                    .store
                    .profile_ids(&self.provider)
                    .iter()
                    .find_map(|id| self.store.last_failure(id))
                    .unwrap_or(FailureKind::RateLimit);
                (kind, "every profile is cooling down".to_owned())
            }
        };
        self.error(
            kind,
            format!(
                "All auth profiles for {} are exhausted; last failure ({kind}): {detail}",
                self.provider
            ),
        )
    }

    /// Compacts when the context is already past the session's threshold.
    async fn compact_if_due(&mut self) -> Result<(), RunError> {
        let settings = self.session.settings().get().compaction_settings();
        let tokens = self
            .session
            .context_usage()
            .and_then(|usage| usage.tokens)
            .unwrap_or(0);
        if !should_compact(tokens, self.context_window, &settings) {
            return Ok(());
        }
        match compact_session(self.session, &self.compact_options(), self.cancel.clone()).await {
            Ok(_) => {
                self.auto_compactions += 1;
                Ok(())
            }
            Err(SessionCompactionError::Aborted) => Err(self.error(
                FailureKind::Aborted,
                friendly_message(FailureKind::Aborted, ""),
            )),
            Err(_) => Ok(()),
        }
    }

    /// Handles a context overflow; `Ok` when the run should retry.
    async fn recover_overflow(&mut self, sdk_compacted: bool) -> Result<(), RunError> {
        if self.overflow_compactions < self.config.max_overflow_compactions {
            self.overflow_compactions += 1;
            if sdk_compacted {
                self.auto_compactions += 1;
                return Ok(());
            }
            self.drop_failed_tail();
            match compact_session(self.session, &self.compact_options(), self.cancel.clone()).await
            {
                Ok(_) => {
                    self.auto_compactions += 1;
                    return Ok(());
                }
                Err(SessionCompactionError::Aborted) => {
                    return Err(self.error(
                        FailureKind::Aborted,
                        friendly_message(FailureKind::Aborted, ""),
                    ));
                }
                Err(_) => {}
            }
        }
        if !self.truncation_attempted {
            self.truncation_attempted = true;
            let max_chars = self
                .config
                .tool_result_max_chars
                .unwrap_or_else(|| max_tool_result_chars(self.context_window));
            let truncated = self
                .session
                .agent()
                .update_messages(|messages| truncate_oversized_tool_results(messages, max_chars));
            if truncated > 0 {
                self.truncated += truncated;
                return Ok(());
            }
        }
        Err(self.error(
            FailureKind::ContextOverflow,
            friendly_message(FailureKind::ContextOverflow, ""),
        ))
    }

    /// Runs attempts until one succeeds or a failure is final.
    async fn drive(&mut self, log: &Mutex<RunLog>, prompt: AgentMessage) -> Result<(), RunError> {
        let session = self.session;
        let agent = session.agent();
        let base_options = agent.stream_options();
        let profiles = self.store.profile_ids(&self.provider).len();
        let has_profiles = profiles > 0;
        let max_iterations = self
            .config
            .max_run_loop_iterations
            .unwrap_or_else(|| default_max_run_loop_iterations(profiles));
        if has_profiles {
            self.profile = self.store.next_available(&self.provider, Instant::now());
        }
        if self.config.compact_before_prompt && agent.with_messages(|m| !m.is_empty()) {
            self.compact_if_due().await?;
        }
        let mut prompt = Some(prompt);
        let mut iterations = 0u32;
        loop {
            if self.cancel.is_cancelled() {
                return Err(self.error(
                    FailureKind::Aborted,
                    friendly_message(FailureKind::Aborted, ""),
                ));
            }
            if iterations >= max_iterations {
                let (kind, raw) = self
                    .last_failure
                    .clone()
                    .unwrap_or((FailureKind::Other, String::new()));
                return Err(self.error(
                    kind,
                    format!("Request failed after {iterations} attempts: {raw}"),
                ));
            }
            iterations += 1;
            if has_profiles && self.profile.is_none() {
                self.profile = self.store.next_available_excluding(
                    &self.provider,
                    Instant::now(),
                    &self.tried,
                );
                if self.profile.is_none() {
                    return Err(self.exhausted());
                }
            }
            self.apply_profile(&base_options);
            let compactions_before = compaction_count(session);
            let logged_before = lock(log).assistants.len();
            let thinking_level = agent.thinking_level();
            let outcome = match prompt.take() {
                Some(message) => agent.prompt(vec![message]).await,
                None => agent.continue_run().await,
            };
            if let Err(e) = outcome {
                return Err(self.error(FailureKind::Other, self.redact(&e.to_string())));
            }
            let last = lock(log).assistants[logged_before..].last().cloned();
            let failure = last
                .as_ref()
                .and_then(|m| classify_failure(m, Some(self.context_window)));
            let raw = last
                .as_ref()
                .and_then(|m| m.error_message.as_deref())
                .map(|text| self.redact(text))
                .unwrap_or_default();
            self.attempts.push(AttemptRecord {
                profile_id: self.profile.as_ref().map(|p| p.id.clone()),
                thinking_level,
                failure,
                error_message: failure.map(|_| raw.clone()),
            });
            let Some(kind) = failure else {
                if let Some(profile) = &self.profile {
                    self.store.mark_success(&profile.id);
                }
                return Ok(());
            };
            self.last_failure = Some((kind, raw.clone()));
            match kind {
                FailureKind::Aborted => return Err(self.error(kind, friendly_message(kind, &raw))),
                FailureKind::ContextOverflow => {
                    let sdk_compacted = compaction_count(session) > compactions_before;
                    self.recover_overflow(sdk_compacted).await?;
                }
                FailureKind::ThinkingUnsupported => {
                    let supported = pi_ai::supported_thinking_levels(&session.model());
                    let Some(lower) =
                        supported_fallback_thinking_level(thinking_level, &raw, &supported)
                    else {
                        return Err(self.error(kind, friendly_message(kind, &raw)));
                    };
                    agent.set_thinking_level(lower);
                }
                FailureKind::RoleOrdering | FailureKind::ImageTooLarge | FailureKind::Other => {
                    return Err(self.error(kind, friendly_message(kind, &raw)));
                }
                FailureKind::Auth
                | FailureKind::RateLimit
                | FailureKind::Billing
                | FailureKind::Timeout => {
                    let Some(profile) = self.profile.take() else {
                        return Err(self.error(kind, friendly_message(kind, &raw)));
                    };
                    self.store.mark_failure(&profile.id, kind, Instant::now());
                    self.tried.push(profile.id);
                }
            }
            self.drop_failed_tail();
        }
    }
}

/// The run's user message: expanded text plus images.
fn user_message(session: &AgentSession, text: &str, images: Vec<ImageContent>) -> AgentMessage {
    let mut blocks = vec![InputBlock::text(session.expand(text))];
    blocks.extend(images.into_iter().map(InputBlock::Image));
    AgentMessage::from(UserMessage::blocks(blocks))
}

/// Runs one prompt to the end with the runner's recovery (seed 004's retry table): auth
/// profile rotation and cooldowns, thinking downgrades, overflow compaction, tool-result
/// truncation, and usage accumulated without cache inflation.
pub async fn run_embedded(params: EmbeddedRunParams) -> EmbeddedRunResult {
    let started = Instant::now();
    let EmbeddedRunParams {
        session,
        prompt,
        images,
        auth_profiles,
        thinking_level,
        prompt_mode,
        context_files,
        config,
        cancel,
    } = params;
    let agent = session.agent();
    let model = session.model();
    let saved = Saved {
        options: agent.stream_options(),
        thinking_level: agent.thinking_level(),
        system_prompt: prompt_mode.map(|_| agent.state().system_prompt),
    };
    if let Some(level) = thinking_level {
        agent.set_thinking_level(pi_ai::clamp_thinking_level(&model, level));
    }
    if let Some(mode) = prompt_mode {
        let tools: Vec<String> = agent
            .state()
            .tools
            .iter()
            .map(|t| t.name().to_owned())
            .collect();
        let full_id = model.full_id();
        let system_prompt = build_system_prompt(
            mode,
            &PromptParams {
                tools: &tools,
                skills: &session.skills(),
                context_files: &context_files,
                model: Some(&full_id),
                thinking_level: Some(agent.thinking_level()),
                channel: None,
            },
            session.cwd(),
        );
        agent.set_system_prompt(system_prompt);
    }

    let log = Arc::new(Mutex::new(RunLog::default()));
    let listener = {
        let log = Arc::clone(&log);
        agent.subscribe_fn(move |event| {
            if let AgentEvent::MessageEnd { message } = event
                && let Some(assistant) = message.as_assistant()
            {
                lock(&log).assistants.push(assistant.clone());
            }
        })
    };
    let cancel = cancel.unwrap_or_default();
    let watcher = {
        let cancel = cancel.clone();
        let session = session.clone();
        tokio::spawn(async move {
            cancel.cancelled().await;
            session.agent().abort();
        })
    };

    let mut run = Run {
        session: &session,
        store: &auth_profiles,
        config: &config,
        provider: model.provider.clone(),
        context_window: model.context_window,
        cancel: cancel.clone(),
        profile: None,
        tried: Vec::new(),
        attempts: Vec::new(),
        last_failure: None,
        auto_compactions: 0,
        overflow_compactions: 0,
        truncation_attempted: false,
        truncated: 0,
        secrets: SecretRedactor::new(&auth_profiles, saved.options.api_key.as_deref()),
    };
    let message = user_message(&session, &prompt, images);
    let outcome = run.drive(&log, message).await;
    if outcome
        .as_ref()
        .is_err_and(|e| e.kind != FailureKind::Aborted)
    {
        // A run that gives up leaves no failed reply behind (an aborted one keeps its part).
        run.drop_failed_tail();
    }

    watcher.abort();
    agent.unsubscribe(listener);
    let final_level = agent.thinking_level();
    agent.set_stream_options(saved.options);
    agent.set_thinking_level(saved.thinking_level);
    if let Some(system_prompt) = saved.system_prompt {
        agent.set_system_prompt(system_prompt);
    }

    let assistants = std::mem::take(&mut lock(&log).assistants);
    let mut usage = UsageAccumulator::new();
    let mut payloads = Vec::new();
    for assistant in &assistants {
        usage.add(&assistant.usage);
        let text = assistant.text();
        if !assistant.stop_reason.is_failure() && !text.trim().is_empty() {
            payloads.push(Payload {
                text: text.trim().to_owned(),
                is_error: false,
            });
        }
    }
    let error = outcome.err();
    if let Some(error) = &error {
        payloads.push(Payload {
            text: error.message.clone(),
            is_error: true,
        });
    }
    EmbeddedRunResult {
        payloads,
        meta: RunMeta {
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            session_id: session.session_id(),
            provider: model.provider.clone(),
            model: model.id.clone(),
            thinking_level: final_level,
            profile_id: run
                .attempts
                .last()
                .and_then(|attempt| attempt.profile_id.clone()),
            error,
        },
        usage: usage.usage(),
        auto_compaction_count: run.auto_compactions,
        overflow_compaction_attempts: run.overflow_compactions,
        truncated_tool_results: run.truncated,
        attempts: run.attempts,
    }
}
