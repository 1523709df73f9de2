//! Key handling: pickers first, then the app's actions, then the editor.

use std::time::{Duration, Instant};

use pi_tui::Input;
use pi_tui::components::editor::EditorAction;

use super::{App, Completion};
use crate::agent_session::{PromptOptions, StreamingBehavior, parse_bash_input};
use crate::modes::interactive::AppEvent;
use crate::modes::interactive::chat::NoticeKind;

/// Two presses of Ctrl+C (or Escape) within this window count as a double press.
const DOUBLE_PRESS: Duration = Duration::from_millis(500);

impl App {
    pub(super) async fn on_input(&mut self, input: &Input) {
        if self.overlay.is_some() {
            self.on_overlay_input(input).await;
            return;
        }
        // An open completion list owns Escape, Enter, Tab and the arrows.
        if !self.editor.is_showing_autocomplete() && self.on_app_key(input).await {
            return;
        }
        match self.editor.handle(input) {
            EditorAction::Submit(text) => self.on_submit(text).await,
            EditorAction::Changed => self.on_editor_changed(),
            EditorAction::Consumed | EditorAction::NotConsumed => {}
        }
    }

    fn on_editor_changed(&mut self) {
        let bash = self.editor.text().trim_start().starts_with('!');
        if bash != self.bash_mode {
            self.bash_mode = bash;
            self.update_editor_border();
        }
    }

    /// The `app.*` actions; true when the key was one of them.
    async fn on_app_key(&mut self, input: &Input) -> bool {
        let is = |id: &str| self.keys.matches(input, id);
        if is("app.interrupt") {
            self.on_escape().await;
        } else if is("app.clear") {
            let now = Instant::now();
            if self
                .last_ctrl_c
                .is_some_and(|t| now.duration_since(t) < DOUBLE_PRESS)
            {
                self.quit = Some(0);
            } else {
                self.editor.set_text("");
                self.on_editor_changed();
                self.last_ctrl_c = Some(now);
            }
        } else if is("app.exit") {
            if !self.editor.is_empty() {
                return false;
            }
            self.quit = Some(0);
        } else if is("app.thinking.cycle") {
            match self.session.cycle_thinking_level() {
                Some(level) => self.notice(
                    NoticeKind::Info,
                    &format!("Thinking level: {}", level.as_str()),
                ),
                None => self.notice(NoticeKind::Info, "Current model does not support thinking"),
            }
            self.update_editor_border();
            self.footer_dirty = true;
        } else if is("app.model.cycleForward") || is("app.model.cycleBackward") {
            let backward = is("app.model.cycleBackward");
            match self.session.cycle_model(backward) {
                Some(result) => {
                    let level = if result.model.reasoning {
                        format!(" (thinking: {})", result.thinking_level.as_str())
                    } else {
                        String::new()
                    };
                    self.notice(
                        NoticeKind::Info,
                        &format!("Switched to {}{level}", result.model.id),
                    );
                }
                None => self.notice(NoticeKind::Info, "Only one model available"),
            }
            self.update_editor_border();
            self.footer_dirty = true;
        } else if is("app.model.select") {
            self.open_model_picker(None);
        } else if is("app.tools.expand") {
            self.chat.toggle_tools_expanded();
        } else if is("app.thinking.toggle") {
            self.chat.toggle_thinking_hidden();
        } else if is("app.message.followUp") {
            let text = self.editor.expanded_text();
            if text.trim().is_empty() {
                return true;
            }
            if self.session.is_streaming() {
                self.editor.add_to_history(&text);
                self.editor.set_text("");
                self.session.follow_up(text.trim(), Vec::new());
            } else {
                self.editor.set_text("");
                self.on_submit(text).await;
            }
        } else if is("app.message.dequeue") {
            self.restore_queued_to_editor(false);
        } else if is("app.editor.external") {
            self.open_external_editor();
        } else if is("app.suspend") {
            self.suspend();
        } else if is("app.clipboard.pasteImage") {
            self.notice(
                NoticeKind::Warning,
                "Pasting images from the clipboard is not supported in this build; use @file",
            );
        } else if is("app.session.new") {
            self.run_slash(crate::modes::interactive::commands::Command::New)
                .await;
        } else if is("app.session.tree") {
            self.open_tree_picker();
        } else if is("app.session.fork") {
            self.open_fork_picker();
        } else if is("app.session.resume") {
            self.open_session_picker();
        } else {
            return false;
        }
        true
    }

