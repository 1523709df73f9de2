//! `/local-llm`: installs and starts the small local model of `scripts/local-llm.sh`
//! (embedded in the binary), shows its progress in the chat and selects the model.

use tokio::io::{AsyncBufReadExt, BufReader};

use super::{App, Completion};
use crate::modes::interactive::AppEvent;
use crate::modes::interactive::chat::NoticeKind;

/// The setup script, as the repository ships it.
const SCRIPT: &str = include_str!("../../../../../../scripts/local-llm.sh");
/// The provider and model the script adds to models.json.
const PROVIDER: &str = "local";
const MODEL: &str = "gemma-3-270m";

/// A line of the script's progress, or its end.
#[derive(Debug)]
pub(crate) enum LocalLlmEvent {
    Line(String),
    Done(Result<(), String>),
}

impl App {
    pub(super) fn local_llm_command(&mut self) {
        if self.local_llm_running {
            self.notice(
                NoticeKind::Warning,
                "The local model setup is already running",
            );
            return;
        }
        self.local_llm_running = true;
        self.notice(
            NoticeKind::Info,
            "Setting up a local model (llama.cpp with Gemma 3 270M, no API key). The first run builds llama.cpp: about 10 minutes on 2 cores.",
        );
        let tx = self.tx.clone();
        let agent_dir = self.agent_dir.clone();
        tokio::spawn(async move {
            let send = |event| {
                let _ = tx.send(AppEvent::Done(Completion::LocalLlm(event)));
            };
            let spawned = tokio::process::Command::new("bash")
                .arg("-c")
                .arg(SCRIPT)
                .arg("local-llm.sh")
                .arg("setup")
                .env("PI_CODING_AGENT_DIR", &agent_dir)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .kill_on_drop(true)
                .spawn();
            let mut child = match spawned {
                Ok(child) => child,
                Err(e) => {
                    return send(LocalLlmEvent::Done(Err(format!("Could not run bash: {e}"))));
                }
            };
            let mut stdout = child.stdout.take().map(|s| BufReader::new(s).lines());
            let mut stderr = child.stderr.take().map(|s| BufReader::new(s).lines());
            let mut last_error = String::new();
            loop {
                tokio::select! {
                    line = async { stdout.as_mut()?.next_line().await.ok().flatten() }, if stdout.is_some() => match line {
                        Some(line) => send(LocalLlmEvent::Line(line)),
                        None => stdout = None,
                    },
                    line = async { stderr.as_mut()?.next_line().await.ok().flatten() }, if stderr.is_some() => match line {
                        Some(line) => {
                            last_error = line.clone();
                            send(LocalLlmEvent::Line(line));
                        }
                        None => stderr = None,
                    },
                    else => break,
                }
            }
            let result = match child.wait().await {
                Ok(status) if status.success() => Ok(()),
                Ok(status) => Err(if last_error.is_empty() {
                    format!("The local model setup failed ({status})")
                } else {
                    last_error
                }),
                Err(e) => Err(e.to_string()),
            };
            send(LocalLlmEvent::Done(result));
        });
    }

    pub(super) fn on_local_llm(&mut self, event: LocalLlmEvent) {
        match event {
            LocalLlmEvent::Line(line) => {
                // The build reports each percent: show every tenth.
                if let Some(percent) = building_percent(&line) {
                    if percent / 10 == self.local_llm_shown_decile && percent != 100 {
                        return;
                    }
                    self.local_llm_shown_decile = percent / 10;
                }
                self.notice(NoticeKind::Info, &line);
            }
            LocalLlmEvent::Done(Err(error)) => {
                self.local_llm_running = false;
                self.notice(
                    NoticeKind::Error,
                    &format!("Local model setup failed: {error}"),
                );
            }
            LocalLlmEvent::Done(Ok(())) => {
                self.local_llm_running = false;
                if let Err(e) = self.session.reload_credentials() {
                    self.notice(NoticeKind::Error, &e);
                    return;
                }
                let model = self.session.registry().find(PROVIDER, MODEL).cloned();
                match model {
                    Some(model) => self.apply_model(model),
                    None => self.notice(
                        NoticeKind::Warning,
                        "The local model is running, but models.json has no local/gemma-3-270m. Use /model to select a model.",
                    ),
                }
            }
        }
    }
}

/// The percent of a `building [####    ]  40%` progress line.
fn building_percent(line: &str) -> Option<u32> {
    let rest = &line[line.find("building [")?..];
    let close = rest.find(']')?;
    rest[close + 1..]
        .trim()
        .trim_end_matches('%')
        .trim()
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::building_percent;

    #[test]
    fn reads_the_build_percent() {
        assert_eq!(
            building_percent("[local-llm  120s] building [########            ]  40%"),
            Some(40)
        );
        assert_eq!(
            building_percent("[local-llm    3s] step 1/6: creating"),
            None
        );
    }
}
