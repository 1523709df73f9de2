//! RPC mode (`pi --mode rpc`): commands as JSON lines on stdin; responses and every
//! session event as JSON lines on stdout. Lines are split on `\n` only (a trailing `\r` is
//! dropped). A bad line gets an error response and the process keeps serving; stdin EOF
//! ends it with exit code 0.

pub mod command;
mod entries;
mod ui;

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::agent_session::{AgentSession, PromptOptions, SessionOpError};
use crate::modes::wire::WireEvents;
use command::{Input, RpcCommand, error, parse_line, success};

/// Writes whole lines to stdout, one writer at a time.
#[derive(Clone, Default)]
pub(crate) struct Output {
    lock: Arc<std::sync::Mutex<()>>,
}

impl Output {
    fn line(&self, value: &impl serde::Serialize) {
        let Ok(mut text) = serde_json::to_string(value) else {
            return;
        };
        text.push('\n');
        let _guard = self
            .lock
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }
}

/// How long an extension's shutdown request waits for a run going on (a day: in effect,
/// until it ends).
const RUN_WAIT_LIMIT: Duration = Duration::from_secs(86_400);

/// Serves commands until stdin closes or a signal arrives; returns the exit code.
pub async fn run(session: AgentSession) -> i32 {
    let output = Output::default();
    let ui = Arc::new(ui::RpcUi::new(output.clone()));
    let shutdown_requested = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // Wakes the idle loop when an extension asks to shut down (`ctx.shutdown()` from a
    // timer, pi 1.6.0), not only after the next command.
    let shutdown_wake = Arc::new(tokio::sync::Notify::new());
    // Extension UI answers are handled as they arrive, even while a command waits for a
    // dialog; everything else is handled in order.
    let (lines, mut commands) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
    {
        let ui = ui.clone();
        tokio::spawn(async move {
            let mut stdin = BufReader::new(tokio::io::stdin());
            loop {
                let mut buffer = Vec::new();
                match stdin.read_until(b'\n', &mut buffer).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                if buffer.last() == Some(&b'\n') {
                    buffer.pop();
                }
                if buffer.last() == Some(&b'\r') {
                    buffer.pop();
                }
                if let Input::UiResponse(response) = parse_line(&String::from_utf8_lossy(&buffer)) {
                    ui.answer(response);
                    continue;
                }
                if lines.send(buffer).is_err() {
                    break;
                }
            }
        });
    }
    // Session events print once the extensions are bound, as in the TypeScript pi: what
    // their session_start handlers change at startup (a preset's thinking level) is not
    // echoed, except the entries they append (`entry_appended`, pi 1.6.0).
    let binding = Arc::new(std::sync::atomic::AtomicBool::new(true));
    {
        let output = output.clone();
        let wire = WireEvents::new(session.will_retry_flag());
        let binding = binding.clone();
        session.subscribe(move |event| {
            let appended = matches!(
                event,
                crate::session_event::AgentSessionEvent::Session(
                    crate::session_event::SessionOnlyEvent::EntryAppended { .. }
                )
            );
            if appended || !binding.load(std::sync::atomic::Ordering::SeqCst) {
                output.line(&wire.encode(event));
            }
        });
    }
    {
        let errors = output.clone();
        let requested = shutdown_requested.clone();
        let wake = shutdown_wake.clone();
        session
            .bind_extensions(
                ui,
                Arc::new(move |error: crate::extensions::ExtensionErrorInfo| {
                    errors.line(&json!({
                        "type": "extension_error",
                        "extensionPath": error.extension_path,
                        "event": error.event,
                        "error": error.error,
                    }));
                }),
                Arc::new(move || {
                    requested.store(true, std::sync::atomic::Ordering::SeqCst);
                    wake.notify_one();
                }),
            )
            .await;
    }
    binding.store(false, std::sync::atomic::Ordering::SeqCst);
    let signal = crate::modes::signals::wait_for_signal();
    tokio::pin!(signal);
    loop {
        if shutdown_requested.load(std::sync::atomic::Ordering::SeqCst) {
            break;
        }
        let buffer = tokio::select! {
            line = commands.recv() => line,
            code = &mut signal => {
                return finish_unless_signalled_again(
                    std::pin::pin!(shut_down(&session)),
                    code.unwrap_or(143),
                )
                .await;
            }
            () = shutdown_wake.notified() => {
                // A run going on finishes first, as after a command; a signal still ends
                // pi at once.
                tokio::select! {
                    () = session.wait_settled(RUN_WAIT_LIMIT) => break,
                    code = &mut signal => {
                        return finish_unless_signalled_again(
                    std::pin::pin!(shut_down(&session)),
                    code.unwrap_or(143),
                )
                .await;
                    }
                }
            }
        };
        let Some(buffer) = buffer else {
            break;
        };
        let line = String::from_utf8_lossy(&buffer);
        handle_line(&session, &output, &line).await;
        if shutdown_requested.load(std::sync::atomic::Ordering::SeqCst) {
            break;
        }
    }
    // Process managers often close stdin and send SIGTERM together: one signal during the
    // cleanup does not cut it short.
    let mut cleanup = std::pin::pin!(shut_down(&session));
    tokio::select! {
        () = &mut cleanup => return 0,
        _ = &mut signal => {}
    }
    finish_unless_signalled_again(cleanup, 0).await
}

