//! Key handling: extension dialogs and components first, then pickers, extension
//! shortcuts, the app's actions, and the editor.

use std::time::{Duration, Instant};

use pi_tui::Input;
use pi_tui::components::editor::EditorAction;

use super::{App, Completion};
use crate::agent_session::{PromptOptions, StreamingBehavior, parse_bash_input};
use crate::modes::interactive::AppEvent;
use crate::modes::interactive::chat::NoticeKind;
use crate::modes::interactive::extension_ui::KeyTarget;
use crate::modes::interactive::extension_ui::key_bytes::encode_input;

/// Two presses of Ctrl+C (or Escape) within this window count as a double press.
const DOUBLE_PRESS: Duration = Duration::from_millis(500);

/// The app's actions, in the order a key is matched against them.
const APP_ACTIONS: &[&str] = &[
    "app.interrupt",
    "app.clear",
    "app.exit",
    "app.thinking.cycle",
    "app.model.cycleForward",
    "app.model.cycleBackward",
    "app.model.select",
    "app.tools.expand",
    "app.thinking.toggle",
    "app.message.followUp",
    "app.message.dequeue",
    "app.message.copy",
    "app.editor.external",
    "app.suspend",
    "app.clipboard.pasteImage",
    "app.session.new",
    "app.session.tree",
    "app.session.fork",
    "app.session.resume",
];

/// Actions whose keys extension shortcuts cannot take (the TypeScript pi's list).
const RESERVED_FOR_SHORTCUTS: &[&str] = &[
    "app.interrupt",
    "app.clear",
    "app.exit",
    "app.suspend",
    "app.thinking.cycle",
    "app.model.cycleForward",
    "app.model.cycleBackward",
    "app.model.select",
    "app.tools.expand",
    "app.thinking.toggle",
    "app.editor.external",
    "app.message.followUp",
    "tui.input.submit",
    "tui.select.confirm",
    "tui.select.cancel",
    "tui.input.copy",
    "tui.editor.deleteToLineEnd",
];

impl App {
    pub(super) async fn on_input(&mut self, input: &Input) {
        if self.ext.terminal_input {
            // The host's listeners see the key first; it comes back as TerminalInput.
            self.ext.remote.terminal_input(input.clone());
            return;
        }
        self.route_input(input).await;
    }

    /// Hands a key to whoever has focus.
    pub(super) async fn route_input(&mut self, input: &Input) {
        // Fullscreen: the transcript's keys come before the editor's (pi 1.6).
        if self.on_search_key(input) || self.on_viewport_key(input) {
            return;
        }
        match self.ext.key_target() {
            KeyTarget::Dialog => return self.on_dialog_input(input),
            KeyTarget::Component(id) => return self.ext.remote.input(id, encode_input(input)),
            KeyTarget::App => {}
        }
        if self.overlay.is_some() {
            self.on_overlay_input(input).await;
            return;
        }
        if let Some(id) = self.ext.editor {
            // A custom editor handles everything (app keys come back as editorAction).
            self.ext.remote.input(id, encode_input(input));
            return;
        }
        if let Some(shortcut) = self.extension_shortcut(input) {
            self.run_extension_shortcut(shortcut);
            return;
        }
        // An open completion list owns Escape, Enter, Tab and the arrows.
        if !self.editor.is_showing_autocomplete() && self.on_app_key(input).await {
            self.sync_editor_mirror();
            return;
        }
        match self.editor.handle(input) {
            EditorAction::Submit(text) => self.on_submit(text).await,
            EditorAction::Changed => self.on_editor_changed(),
            EditorAction::Consumed | EditorAction::NotConsumed => {}
        }
        self.sync_editor_mirror();
    }

    /// The extension shortcut this key runs (the last registration wins; keys of
    /// reserved app actions stay pi's).
    fn extension_shortcut(&self, input: &Input) -> Option<String> {
        if self.ext.runtime.is_empty() {
            return None;
        }
        let key = input.id()?;
        let reserved = RESERVED_FOR_SHORTCUTS
            .iter()
            .any(|action| self.keys.keys(action).contains(&key));
        if reserved {
            return None;
        }
        self.ext
            .runtime
            .shortcuts()
            .into_iter()
            .rev()
            .find(|s| pi_tui::normalize_key_id(&s.shortcut) == key)
            .map(|s| s.shortcut)
    }

