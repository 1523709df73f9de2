//! Running the built-in slash commands.

use super::{App, Completion};
use crate::modes::interactive::AppEvent;
use crate::modes::interactive::chat::NoticeKind;
use crate::modes::interactive::clipboard;
use crate::modes::interactive::commands::Command;
use crate::modes::interactive::theme::ThemeColor;

/// What `/reload` reports, in pi 1.6.0's words.
const RELOADED: &str =
    "Reloaded keybindings, extensions, skills, prompts, themes, and context files";

impl App {
    pub(super) async fn run_slash(&mut self, command: Command) {
        match command {
            Command::Settings => self.open_settings(),
            Command::Trust => self.open_trust(),
            Command::ScopedModels => self.open_scoped_models(),
            Command::Import(path) => self.import_command(path),
            Command::Share => self.share_command(),
            Command::Bug(description) => self.bug_command(description),
            Command::Model(search) => self.model_command(search),
            Command::Thinking(level) => match level {
                Some(level) => self.set_thinking(&level),
                None => self.open_thinking_picker(),
            },
            Command::Export(path) => self.export(path),
            Command::Copy => self.copy_last(),
            Command::Name(name) => self.name_command(&name),
            Command::Session => self.session_info(),
            Command::Changelog => self.show_changelog(),
            Command::Debug => self.write_debug_log(),
            Command::Mcp(args) => self.mcp_command(args).await,
            Command::Llama => self.llama_command(),
            Command::Hotkeys => {
                let lines = crate::modes::interactive::selectors::hotkeys::hotkeys_lines(
                    &self.keys,
                    &self.theme,
                    pi_tui::terminal::Terminal::size(self.renderer.terminal())
                        .0
                        .max(20),
                );
                self.chat.add_lines(lines);
            }
            Command::Fork => self.open_fork_picker(),
            Command::Tree => self.open_tree_picker(),
            Command::Resume => self.open_session_picker(),
            Command::Clone => {
                self.replace_session(|s| async move {
                    s.clone_with_extensions()
                        .await
                        .map(|cancelled| (!cancelled).then(|| "Cloned session".to_owned()))
                });
            }
            Command::New => {
                self.status = super::Status::Idle;
                self.replace_session(|s| async move {
                    s.new_session_with_extensions(None, None)
                        .await
                        .map_err(crate::agent_session::SessionOpError)
                        .map(|cancelled| (!cancelled).then(|| "✓ New session started".to_owned()))
                });
            }
            Command::Compact(instructions) => {
                if self.session.message_count() < 2 {
                    self.notice(NoticeKind::Warning, "Nothing to compact (no messages yet)");
                    return;
                }
                let session = self.session.clone();
                let tx = self.tx.clone();
                tokio::spawn(async move {
                    let result = session
                        .compact(instructions.as_deref())
                        .await
                        .map(|_| ())
                        .map_err(|e| e.0);
                    let _ = tx.send(AppEvent::Done(Completion::Compacted(result)));
                });
            }
            Command::Reload => {
                // Settings are read again; tools newly added to `defaultTools` turn on.
                self.session.reload_settings();
                // Skills, prompt templates and context files come from disk again.
                for warning in self.session.reload_resources() {
                    self.notice(NoticeKind::Warning, &warning);
                }
                self.keys =
                    std::sync::Arc::new(crate::modes::interactive::keymap::load(&self.agent_dir));
                let settings = self.session.settings().get();
                let (theme, warnings) = crate::modes::interactive::theme::load_theme(
                    self.use_theme.as_deref().or(settings.theme.as_deref()),
                    &self.agent_dir,
                    self.session.cwd(),
                    &self.theme_sources(),
                );
                for warning in warnings {
                    self.notice(NoticeKind::Warning, &warning);
                }
                self.set_theme(theme);
                self.editor = pi_tui::components::editor::Editor::new(
                    super::editor_theme(&self.theme),
                    std::sync::Arc::clone(&self.keys),
                );
                self.editor.set_focused(true);
                self.install_autocomplete();
                self.update_editor_border();
                self.reload_history();
                // mcp.json is read again: changed servers reconnect, removed ones stop.
                self.session.reload_mcp().await;
                self.notice(NoticeKind::Info, RELOADED);
                if !self.session.extension_runtime().is_empty() {
                    // Extensions load again in a new host (a dead one comes back); load
                    // failures arrive as extension errors.
                    let session = self.session.clone();
                    let tx = self.tx.clone();
                    tokio::spawn(async move {
                        if let Err(error) = session.reload_extensions().await {
                            let _ = tx.send(AppEvent::Done(Completion::PromptFailed(format!(
                                "Reloading extensions failed: {error}"
                            ))));
                        }
                    });
                }
            }
            Command::Login(provider) => self.login_command(provider),
            Command::Logout => self.logout_command(),
            Command::LocalLlm => self.local_llm_command(),
            Command::Quit => self.quit = Some(0),
        }
    }