/// Finishes the shutdown `cleanup` and gives `code`, unless a signal comes first (one after
/// the signal or end of input that began the shutdown): it ends pi at once with its code
/// (pi 1.5.1).
async fn finish_unless_signalled_again(
    cleanup: std::pin::Pin<&mut impl std::future::Future<Output = ()>>,
    code: i32,
) -> i32 {
    let again = crate::modes::signals::wait_for_signal();
    tokio::select! {
        () = cleanup => code,
        repeated = again => repeated.unwrap_or(143),
    }
}

/// Stops whatever runs (bounded, so a stuck tool cannot keep pi alive).
async fn shut_down(session: &AgentSession) {
    session.abort_bash();
    session.abort_compaction();
    let _ = tokio::time::timeout(Duration::from_secs(3), session.abort()).await;
    let _ = tokio::time::timeout(Duration::from_secs(3), session.shutdown_extensions()).await;
}

async fn handle_line(session: &AgentSession, output: &Output, line: &str) {
    let (id, kind, command) = match parse_line(line) {
        Input::Invalid(response) => return output.line(&response),
        Input::UiResponse(_) => return,
        Input::Command { id, kind, command } => (id, kind, command),
    };
    let id = id.as_ref();
    match command {
        RpcCommand::Prompt {
            message,
            images,
            streaming_behavior,
        } => {
            // The response is written from the preflight callback itself, so it precedes
            // the run's first event.
            let (sender, receiver) = tokio::sync::oneshot::channel::<()>();
            let session = session.clone();
            let answer = output.clone();
            let id = id.cloned();
            tokio::spawn(async move {
                let options = PromptOptions {
                    images,
                    streaming_behavior,
                    source: Some("rpc".into()),
                    ..PromptOptions::default()
                };
                let preflight = Box::new(
                    move |result: Result<crate::agent_session::Disposition, String>| {
                        let response = match result {
                            Ok(disposition) => success(
                                id.as_ref(),
                                "prompt",
                                Some(json!({ "disposition": disposition.as_str() })),
                            ),
                            Err(message) => error(id.as_ref(), "prompt", &message),
                        };
                        answer.line(&response);
                        let _ = sender.send(());
                    },
                );
                let _ = session.prompt(&message, options, Some(preflight)).await;
            });
            let _ = receiver.await;
        }
        RpcCommand::Bash {
            command,
            exclude_from_context,
        } => {
            let session = session.clone();
            let output = output.clone();
            let id = id.cloned();
            tokio::spawn(async move {
                // pi 1.5 streams the output as it comes, one event per chunk.
                let updates = output.clone();
                let update_id = id.clone();
                let on_chunk: crate::tools::bash_process::ChunkFn = Arc::new(move |delta: &str| {
                    let mut event = Map::new();
                    event.insert("type".into(), "bash_execution_update".into());
                    if let Some(id) = &update_id {
                        event.insert("id".into(), id.clone());
                    }
                    event.insert("delta".into(), delta.into());
                    updates.line(&event);
                });
                let response = match session
                    .execute_rpc_bash(&command, exclude_from_context, Some(on_chunk))
                    .await
                {
                    Ok(result) => success(id.as_ref(), "bash", serde_json::to_value(result).ok()),
                    Err(e) => error(id.as_ref(), "bash", &e.0),
                };
                output.line(&response);
            });
        }
        RpcCommand::Compact {
            custom_instructions,
        } => {
            let session = session.clone();
            let output = output.clone();
            let id = id.cloned();
            tokio::spawn(async move {
                let response = match session.compact(custom_instructions.as_deref()).await {
                    Ok(result) => {
                        success(id.as_ref(), "compact", serde_json::to_value(result).ok())
                    }
                    Err(e) => error(id.as_ref(), "compact", &e.0),
                };
                output.line(&response);
            });
        }
        command => {
            let response = match execute(session, command).await {
                Ok(data) => success(id, &kind, data),
                Err(e) => error(id, &kind, &e.0),
            };
            output.line(&response);
        }
    }
}