    async fn on_escape(&mut self) {
        if self.session.is_compacting() {
            self.session.abort_compaction();
        } else if self.session.is_retrying() {
            self.session.abort_retry();
        } else if self.session.is_streaming() {
            self.restore_queued_to_editor(true);
            let session = self.session.clone();
            tokio::spawn(async move { session.abort().await });
        } else if self.session.is_bash_running() {
            self.session.abort_bash();
        } else if self.bash_mode {
            self.editor.set_text("");
            self.on_editor_changed();
        } else if self.editor.text().trim().is_empty() {
            let action = self
                .session
                .settings()
                .get()
                .double_escape_action
                .unwrap_or_else(|| "tree".to_owned());
            let now = Instant::now();
            if action != "none"
                && self
                    .last_escape
                    .is_some_and(|t| now.duration_since(t) < DOUBLE_PRESS)
            {
                self.last_escape = None;
                if action == "fork" {
                    self.open_fork_picker();
                } else {
                    self.open_tree_picker();
                }
            } else {
                self.last_escape = Some(now);
            }
        }
    }

    /// Moves queued steering and follow-up messages back into the editor.
    fn restore_queued_to_editor(&mut self, abort: bool) {
        let (steering, follow_up) = self.session.clear_queue();
        let queued: Vec<String> = steering.into_iter().chain(follow_up).collect();
        if !queued.is_empty() {
            let current = self.editor.text();
            let combined: Vec<String> = [queued.join("\n\n"), current]
                .into_iter()
                .filter(|t| !t.trim().is_empty())
                .collect();
            self.editor.set_text(&combined.join("\n\n"));
        }
        if abort {
            self.session.agent().abort();
        }
    }

    /// Enter in the editor: a command, `!` bash, or a prompt (queued while streaming).
    pub(super) async fn on_submit(&mut self, text: String) {
        let text = text.trim().to_owned();
        if text.is_empty() {
            return;
        }
        if let Some(command) = crate::modes::interactive::commands::parse(&text) {
            self.editor.add_to_history(&text);
            self.editor.set_text("");
            self.run_slash(command).await;
            return;
        }
        if let Some((command, exclude)) = parse_bash_input(&text) {
            if self.session.is_bash_running() {
                self.notice(
                    NoticeKind::Warning,
                    "A bash command is already running. Press Esc to cancel it first.",
                );
                self.editor.set_text(&text);
                return;
            }
            self.editor.add_to_history(&text);
            self.editor.set_text("");
            self.bash_mode = false;
            self.update_editor_border();
            self.run_bash(command.to_owned(), exclude);
            return;
        }
        self.editor.add_to_history(&text);
        self.editor.set_text("");
        if self.session.is_compacting() {
            self.after_compaction.push(text);
            self.notice(NoticeKind::Info, "Queued message for after compaction");
            return;
        }
        let behavior = self
            .session
            .is_streaming()
            .then_some(StreamingBehavior::Steer);
        let session = self.session.clone();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let options = PromptOptions {
                streaming_behavior: behavior,
                ..Default::default()
            };
            if let Err(e) = session.prompt(&text, options, None).await {
                let _ = tx.send(AppEvent::Done(Completion::PromptFailed(e.0)));
            }
        });
    }

    fn run_bash(&mut self, command: String, exclude: bool) {
        self.chat.start_bash(&command, exclude);
        let session = self.session.clone();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let chunk_tx = tx.clone();
            let on_chunk: crate::tools::bash_process::ChunkFn =
                std::sync::Arc::new(move |chunk: &str| {
                    let _ = chunk_tx.send(AppEvent::Done(Completion::BashChunk(chunk.to_owned())));
                });
            let result = session
                .execute_bash(&command, exclude, Some(on_chunk))
                .await
                .map_err(|e| e.0);
            let _ = tx.send(AppEvent::Done(Completion::BashDone(result)));
        });
    }
}
