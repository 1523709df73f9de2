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

    /// `/session`: the session's file, messages, tokens, cache warming and cost, as pi
    /// 1.6.0 shows them.
    fn session_info(&mut self) {
        use crate::agent_session::format_cache_warming_status;
        use crate::session::cache_waste::compute_cache_waste;
        use crate::session::usage_breakdown::usage_cost_breakdown;

        let stats = self.session.session_stats();
        let registry = self.session.registry();
        let cache_read_price =
            |provider: &str, id: &str| registry.find(provider, id).map(|m| m.cost.cache_read);
        let (cache_waste, breakdown) = self.session.with_session(|s| {
            (
                compute_cache_waste(s.entries(), &cache_read_price),
                usage_cost_breakdown(s.entries()),
            )
        });
        let warming = self.session.cache_warming_status();
        let mode = match self
            .session
            .settings()
            .global_value("cacheWarming")
            .as_ref()
            .and_then(serde_json::Value::as_str)
        {
            Some(mode @ ("off" | "streaming" | "idle")) => mode.to_owned(),
            _ => "idle".to_owned(),
        };
        let model = self.session.model();
        let selected_key = format!("{}/{}", model.provider, model.id);

        let bold = |s: &str| pi_tui::Style::default().bold().paint(s);
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
        info += &format!("{} {}\n", dim("Total:"), stats.total_messages);
        info += &format!("{} {}\n", dim("User:"), stats.user_messages);
        info += &format!("{} {}\n", dim("Assistant:"), stats.assistant_messages);
        info += &format!(
            "{} {} calls, {} results\n\n",
            dim("Tools:"),
            stats.tool_calls,
            stats.tool_results
        );
        info += &format!("{}\n", bold("Tokens"));
        let tokens = stats.tokens;
        let prompt = tokens.input + tokens.cache_read + tokens.cache_write;
        info += &format!("{} {}\n", dim("Input:"), n(prompt));
        if prompt > 0 && (tokens.cache_read > 0 || tokens.cache_write > 0) {
            let hit_rate = dim(&format!(
                "({}%)",
                to_fixed(tokens.cache_read as f64 / prompt as f64 * 100.0, 1)
            ));
            info += &format!("  {} {} {hit_rate}\n", dim("Cached:"), n(tokens.cache_read));
            let written = if tokens.cache_write > 0 {
                format!(
                    " {}",
                    dim(&format!("({} written to cache)", n(tokens.cache_write)))
                )
            } else {
                String::new()
            };
            info += &format!(
                "  {} {}{written}\n",
                dim("Uncached:"),
                n(tokens.input + tokens.cache_write)
            );
        }
        info += &format!("{} {}\n", dim("Output:"), n(tokens.output));
        info += &format!("{} {}\n", dim("Total:"), n(tokens.total));
        info += &format!("\n{}\n", bold("Cache Warming"));
        info += &format!("{} {mode}\n", dim("Mode:"));
        info += &format!(
            "{} {}\n",
            dim("Status:"),
            format_cache_warming_status(&warming, std::time::Instant::now())
        );
        if let Some(decision) = warming.decision.filter(|d| d.economics_available) {
            info += &format!(
                "{} ${}\n",
                dim("Cache miss penalty:"),
                to_fixed(decision.miss_cost, 3)
            );
            info += &format!(
                "{} ${}\n",
                dim("Refresh cost:"),
                to_fixed(decision.warm_cost, 3)
            );
        }
        if stats.cost > 0.0 || cache_waste.missed_tokens > 0 {
            info += &format!("\n{}\n", bold("Cost"));
            info += &format!("{} ${}", dim("Total:"), to_fixed(stats.cost, 3));
            if breakdown.len() > 1 || breakdown.first().is_none_or(|row| row.key != selected_key) {
                for row in &breakdown {
                    info += &format!(
                        "\n  {} ${} {}",
                        dim(&format!("{}:", row.key)),
                        to_fixed(row.cost, 3),
                        dim(&format!("({} tokens)", format_tokens(row.tokens)))
                    );
                }
            }
            if cache_waste.missed_tokens > 0 {
                let misses = if cache_waste.miss_count == 1 {
                    "1 miss".to_owned()
                } else {
                    format!("{} misses", cache_waste.miss_count)
                };
                let detail = format!("{} tokens, {misses}", n(cache_waste.missed_tokens));
                info += &if cache_waste.missed_cost >= 1e-4 {
                    format!(
                        "\n{} ${} {}",
                        dim("Cache Re-billed:"),
                        to_fixed(cache_waste.missed_cost, 3),
                        dim(&format!("({detail})"))
                    )
                } else {
                    format!("\n{} {detail}", dim("Cache Re-billed:"))
                };
            }
        }
        self.chat.add_text_block(&info);
    }
}