fn to_value(value: impl serde::Serialize) -> Option<Value> {
    serde_json::to_value(value).ok()
}

/// Runs a command that answers at once (or after a short wait); `Ok(None)` is a success
/// without data.
async fn execute(
    session: &AgentSession,
    command: RpcCommand,
) -> Result<Option<Value>, SessionOpError> {
    Ok(match command {
        // Through the extensions' `input` handlers first, as pi 1.6.0.
        RpcCommand::Steer { message, images } => {
            let disposition = session.steer(&message, images, "rpc").await?;
            Some(json!({ "disposition": disposition.as_str() }))
        }
        RpcCommand::FollowUp { message, images } => {
            let disposition = session.follow_up(&message, images, "rpc").await?;
            Some(json!({ "disposition": disposition.as_str() }))
        }
        RpcCommand::Abort => {
            // A running compaction is cancelled too, and answered for first (pi 0.85).
            session.abort_compaction();
            for _ in 0..500 {
                if !session.is_compacting() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            session.abort().await;
            // pi 1.5 answers after the run's agent_settled.
            session.wait_settled(Duration::from_secs(2)).await;
            None
        }
        RpcCommand::ClearQueue => {
            let (steering, follow_up) = session.clear_queue();
            Some(json!({ "steering": steering, "followUp": follow_up }))
        }
        RpcCommand::GetAvailableThinkingLevels => {
            let levels: Vec<&str> = session
                .available_thinking_levels()
                .into_iter()
                .map(pi_ai::ThinkingLevel::as_str)
                .collect();
            Some(json!({ "levels": levels }))
        }
        RpcCommand::GetEntries { since } => Some(
            session
                .with_session(|s| {
                    entries::entries_after(s.entries(), s.leaf_id(), since.as_deref())
                })
                .map_err(SessionOpError)?,
        ),
        RpcCommand::GetTree => {
            Some(session.with_session(|s| entries::tree(s.entries(), s.leaf_id())))
        }
        // pi 1.6.0: the replaced session's extensions hear `session_start` once (0.73 and
        // 1.5 sent it a second time).
        RpcCommand::NewSession { parent_session } => {
            let cancelled = session
                .new_session_with_extensions(parent_session, None)
                .await
                .map_err(SessionOpError)?;
            Some(json!({ "cancelled": cancelled }))
        }
        RpcCommand::GetState => Some(state(session)),
        RpcCommand::SetModel { provider, model_id } => {
            let model = session
                .registry()
                .available()
                .into_iter()
                .find(|m| m.provider == provider && m.id == model_id)
                .cloned()
                .ok_or_else(|| SessionOpError(format!("Model not found: {provider}/{model_id}")))?;
            session.set_model(model.clone())?;
            session.extension_events_settled().await;
            to_value(model)
        }
        RpcCommand::CycleModel => {
            let cycled = session.cycle_model(false);
            session.extension_events_settled().await;
            Some(to_value(cycled).unwrap_or(Value::Null))
        }
        RpcCommand::GetAvailableModels => {
            let models: Vec<_> = session
                .registry()
                .available()
                .into_iter()
                .cloned()
                .collect();
            Some(json!({ "models": models }))
        }
        RpcCommand::SetThinkingLevel { level } => {
            session.set_thinking_level(level);
            session.extension_events_settled().await;
            None
        }
        RpcCommand::CycleThinkingLevel => Some(match session.cycle_thinking_level() {
            Some(level) => json!({ "level": level }),
            None => Value::Null,
        }),
        RpcCommand::SetSteeringMode { mode } => {
            session.set_steering_mode(mode);
            None
        }
        RpcCommand::SetFollowUpMode { mode } => {
            session.set_follow_up_mode(mode);
            None
        }
        RpcCommand::SetAutoCompaction { enabled } => {
            session.set_auto_compaction_enabled(enabled);
            None
        }
        RpcCommand::SetAutoRetry { enabled } => {
            session.set_auto_retry_enabled(enabled);
            None
        }
        RpcCommand::AbortRetry => {
            session.abort_retry();
            None
        }
        RpcCommand::AbortBash => {
            session.abort_bash();
            None
        }
        RpcCommand::GetSessionStats => to_value(session.session_stats()),
        RpcCommand::ExportHtml { output_path } => {
            // The settings' theme, as the interactive mode would load it (dark when it
            // no longer exists).
            let settings = session.settings().get();
            let sources = crate::modes::interactive::theme::ThemeSources {
                settings: settings.themes.clone().unwrap_or_default(),
                ..Default::default()
            };
            let (theme, _) = crate::modes::interactive::theme::load_theme(
                settings.theme.as_deref(),
                &crate::config::paths::agent_dir(),
                session.cwd(),
                &sources,
            );
            let path = session.with_session(|manager| {
                crate::export::export_session_html_themed(
                    manager,
                    output_path.as_deref().map(std::path::Path::new),
                    session.cwd(),
                    Some(&theme),
                )
            });
            let path = path.map_err(|e| SessionOpError(e.to_string()))?;
            Some(json!({ "path": path.to_string_lossy() }))
        }
        RpcCommand::SwitchSession { session_path } => {
            let cancelled = session
                .switch_session_with_extensions(&session_path)
                .await
                .map_err(SessionOpError)?;
            Some(json!({ "cancelled": cancelled }))
        }
        RpcCommand::Fork { entry_id } => {
            let result = session.fork_with_extensions(&entry_id, None).await?;
            // An absent text is left out, as JSON.stringify drops undefined.
            Some(match result.text {
                Some(text) => json!({"text": text, "cancelled": result.cancelled}),
                None => json!({"cancelled": result.cancelled}),
            })
        }
        RpcCommand::Clone => {
            let cancelled = session.clone_with_extensions().await?;
            Some(json!({ "cancelled": cancelled }))
        }
        RpcCommand::GetForkMessages => {
            let messages: Vec<Value> = session
                .user_messages_for_forking()
                .into_iter()
                .map(|(entry_id, text)| json!({"entryId": entry_id, "text": text}))
                .collect();
            Some(json!({ "messages": messages }))
        }
        // No text: `{}` (pi's `{ text: undefined }`).
        RpcCommand::GetLastAssistantText => Some(match session.last_assistant_text() {
            Some(text) => json!({ "text": text }),
            None => json!({}),
        }),
        RpcCommand::SetSessionName { name } => {
            let name = name.trim();
            if name.is_empty() {
                return Err(SessionOpError("Session name cannot be empty".into()));
            }
            session.set_session_name(name)?;
            session.extension_events_settled().await;
            None
        }
        RpcCommand::GetMessages => Some(json!({ "messages": session.messages() })),
        RpcCommand::GetCommands => Some(json!({ "commands": session.slash_commands() })),
        RpcCommand::Prompt { .. } | RpcCommand::Bash { .. } | RpcCommand::Compact { .. } => None,
    })
}

/// `get_state`'s data, keys in the reference's order (absent values omitted).
fn state(session: &AgentSession) -> Value {
    let mut map = Map::new();
    if let Some(model) = to_value(session.model()) {
        map.insert("model".into(), model);
    }
    map.insert("thinkingLevel".into(), json!(session.thinking_level()));
    map.insert("isStreaming".into(), session.is_streaming().into());
    map.insert("isCompacting".into(), session.is_compacting().into());
    map.insert("steeringMode".into(), json!(session.steering_mode()));
    map.insert("followUpMode".into(), json!(session.follow_up_mode()));
    if let Some(file) = session.session_file() {
        map.insert("sessionFile".into(), file.to_string_lossy().into());
    }
    map.insert("sessionId".into(), session.session_id().into());
    if let Some(name) = session.session_name() {
        map.insert("sessionName".into(), name.into());
    }
    map.insert(
        "autoCompactionEnabled".into(),
        session.auto_compaction_enabled().into(),
    );
    map.insert("messageCount".into(), session.message_count().into());
    map.insert(
        "pendingMessageCount".into(),
        session.pending_message_count().into(),
    );
    Value::Object(map)
}
