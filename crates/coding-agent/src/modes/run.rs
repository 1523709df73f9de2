//! Non-interactive runs (print and JSON modes): an [`Agent`] with the built-in tools over a
//! session file, every message recorded as a session entry.

use std::io::Write;
use std::sync::{Arc, Mutex};

use pi_agent_core::{Agent, AgentEvent, AgentHooks, AgentMessage, AgentOptions, AgentTool};
use pi_ai::{Message, Model, StopReason, StreamOptions, ThinkingLevel};

use crate::model_registry::RequestAuth;
use crate::retry::{RetrySettings, is_retryable};
use crate::session::SessionManager;
use crate::session_event::{AgentSessionEvent, SessionOnlyEvent};

/// The coding agent's hooks: its message conversion.
struct CodingHooks;

impl AgentHooks for CodingHooks {
    fn convert_to_llm(&self, messages: &[AgentMessage]) -> Vec<Message> {
        crate::messages::convert_to_llm(messages)
    }
}

/// How results are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// The last reply's text; errors on stderr with exit code 1.
    Text,
    /// The session header, then every event as one JSON line; exit code 0.
    Json,
}

/// Everything a run needs.
pub struct Run {
    pub model: Model,
    pub auth: RequestAuth,
    pub thinking: ThinkingLevel,
    pub system_prompt: String,
    pub tools: Vec<Arc<dyn AgentTool>>,
    pub session: SessionManager,
    pub output: Output,
    pub retry: RetrySettings,
}

fn print_line(value: &impl serde::Serialize) {
    if let Ok(line) = serde_json::to_string(value) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}

impl Run {
    /// Sends each prompt in turn and returns the exit code.
    pub async fn run(self, prompts: Vec<pi_agent_core::PromptInput>) -> i32 {
        let Run {
            model,
            auth,
            thinking,
            system_prompt,
            tools,
            mut session,
            output,
            retry,
        } = self;
        let context_window = model.context_window;
        let emit = move |event: SessionOnlyEvent| {
            if output == Output::Json {
                print_line(&AgentSessionEvent::Session(event));
            }
        };
        // Retries in progress, shared with the listener that reports a recovery.
        let attempt = Arc::new(std::sync::atomic::AtomicU32::new(0));
        let context = session.build_context();
        let model_recorded =
            context.model.as_ref() == Some(&(model.provider.clone(), model.id.clone()));
        if (session.entries().is_empty() || !model_recorded)
            && let Err(e) = session.append_model_change(&model.provider, &model.id)
        {
            eprintln!("Warning: {e}");
        }
        if (session.entries().len() <= 1 || context.thinking_level != thinking.as_str())
            && let Err(e) = session.append_thinking_level_change(thinking.as_str())
        {
            eprintln!("Warning: {e}");
        }
        if output == Output::Json {
            print_line(session.header());
        }
        let session = Arc::new(Mutex::new(session));
        let agent = Arc::new(Agent::new(AgentOptions {
            system_prompt,
            model: Some(model),
            thinking_level: thinking,
            tools,
            messages: context.messages,
            hooks: Arc::new(CodingHooks),
            stream_options: StreamOptions {
                api_key: auth.api_key,
                headers: auth.headers,
                ..StreamOptions::default()
            },
            ..AgentOptions::default()
        }));
        // SIGINT / SIGTERM / SIGHUP abort the run (running tools kill their process groups),
        // then pi exits with 128 + the signal number.
        let signaled = Arc::new(std::sync::atomic::AtomicI32::new(0));
        {
            let agent = Arc::clone(&agent);
            let signaled = Arc::clone(&signaled);
            tokio::spawn(async move {
                if let Some(code) = wait_for_signal().await {
                    signaled.store(code, std::sync::atomic::Ordering::SeqCst);
                    agent.abort();
                }
            });
        }
        {
            let session = Arc::clone(&session);
            let attempt = Arc::clone(&attempt);
            agent.subscribe_fn(move |event| {
                if output == Output::Json {
                    print_line(event);
                }
                if let AgentEvent::MessageEnd { message } = event {
                    let mut session = session.lock().unwrap_or_else(|p| p.into_inner());
                    if let Err(e) = session.append_message(message.clone()) {
                        eprintln!("Warning: {e}");
                    }
                    // A good reply after retries ends the retry sequence.
                    let recovered = message
                        .as_assistant()
                        .is_some_and(|a| a.stop_reason != StopReason::Error);
                    let tries = attempt.load(std::sync::atomic::Ordering::SeqCst);
                    if recovered && tries > 0 {
                        attempt.store(0, std::sync::atomic::Ordering::SeqCst);
                        emit(SessionOnlyEvent::AutoRetryEnd {
                            success: true,
                            attempt: tries,
                            final_error: None,
                        });
                    }
                }
            });
        }
        for prompt in prompts {
            if agent.prompt(prompt).await.is_err()
                || signaled.load(std::sync::atomic::Ordering::SeqCst) != 0
            {
                break;
            }
            retry_until_settled(&agent, retry, context_window, &attempt, &signaled, emit).await;
            let failed = agent
                .messages()
                .last()
                .and_then(AgentMessage::as_assistant)
                .is_some_and(|a| a.stop_reason.is_failure());
            if failed {
                break;
            }
        }
        let signal_code = signaled.load(std::sync::atomic::Ordering::SeqCst);
        if signal_code != 0 {
            return signal_code;
        }
        if output == Output::Json {
            return 0;
        }
        let messages = agent.messages();
        let Some(last) = messages.iter().rev().find_map(AgentMessage::as_assistant) else {
            return 0;
        };
        if matches!(last.stop_reason, StopReason::Error | StopReason::Aborted) {
            let text = last
                .error_message
                .clone()
                .unwrap_or_else(|| "Request failed".to_owned());
            eprintln!("{text}");
            return 1;
        }
        let mut out = std::io::stdout().lock();
        for block in &last.content {
            if let Some(text) = block.as_text() {
                let _ = writeln!(out, "{text}");
            }
        }
        let _ = out.flush();
        0
    }
}