    fn run_extension_shortcut(&mut self, shortcut: String) {
        self.sync_editor_mirror();
        let runtime = std::sync::Arc::clone(&self.ext.runtime);
        let tx = self.tx.clone();
        tokio::spawn(async move {
            if let Err(error) = runtime.run_shortcut(&shortcut).await {
                let _ = tx.send(AppEvent::Ext(
                    crate::modes::interactive::extension_ui::ExtEvent::ShortcutFailed(error),
                ));
            }
        });
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
        let Some(action) = APP_ACTIONS
            .iter()
            .copied()
            .find(|id| self.keys.matches(input, id))
        else {
            return false;
        };
        if action == "app.exit" && !self.editor.is_empty() {
            return false;
        }
        self.run_app_action(action).await
    }

    /// Runs an app action (from a key, or a custom editor's `editorAction`); false for an
    /// unknown action.
    pub(super) async fn run_app_action(&mut self, action: &str) -> bool {
        let is = |id: &str| action == id;
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
                self.set_editor_text("");
                self.on_editor_changed();
                self.last_ctrl_c = Some(now);
            }
        } else if is("app.exit") {
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
            let expanded = !self.chat.tools_expanded();
            self.set_tools_expanded(expanded);
        } else if is("app.thinking.toggle") {
            self.chat.toggle_thinking_hidden();
            let hidden = self.chat.thinking_hidden();
            self.session
                .settings()
                .set("hideThinkingBlock", serde_json::Value::Bool(hidden));
            let state = if hidden { "hidden" } else { "visible" };
            self.notice(NoticeKind::Info, &format!("Thinking blocks: {state}"));
        } else if is("app.message.followUp") {
            let text = self.current_editor_text();
            if text.trim().is_empty() {
                return true;
            }
            if self.session.is_streaming() {
                self.editor.add_to_history(&text);
                self.set_editor_text("");
                if let Err(e) = self
                    .session
                    .follow_up(text.trim(), Vec::new(), "interactive")
                    .await
                {
                    self.notice(NoticeKind::Error, &e.0);
                }
            } else {
                self.set_editor_text("");
                self.on_submit(text).await;
            }
        } else if is("app.message.dequeue") {
            self.restore_queued_to_editor(false);
        } else if is("app.message.copy") {
            self.copy_on_key();
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
            self.set_editor_text("");
            self.on_editor_changed();
        } else if self.current_editor_text().trim().is_empty() {
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
            self.set_editor_text(&combined.join("\n\n"));
        }
        if abort {
            self.session.agent().abort();
        }
    }

    /// Enter in the editor: a command, `!` bash, or a prompt (queued while streaming).
    pub(super) async fn on_submit(&mut self, text: String) {
        let text = text.trim().to_owned();
        if text.is_empty() {
            self.act_on_device_code();
            return;
        }
        // `/llama` is a command while the built-in llama.cpp extension is on.
        let llama_on = self.session.registry().llama_enabled();
        let command = crate::modes::interactive::commands::parse(&text)
            .filter(|c| *c != crate::modes::interactive::commands::Command::Llama || llama_on);
        if let Some(command) = command {
            self.editor.add_to_history(&text);
            self.set_editor_text("");
            self.run_slash(command).await;
            return;
        }
        if let Some((command, exclude)) = parse_bash_input(&text) {
            if self.session.is_bash_running() {
                self.notice(
                    NoticeKind::Warning,
                    "A bash command is already running. Press Esc to cancel it first.",
                );
                self.set_editor_text(&text);
                return;
            }
            self.editor.add_to_history(&text);
            self.set_editor_text("");
            self.bash_mode = false;
            self.update_editor_border();
            self.run_bash(command.to_owned(), exclude);
            return;
        }
        self.editor.add_to_history(&text);
        self.set_editor_text("");
        if self.no_model {
            self.notice(NoticeKind::Error, super::FIRST_RUN_HELP);
            return;
        }
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
                .execute_user_bash(&command, exclude, Some(on_chunk))
                .await
                .map_err(|e| e.0);
            let _ = tx.send(AppEvent::Done(Completion::BashDone(result)));
        });
    }
}
