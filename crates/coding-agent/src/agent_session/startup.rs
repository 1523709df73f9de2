//! Starting a session: the agent built from the config (hooks, stream options, queue
//! modes) and the model and thinking level recorded first.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64};
use std::sync::{Arc, Mutex, Weak};

use pi_agent_core::{Agent, AgentOptions};
use pi_ai::{Model, StreamOptions, ThinkingLevel};

use super::{
    AgentSession, AgentSessionConfig, Inner, QueuedTexts, cache_warming, extensions, providers,
    session_hooks,
};
use crate::model_registry::RequestAuth;
use crate::session::SessionManager;

impl AgentSession {
    /// Starts a session: the agent gets the session's messages, and a new session records
    /// its model and thinking level first (a resumed one its thinking level if it has none).
    pub fn new(config: AgentSessionConfig) -> Self {
        let AgentSessionConfig {
            cwd,
            registry,
            settings,
            mut session,
            model,
            thinking_level,
            scoped_models,
            tools,
            system_prompt,
            prompt_templates,
            skills,
            api_key,
            extensions: setup,
        } = config;
        let thinking_level = pi_ai::clamp_thinking_level(&model, thinking_level);
        let context = session.build_context();
        crate::timing::mark("context built");
        record_initial_entries(
            &mut session,
            &model,
            thinking_level,
            !context.messages.is_empty(),
            &registry,
        );
        let current = settings.get();
        let auth = registry
            .request_auth(&model, api_key.as_deref())
            .unwrap_or_default();
        let base_prompt = system_prompt.clone();
        #[cfg(feature = "codemode")]
        let tools = crate::codemode::loadout::prepare(
            tools,
            &setup.tool_registry,
            crate::codemode::loadout::Presentation::from_settings(&settings),
        );
        let agent = Agent::new(AgentOptions {
            system_prompt,
            model: Some(model.clone()),
            thinking_level,
            tools,
            messages: context.messages,
            steering_mode: current.steering_mode.unwrap_or_default(),
            follow_up_mode: current.follow_up_mode.unwrap_or_default(),
            stream_options: session_hooks::with_payload_hook(
                stream_options(auth, &current, session.session_id()),
                &setup.runtime,
            ),
            ..AgentOptions::default()
        });
        let oauth = registry.auth_path().map(|path| session_hooks::OAuthKeys {
            auth_path: path.to_path_buf(),
            cli_key_provider: api_key.as_ref().map(|_| model.provider.clone()),
        });
        let loaded_providers = providers::Registrations {
            providers: setup
                .runtime
                .providers()
                .into_iter()
                .map(|p| (p.name, p.config))
                .collect(),
            virtuals: setup.runtime.virtual_models(),
        };
        let ext = extensions::ExtensionState::new(setup, base_prompt);
        let inner = Arc::new_cyclic(|weak: &Weak<Inner>| {
            agent.set_hooks(session_hooks::hooks(&ext.runtime, oauth, weak.clone()));
            agent.subscribe(Arc::new(extensions::SessionListener(weak.clone())));
            agent.set_stream_fn(cache_warming::warming_stream_fn(weak.clone()));
            Inner {
                agent,
                session: Mutex::new(session),
                settings,
                registry: providers::SessionRegistry::new(registry, loaded_providers),
                cwd,
                api_key: api_key.map(|key| (model.provider.clone(), key)),
                scoped_models: Mutex::new(scoped_models),
                prompt_templates: Mutex::new(prompt_templates),
                skills: Mutex::new(skills),
                listeners: Mutex::new(Vec::new()),
                next_listener: AtomicU64::new(1),
                queued: Mutex::new(QueuedTexts::default()),
                last_assistant: Mutex::new(None),
                ended_assistant: Mutex::new(None),
                failed_response: Mutex::new(None),
                run_ended: AtomicBool::new(true),
                compact_after_runs: AtomicBool::new(true),
                retry_attempt: AtomicU32::new(0),
                active_runs: AtomicU32::new(0),
                settled_runs: AtomicU32::new(0),
                settled_count: AtomicU64::new(0),
                requested_runs: Arc::new(AtomicU32::new(0)),
                will_retry: Arc::new(AtomicBool::new(false)),
                retry_cancel: Mutex::new(None),
                compaction_cancel: Mutex::new(None),
                auto_compaction_cancel: Mutex::new(None),
                auto_compaction_ended: tokio::sync::Notify::new(),
                branch_summary_cancel: Mutex::new(None),
                overflow_recovery_attempted: AtomicBool::new(false),
                bash_cancel: Default::default(),
                pending_bash: Mutex::new(Vec::new()),
                cache_warmer: Default::default(),
                ext,
                mcp: Mutex::new(None),
                llama_refreshes: Mutex::default(),
            }
        });
        let session = Self { inner };
        // A resumed branch keeps the tools it recorded (pi 1.6.0).
        session.restore_session_tools();
        session
    }
}