/// Resolves with the exit code for the first of SIGINT (130), SIGTERM (143), SIGHUP (129).
async fn wait_for_signal() -> Option<i32> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt()).ok()?;
    let mut terminate = signal(SignalKind::terminate()).ok()?;
    let mut hangup = signal(SignalKind::hangup()).ok()?;
    tokio::select! {
        _ = interrupt.recv() => Some(130),
        _ = terminate.recv() => Some(143),
        _ = hangup.recv() => Some(129),
    }
}

/// The last assistant message of the transcript, if the run failed in a retryable way.
fn retryable_failure(agent: &Agent, context_window: u64) -> Option<pi_ai::AssistantMessage> {
    let messages = agent.messages();
    let last = messages.last()?.as_assistant()?.clone();
    is_retryable(&last, context_window).then_some(last)
}

/// Retries a transiently failed run with exponential backoff (seed 002 §5.8): the failed
/// message leaves the agent's context (it stays in the session file), and the agent
/// continues; after `maxRetries` the failure stands.
async fn retry_until_settled(
    agent: &Agent,
    settings: RetrySettings,
    context_window: u64,
    attempt: &std::sync::atomic::AtomicU32,
    signaled: &std::sync::atomic::AtomicI32,
    emit: impl Fn(SessionOnlyEvent),
) {
    use std::sync::atomic::Ordering::SeqCst;
    if !settings.enabled {
        return;
    }
    while let Some(failed) = retryable_failure(agent, context_window) {
        let tries = attempt.fetch_add(1, SeqCst) + 1;
        let error_message = failed
            .error_message
            .clone()
            .unwrap_or_else(|| "Unknown error".into());
        if tries > settings.max_retries {
            attempt.store(0, SeqCst);
            emit(SessionOnlyEvent::AutoRetryEnd {
                success: false,
                attempt: tries - 1,
                final_error: Some(error_message),
            });
            return;
        }
        let delay_ms = settings.delay_ms(tries);
        emit(SessionOnlyEvent::AutoRetryStart {
            attempt: tries,
            max_attempts: settings.max_retries,
            delay_ms,
            error_message,
        });
        let mut messages = agent.messages();
        messages.pop();
        agent.replace_messages(messages);
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_millis(delay_ms);
        while tokio::time::Instant::now() < deadline {
            if signaled.load(SeqCst) != 0 {
                attempt.store(0, SeqCst);
                emit(SessionOnlyEvent::AutoRetryEnd {
                    success: false,
                    attempt: tries,
                    final_error: Some("Retry cancelled".into()),
                });
                return;
            }
            tokio::time::sleep(
                std::time::Duration::from_millis(20).min(deadline - tokio::time::Instant::now()),
            )
            .await;
        }
        if agent.continue_run().await.is_err() {
            return;
        }
    }
}