    /// Runs an operation that replaces the session (aborting a run first); the view is
    /// rebuilt when it completes.
    pub(super) fn replace_session<F, Fut>(&mut self, op: F)
    where
        F: FnOnce(crate::agent_session::AgentSession) -> Fut + Send + 'static,
        Fut: std::future::Future<
                Output = Result<Option<String>, crate::agent_session::SessionOpError>,
            > + Send,
    {
        let session = self.session.clone();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            if session.is_streaming() {
                session.abort().await;
            }
            let result = op(session).await.map_err(|e| e.0);
            let _ = tx.send(AppEvent::Done(Completion::Replaced(result)));
        });
    }

    fn model_command(&mut self, search: Option<String>) {
        if let Some(term) = &search {
            let term_lower = term.to_lowercase();
            let exact: Vec<pi_ai::Model> = self
                .session
                .registry()
                .available()
                .into_iter()
                .filter(|m| {
                    m.id.to_lowercase() == term_lower || m.full_id().to_lowercase() == term_lower
                })
                .cloned()
                .collect();
            if let [model] = exact.as_slice() {
                self.apply_model(model.clone());
                return;
            }
        }
        self.open_model_picker(search);
    }

    pub(super) fn apply_model(&mut self, model: pi_ai::Model) {
        let id = model.id.clone();
        match self.session.set_model_as_default(model) {
            Ok(()) => {
                self.no_model = false;
                self.notice(NoticeKind::Info, &format!("Model: {id}"));
            }
            Err(e) => self.notice(NoticeKind::Error, &e.0),
        }
        self.footer_dirty = true;
        self.update_editor_border();
    }

    pub(super) fn set_thinking(&mut self, level: &str) {
        match pi_ai::ThinkingLevel::parse(level) {
            Some(level) => {
                self.session.set_thinking_level_as_default(level);
                let now = self.session.thinking_level();
                self.notice(
                    NoticeKind::Info,
                    &format!("Thinking level: {}", now.as_str()),
                );
                self.footer_dirty = true;
                self.update_editor_border();
            }
            None => self.notice(
                NoticeKind::Error,
                &format!(
                    "Unknown thinking level \"{level}\" (off, minimal, low, medium, high, xhigh, max)"
                ),
            ),
        }
    }

    fn export(&mut self, path: Option<String>) {
        if path.as_deref().is_some_and(|p| p.ends_with(".jsonl")) {
            let base = std::env::current_dir().unwrap_or_default();
            let result = self.session.with_session(|s| {
                crate::export::jsonl::export_session_jsonl(
                    s,
                    path.as_deref().map(std::path::Path::new),
                    &base,
                )
            });
            match result {
                Ok(file) => self.notice(
                    NoticeKind::Info,
                    &format!("Session exported to: {}", file.display()),
                ),
                Err(e) => {
                    self.notice(NoticeKind::Error, &format!("Failed to export session: {e}"));
                }
            }
            return;
        }
        let result = self.session.with_session(|s| {
            crate::export::export_session_html_themed(
                s,
                path.as_deref().map(std::path::Path::new),
                self.session.cwd(),
                Some(&self.theme),
            )
        });
        match result {
            Ok(file) => self.notice(
                NoticeKind::Info,
                &format!("Session exported to: {}", file.display()),
            ),
            Err(e) => self.notice(NoticeKind::Error, &format!("Failed to export session: {e}")),
        }
    }

    /// Ctrl+X (`app.message.copy`): in fullscreen the active selection, or the last
    /// answer with a flash; in regular mode the last answer with a notice.
    pub(super) fn copy_on_key(&mut self) {
        if self.fullscreen.is_none() {
            return self.copy_last();
        }
        if self.copy_selection() {
            return;
        }
        match self.session.last_assistant_text() {
            Some(text) => self.copy_text_with_flash(&text),
            None => self.notice(NoticeKind::Error, "No agent messages to copy yet."),
        }
    }

    fn copy_last(&mut self) {
        let Some(text) = self.session.last_assistant_text() else {
            self.notice(NoticeKind::Error, "No agent messages to copy yet.");
            return;
        };
        clipboard::copy_with_program(&text);
        let _ = pi_tui::terminal::Terminal::write(
            self.renderer.terminal_mut(),
            &clipboard::osc52(&text),
        );
        self.notice(NoticeKind::Info, "Copied last agent message to clipboard");
    }

    fn name_command(&mut self, name: &str) {
        if name.is_empty() {
            match self.session.session_name() {
                Some(current) => self.notice(NoticeKind::Info, &format!("Session name: {current}")),
                None => self.notice(NoticeKind::Warning, "Usage: /name <name>"),
            }
            return;
        }
        match self.session.set_session_name(name) {
            Ok(()) => self.notice(NoticeKind::Info, &format!("Session name set: {name}")),
            Err(e) => self.notice(NoticeKind::Error, &e.0),
        }
        self.footer_dirty = true;
    }

    /// `/mcp`: the servers, their state, exposure and tools; `/mcp reconnect <server>`.
    fn session_info(&mut self) {
        let stats = self.session.session_stats();
        let bold = |s: &str| self.theme.fg(ThemeColor::Text).bold().paint(s);
        let dim = |s: &str| self.theme.fg(ThemeColor::Dim).paint(s);
        let n = crate::modes::interactive::components::summary_message::format_thousands;
        let mut info = format!("{}\n\n", bold("Session Info"));
        if let Some(name) = self.session.session_name() {
            info += &format!("{} {name}\n", dim("Name:"));
        }
        info += &format!(
            "{} {}\n",
            dim("File:"),
            stats.session_file.as_deref().unwrap_or("In-memory")
        );
        info += &format!("{} {}\n\n", dim("ID:"), stats.session_id);
        info += &format!("{}\n", bold("Messages"));
        info += &format!("{} {}\n", dim("User:"), stats.user_messages);
        info += &format!("{} {}\n", dim("Assistant:"), stats.assistant_messages);
        info += &format!("{} {}\n", dim("Tool Calls:"), stats.tool_calls);
        info += &format!("{} {}\n", dim("Tool Results:"), stats.tool_results);
        info += &format!("{} {}\n\n", dim("Total:"), stats.total_messages);
        info += &format!("{}\n", bold("Tokens"));
        info += &format!("{} {}\n", dim("Input:"), n(stats.tokens.input));
        info += &format!("{} {}\n", dim("Output:"), n(stats.tokens.output));
        if stats.tokens.cache_read > 0 {
            info += &format!("{} {}\n", dim("Cache Read:"), n(stats.tokens.cache_read));
        }
        if stats.tokens.cache_write > 0 {
            info += &format!("{} {}\n", dim("Cache Write:"), n(stats.tokens.cache_write));
        }
        info += &format!("{} {}", dim("Total:"), n(stats.tokens.total));
        if stats.cost > 0.0 {
            info += &format!("\n\n{}\n{} {:.4}", bold("Cost"), dim("Total:"), stats.cost);
        }
        self.chat.add_text_block(&info);
    }
}