/// A new session records its model and thinking level; a resumed session without a
/// thinking-level entry records the level in effect; a resumed session whose recorded
/// model differs records the change.
fn record_initial_entries(
    session: &mut SessionManager,
    model: &Model,
    thinking_level: ThinkingLevel,
    has_messages: bool,
    registry: &crate::model_registry::ModelRegistry,
) {
    let result = if has_messages {
        let has_thinking_entry = session.branch_entries().iter().any(|e| {
            matches!(
                e.kind,
                crate::session::entry::EntryKind::ThinkingLevelChange { .. }
            )
        });
        // The recorded selection counts routed responses as their virtual model's.
        let recorded =
            crate::virtual_models::branch_selection(&session.branch_entries(), |p, i| {
                registry.find(p, i).cloned()
            })
            .or(session.build_context().model);
        let mut result = Ok(String::new());
        if recorded.as_ref() != Some(&(model.provider.clone(), model.id.clone())) {
            result = session.append_model_change(&model.provider, &model.id);
        }
        if !has_thinking_entry && result.is_ok() {
            result = session.append_thinking_level_change(thinking_level.as_str());
        }
        result
    } else if crate::auth_guidance::is_unknown_model(model) {
        // No model yet (pi 1.6.0 records none): only the thinking level.
        session.append_thinking_level_change(thinking_level.as_str())
    } else {
        session
            .append_model_change(&model.provider, &model.id)
            .and_then(|_| session.append_thinking_level_change(thinking_level.as_str()))
    };
    if let Err(e) = result {
        eprintln!("Warning: {e}");
    }
}

/// Stream options from the key and headers of the model, the provider retry settings and
/// the session id (which requests carry as pi 1.6.0's do: prompt cache key, session headers).
fn stream_options(
    auth: RequestAuth,
    settings: &crate::config::settings::Settings,
    session_id: &str,
) -> StreamOptions {
    let provider = settings.retry.unwrap_or_default().provider;
    // Disabled: a month stands for "never" (the stream still ends on cancellation).
    let idle = settings
        .http_idle_timeout_ms()
        .unwrap_or(30 * 24 * 3_600_000);
    // pi 1.6.0: the request timeout is `retry.provider.timeoutMs`, else `httpIdleTimeoutMs`.
    let mut options = StreamOptions {
        api_key: auth.api_key,
        headers: auth.headers,
        env: auth.env,
        idle_timeout_ms: Some(idle),
        timeout_ms: Some(idle),
        transport: settings.transport,
        websocket_connect_timeout_ms: settings.websocket_connect_timeout_ms(),
        session_id: Some(session_id.to_owned()),
        ..StreamOptions::default()
    };
    if let Some(provider) = provider {
        if let Some(ms) = provider.max_retry_delay_ms {
            options.max_retry_delay_ms = Some(ms);
        }
        if let Some(retries) = provider.max_retries {
            options.max_retries = Some(retries);
        }
        if let Some(ms) = provider.timeout_ms {
            options.timeout_ms = Some(ms);
        }
    }
    options
}