/// Token counts as pi 1.6.0's `formatTokens` writes them: `999`, `5.0k` (for 5,050: the
/// tenth rounded as `toFixed` does), `45k`, `1.5M`, `12M`.
fn format_tokens(count: u64) -> String {
    let n = count as f64;
    if count < 1_000 {
        count.to_string()
    } else if count < 10_000 {
        format!("{}k", to_fixed(n / 1e3, 1))
    } else if count < 1_000_000 {
        format!("{}k", (n / 1e3).round())
    } else if count < 10_000_000 {
        format!("{}M", to_fixed(n / 1e6, 1))
    } else {
        format!("{}M", (n / 1e6).round())
    }
}

/// `value` with `digits` decimals, as JavaScript's `toFixed` writes it: the nearest
/// decimal, and an exact tie rounded away from zero (Rust rounds ties to even).
fn to_fixed(value: f64, digits: usize) -> String {
    let exact = format!("{value:.60}");
    let cut = exact.find('.').map_or(exact.len(), |dot| dot + 1 + digits);
    let rest = &exact[cut.min(exact.len())..];
    let tie = rest.starts_with('5') && rest[1..].bytes().all(|b| b == b'0');
    if !tie {
        return format!("{value:.digits$}");
    }
    // Away from zero: one more unit in the last kept place of the truncated digits.
    let (sign, kept) = exact[..cut]
        .strip_prefix('-')
        .map_or(("", &exact[..cut]), |k| ("-", k));
    let units: u128 = kept.replace('.', "").parse().unwrap_or(0) + 1;
    let text = format!("{units:0>width$}", width = digits + 1);
    let (whole, fraction) = text.split_at(text.len() - digits);
    if digits == 0 {
        format!("{sign}{whole}")
    } else {
        format!("{sign}{whole}.{fraction}")
    }
}

#[cfg(test)]
mod tests {
    use super::to_fixed;

    #[test]
    fn to_fixed_rounds_as_javascript() {
        assert_eq!(to_fixed(0.0625, 3), "0.063");
        assert_eq!(to_fixed(0.0005, 3), "0.001");
        assert_eq!(to_fixed(1.0005, 3), "1.000");
        assert_eq!(to_fixed(2.5, 0), "3");
        assert_eq!(to_fixed(12.34, 1), "12.3");
        assert_eq!(to_fixed(0.0, 3), "0.000");
        assert_eq!(to_fixed(87.5, 1), "87.5");
        assert_eq!(to_fixed(-0.0625, 3), "-0.063");
    }

    #[test]
    fn format_tokens_as_pi_16() {
        assert_eq!(super::format_tokens(999), "999");
        // 5.05 is 5.0499… as a double.
        assert_eq!(super::format_tokens(5_050), "5.0k");
        assert_eq!(super::format_tokens(5_150), "5.2k");
        assert_eq!(super::format_tokens(45_500), "46k");
        assert_eq!(super::format_tokens(1_500_000), "1.5M");
        assert_eq!(super::format_tokens(12_400_000), "12M");
    }
}
