//! Non-interactive runs (print and JSON modes) over an [`AgentSession`]: each prompt in
//! turn, with the session's auto-retry and compaction.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};

use pi_agent_core::AgentMessage;
use pi_ai::{ImageContent, StopReason};

use crate::agent_session::{AgentSession, PromptOptions};

/// How results are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// The last reply's text; errors on stderr with exit code 1.
    Text,
    /// The session header, then every event as one JSON line; exit code 0.
    Json,
}

/// One prompt of a run: its text and images.
#[derive(Debug, Clone, Default)]
pub struct RunPrompt {
    pub text: String,
    pub images: Vec<ImageContent>,
}

fn print_line(value: &impl serde::Serialize) {
    if let Ok(line) = serde_json::to_string(value) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}

/// Sends each prompt in turn and returns the exit code. Extensions run without a UI
/// (`ctx.hasUI` false; dialogs answer at once) and their errors go to stderr.
pub async fn run(session: AgentSession, prompts: Vec<RunPrompt>, output: Output) -> i32 {
    // Like the TypeScript pi, a one-shot run does not wait for a threshold compaction after
    // the reply; the next prompt of the session compacts first.
    session.set_compact_after_runs(false);
    if output == Output::Json {
        session.with_session(|s| print_line(s.header()));
        let wire = crate::modes::wire::WireEvents::new(session.will_retry_flag());
        session.subscribe(move |event| print_line(&wire.encode(event)));
    }
    session
        .bind_extensions(
            Arc::new(crate::extensions::NoUi),
            Arc::new(|error: crate::extensions::ExtensionErrorInfo| {
                eprintln!(
                    "Extension error ({}): {}",
                    error.extension_path, error.error
                );
            }),
            Arc::new(|| {}),
        )
        .await;
    let code = run_prompts(&session, prompts, output).await;
    session.shutdown_extensions().await;
    code
}

async fn run_prompts(session: &AgentSession, prompts: Vec<RunPrompt>, output: Output) -> i32 {
    // SIGINT / SIGTERM / SIGHUP abort the run (running tools kill their process groups),
    // then pi exits with 128 + the signal number.
    let signaled = Arc::new(AtomicI32::new(0));
    {
        let session = session.clone();
        let signaled = Arc::clone(&signaled);
        let signal = crate::modes::signals::wait_for_signal();
        tokio::spawn(async move {
            if let Some(code) = signal.await {
                signaled.store(code, Ordering::SeqCst);
                session.abort_bash();
                session.abort_compaction();
                session.abort().await;
            }
        });
    }
    for prompt in prompts {
        if let Some((command, exclude)) = crate::agent_session::parse_bash_input(&prompt.text) {
            match session.execute_bash(command, exclude, None).await {
                Ok(result) if output == Output::Text => {
                    let mut out = std::io::stdout().lock();
                    let _ = out.write_all(result.output.as_bytes());
                    if !result.output.is_empty() && !result.output.ends_with('\n') {
                        let _ = out.write_all(b"\n");
                    }
                    let _ = out.flush();
                }
                Ok(_) => {}
                Err(e) => {
                    eprintln!("{e}");
                    return 1;
                }
            }
            continue;
        }
        let options = PromptOptions {
            images: prompt.images,
            ..PromptOptions::default()
        };
        if let Err(e) = session.prompt(&prompt.text, options, None).await {
            eprintln!("{e}");
            return 1;
        }
        if signaled.load(Ordering::SeqCst) != 0 {
            break;
        }
        let failed = session.agent().with_messages(|m| {
            m.last()
                .and_then(AgentMessage::as_assistant)
                .is_some_and(|a| a.stop_reason.is_failure())
        });
        if failed {
            break;
        }
    }
    let signal_code = signaled.load(Ordering::SeqCst);
    if signal_code != 0 {
        return signal_code;
    }
    if output == Output::Json {
        return 0;
    }
    // The last message decides, as in pi 1.6: when it is not an assistant's (a reply cut
    // short and left out of the context for recovery), nothing is printed.
    let last = session.agent().with_messages(|messages| {
        messages
            .last()
            .and_then(AgentMessage::as_assistant)
            .cloned()
    });
    let Some(last) = last else {
        return 0;
    };
    if matches!(last.stop_reason, StopReason::Error | StopReason::Aborted) {
        // pi 1.6's fallback names the stop reason: `Request error`, `Request aborted`.
        let text = last.error_message.clone().unwrap_or_else(|| {
            format!(
                "Request {}",
                if last.stop_reason == StopReason::Aborted {
                    "aborted"
                } else {
                    "error"
                }
            )
        });
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
    // pi 1.6: a reply cut off at the output limit is printed, then flagged and exit 1.
    if last.stop_reason == StopReason::Length {
        eprintln!("Response was truncated: the model reached its output token limit.");
        return 1;
    }
    0
}
