//! The interactive app: its state, what it draws, and how it reacts to events.

mod bug_report;
mod changelog;
mod clicks;
mod debug;
mod display;
mod extensions;
mod fullscreen;
mod handoff;
mod import;
mod keys;
mod llama;
mod loaded_resources;
mod local_llm;
mod login;
mod mcp;
mod missing_cwd;
mod overlay;
mod program_status;
mod scoped_models;
mod scrollbar;
mod selection;
mod session_events;
mod settings;
mod share;
mod slash;
mod terminal_replies;
mod transcript_search;
mod trust;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use pi_tui::components::editor::{Editor, EditorTheme};
use pi_tui::components::loader::Loader;
use pi_tui::events::TermEvent;
use pi_tui::keybindings::Keybindings;
use pi_tui::renderer::Renderer;
use pi_tui::screen::ScreenRenderer;
use pi_tui::terminal::{CrosstermTerminal, Terminal as _};
use pi_tui::width::truncate_to_width;
use tokio::sync::mpsc::UnboundedSender;

use super::chat::{Chat, NoticeKind};
use super::components::ImageDisplay;
use super::components::footer::{Footer, FooterData};
use super::extension_ui::overlay_layout;
use super::extension_ui::tool_renderer::ChatExtensions;
use super::extension_ui::widgets::status_line;
use super::extension_ui::{ExtensionUiState, KeyTarget};
use super::theme::{self, Theme};
use super::{AppEvent, InteractiveOptions, keymap};
use crate::agent_session::{AgentSession, BashResult, ForkResult, NavigateResult};
use crate::modes::run::RunPrompt;

pub(crate) use llama::LlamaRequest;
pub(crate) use login::LoginEvent;
pub(crate) use overlay::Overlay;

/// A background operation that finished.
#[derive(Debug)]
pub(crate) enum Completion {
    /// A prompt could not be sent (no key, already compacting, …).
    PromptFailed(String),
    /// A manual compaction ended (the session's events already drew it).
    Compacted(Result<(), String>),
    /// `/tree` moved the leaf.
    Navigated(Result<NavigateResult, String>),
    /// `/fork` made a new session file.
    Forked(Result<ForkResult, String>),
    /// `/new`, `/resume`, `/clone` replaced the session; the notice to show.
    Replaced(Result<Option<String>, String>),
    /// `/import`, or a resume or fork where a session's folder is gone, switched the
    /// session: its status line, or why it did not happen (a cancel is shown as a status).
    Switched(Result<String, String>),
    /// Progress of `/local-llm`.
    LocalLlm(local_llm::LocalLlmEvent),
    /// Output of the running `!` command.
    BashChunk(String),
    /// The `!` command ended.
    BashDone(Result<BashResult, String>),
    /// Something that ran in the background (an MCP sign-in) has news.
    Notice(NoticeKind, String),
    /// A step of `/share` under the loader with this id ended.
    Share(u64, share::ShareEvent),
    /// A step of `/bug` under the loader with this id ended.
    Bug(u64, bug_report::BugEvent),
}

/// What a loader in the editor's place waits for.
pub(crate) enum LoaderPurpose {
    /// `/share`'s upload or gist.
    Share,
    /// `/bug`'s summary, then the report goes on as chosen.
    BugSummary(bug_report::BugFlow),
    /// `/bug`'s upload of this report.
    BugUpload(Box<crate::bug_report::BugReportBundle>),
}

/// A loader shown while `/share` or `/bug` works; Esc cancels it.
pub(crate) struct LoaderOverlay {
    /// Which loader this is: a result for another one is dropped.
    id: u64,
    view: super::components::bordered_loader::BorderedLoader,
    cancel: tokio_util::sync::CancellationToken,
    purpose: LoaderPurpose,
}

impl LoaderOverlay {
    pub(crate) fn render(&mut self, width: usize) -> Vec<String> {
        self.view.render(width)
    }
}

/// What the status line above the editor shows.
enum Status {
    Idle,
    Working(Loader),
    Compacting(Loader),
    Retrying(Loader),
}

/// All UI state; owned by the UI task.
pub(crate) struct App {
    session: AgentSession,
    tx: UnboundedSender<AppEvent>,
    renderer: display::Display,
    /// Fullscreen mode's viewport and settings; `None` in regular mode.
    fullscreen: Option<fullscreen::Fullscreen>,
    /// `--use-theme`: the theme of this run, over the `theme` setting.
    use_theme: Option<String>,
    /// The quit came from SIGTERM or SIGHUP (no resume hint then, as in pi 1.6).
    quit_by_signal: bool,
    theme: Theme,
    keys: Arc<Keybindings>,
    editor: Editor,
    chat: Chat,
    footer: Footer,
    footer_dirty: bool,
    overlay: Option<Overlay>,
    /// A device-code sign-in's page and code, until Enter opens the one and copies the other
    /// (pi 1.6.0 no longer opens the browser by itself).
    device_code: Option<(String, String)>,
    status: Status,
    steering: Vec<String>,
    follow_up: Vec<String>,
    /// Messages typed while a compaction runs, sent when it ends.
    after_compaction: Vec<String>,
    quit: Option<i32>,
    last_ctrl_c: Option<Instant>,
    last_escape: Option<Instant>,
    bash_mode: bool,
    agent_dir: PathBuf,
    /// `--theme` paths and `--no-themes`, for every later theme load.
    /// Theme sources fixed at startup (`--theme`, `--no-themes`, packages' themes).
    theme_fixed: theme::ThemeSources,
    /// Set while another program owns the terminal (the input thread stops reading).
    input_paused: Arc<AtomicBool>,
    /// What extensions show (dialogs, widgets, components, …).
    ext: ExtensionUiState,
    /// No model had a key at startup: the session holds a placeholder until `/login`,
    /// `/model` or `/local-llm` gives it one.
    no_model: bool,
    /// Shown in the footer when the tools are confined.
    sandbox_label: Option<String>,
    /// This run loaded the project's own resources (the folder is trusted).
    project_trusted: bool,
    /// `/local-llm` runs; the last tenth of its build progress shown.
    local_llm_running: bool,
    local_llm_shown_decile: u32,
    /// Hugging Face for the open `/llama` download panel.
    llama_hub: Option<crate::llama::huggingface::HuggingFace>,
    /// The search the `/llama` download panel waits for (a newer one cancels it).
    llama_search: Option<tokio_util::sync::CancellationToken>,
    /// OSC 7501 reports of what pi is doing.
    program_status: crate::modes::interactive::program_status::Reporter,
    /// The provider an account sign-in runs for (its name), until it ends.
    signing_in: Option<String>,
    /// The id of the last loader shown by `/share` or `/bug`.
    next_loader_id: u64,
    /// Color replies that came while pi reads keys, until the DA1 answer closes them.
    color_replies: pi_tui::terminal_colors::ReplyCollector,
}

impl App {
    /// Where custom themes come from now (the settings may have changed).
    pub(super) fn theme_sources(&self) -> theme::ThemeSources {
        theme::ThemeSources {
            settings: self.session.settings().get().themes.unwrap_or_default(),
            ..self.theme_fixed.clone()
        }
    }

    /// Loads theme and keybindings, takes over the terminal and draws the history.
    pub(crate) fn start(
        session: AgentSession,
        options: &InteractiveOptions,
        tx: UnboundedSender<AppEvent>,
        input_paused: Arc<AtomicBool>,
    ) -> std::io::Result<Self> {
        let settings = session.settings().get();
        let theme_sources = theme::ThemeSources {
            settings: settings.themes.clone().unwrap_or_default(),
            cli: options.theme_paths.clone(),
            no_discovery: options.no_themes,
            packages: options.package_themes.clone(),
            skip_project: !options.project_trusted,
        };
        let (theme, theme_warnings) = theme::load_theme(
            options.use_theme.as_deref().or(settings.theme.as_deref()),
            &options.agent_dir,
            session.cwd(),
            &theme_sources,
        );
        let keys = Arc::new(keymap::load(&options.agent_dir));
        let mut editor = Editor::new(editor_theme(&theme), Arc::clone(&keys));
        editor.set_focused(true);
        if let Some(padding) = settings.editor_padding_x {
            editor.set_padding_x(padding);
        }
        let mut terminal = CrosstermTerminal::new();
        terminal.set_keyboard_protocol(options.keyboard);
        terminal.start()?;
        // Either layout may reach the alternate screen (`/settings` switches at run time).
        pi_tui::screen::restore_on_panic();
        let tui_mode = options.tui_mode.unwrap_or_else(|| settings.tui_mode());
        let (renderer, fullscreen) = match tui_mode {
            crate::config::tui_settings::TuiMode::Regular => {
                (display::Display::Inline(Renderer::new(terminal)), None)
            }
            crate::config::tui_settings::TuiMode::Fullscreen => {
                let mut screen = ScreenRenderer::new(terminal);
                screen.enter()?;
                (
                    display::Display::Screen(screen, None),
                    Some(fullscreen::Fullscreen::new(&settings)),
                )
            }
        };
        let ext = ExtensionUiState::new(Arc::clone(session.extension_runtime()), tx.clone());
        let mut chat = Chat::new(&theme, settings.hide_thinking_block.unwrap_or(false));
        chat.set_image_display(ImageDisplay::from_store(session.settings()));
        chat.set_extensions(ChatExtensions {
            remote: ext.remote.clone(),
            runtime: Arc::clone(session.extension_runtime()),
        });
        let mut app = App {
            ext,
            chat,
            footer: Footer::new(&theme),
            session,
            tx,
            renderer,
            fullscreen,
            use_theme: options.use_theme.clone(),
            quit_by_signal: false,
            theme,
            keys,
            editor,
            footer_dirty: true,
            overlay: None,
            device_code: None,
            status: Status::Idle,
            steering: Vec::new(),
            follow_up: Vec::new(),
            after_compaction: Vec::new(),
            quit: None,
            last_ctrl_c: None,
            last_escape: None,
            bash_mode: false,
            agent_dir: options.agent_dir.clone(),
            theme_fixed: theme_sources.clone(),
            input_paused,
            no_model: options.no_model,
            sandbox_label: options.sandbox_label.clone(),
            project_trusted: options.project_trusted,
            local_llm_running: false,
            local_llm_shown_decile: u32::MAX,
            llama_hub: None,
            llama_search: None,
            program_status: crate::modes::interactive::program_status::Reporter::new(false),
            color_replies: Default::default(),
            signing_in: None,
            next_loader_id: 0,
        };
        app.install_autocomplete();
        if !settings.quiet_startup.is_some_and(|q| q.hides_header()) {
            let details = app.startup_details();
            let (compact, expanded) = app.header_variants(&options.version, details);
            app.chat.add_header(&compact, &expanded);
        }
        app.show_loaded_resources(app.startup_details());
        // After the history: rebuilding it keeps only the header.
        app.reload_history();
        app.show_startup_changelog();
        for warning in options.warnings.iter().chain(&theme_warnings) {
            app.chat.add_notice(NoticeKind::Warning, warning);
        }
        if app.no_model {
            app.chat.add_notice(NoticeKind::Warning, FIRST_RUN_HELP);
        }
        app.update_editor_border();
        if options.open_resume_picker {
            app.open_session_picker();
        }
        Ok(app)
    }

    pub(crate) fn should_quit(&self) -> bool {
        self.quit.is_some()
    }

    /// Whether a spinner is running (the loop ticks only then).
    pub(crate) fn is_animating(&self) -> bool {
        !matches!(self.status, Status::Idle)
            || self.chat.is_bash_running()
            || self.ext.has_countdown()
            || self.fullscreen.as_ref().is_some_and(|f| f.is_lingering())
            || matches!(self.overlay, Some(Overlay::Loader(_)))
    }

    pub(crate) fn tick(&mut self) {
        if let Some(screen) = self.fullscreen.as_mut() {
            screen.tick(Instant::now());
        }
        self.chat.tick();
        if let Some(Overlay::Loader(loader)) = self.overlay.as_mut() {
            loader.view.tick();
        }
        self.ext.expire_dialog(&self.theme, &self.keys);
        match &mut self.status {
            Status::Idle => {}
            Status::Working(l) | Status::Compacting(l) | Status::Retrying(l) => l.tick(),
        }
    }

    /// Sends a prompt given on the command line (once the extensions are bound).
    pub(crate) fn submit_initial(&mut self, prompt: RunPrompt) {
        if !self.ext.bound {
            self.ext.deferred_prompts.push(prompt);
            return;
        }
        let session = self.session.clone();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let options = crate::agent_session::PromptOptions {
                images: prompt.images,
                ..Default::default()
            };
            if let Err(e) = session.prompt(&prompt.text, options, None).await {
                let _ = tx.send(AppEvent::Done(Completion::PromptFailed(e.0)));
            }
        });
    }

    pub(crate) async fn handle(&mut self, event: AppEvent) {
        match event {
            AppEvent::Term(TermEvent::Input(input)) => self.on_input(&input).await,
            AppEvent::Term(TermEvent::Resize(..)) => {
                self.renderer.request_full_redraw();
                self.mirror_terminal();
            }
            AppEvent::Term(TermEvent::Mouse(mouse)) => self.on_mouse(mouse).await,
            AppEvent::Term(TermEvent::FocusLost) => self.on_focus_lost(),
            AppEvent::Term(TermEvent::Reply(reply)) => self.on_terminal_reply(reply),
            AppEvent::Ext(event) => self.on_ext_event(event).await,
            AppEvent::InputClosed => self.quit = Some(0),
            AppEvent::Session(event) => self.on_session_event(*event),
            // Resolved by the run loop before it gets here.
            AppEvent::SessionUpdate(_) => {}
            AppEvent::Done(done) => self.on_completion(done),
            AppEvent::Signal(code) => {
                self.quit_by_signal = true;
                self.quit = Some(code);
            }
            AppEvent::Suspend => self.suspend(),
            AppEvent::Login(event) => self.on_login_event(event),
            AppEvent::Llama(request) => self.on_llama_request(request),
        }
    }

    /// Draws everything: history, queued messages, status, extension widgets, editor (or
    /// picker, dialog, extension component), footer, then extension overlays on top.
    pub(crate) fn render(&mut self) {
        let (width, rows) = self.renderer.terminal().size();
        let width = width.max(1);
        if self.ext.remote.take_chat_dirty() {
            self.chat.invalidate_cache();
        }
        let dock = self.dock_lines(width);
        let lines = match self.fullscreen.as_ref() {
            Some(_) => self.compose_screen(dock, width, rows.max(1)),
            None => {
                let mut lines = self.chat.render(width);
                lines.extend(dock);
                lines
            }
        };
        self.sync_blocked_status();
        let overlays = self.ext.placed_overlays(width, rows.max(1));
        let lines = overlay_layout::composite(lines, &overlays, width, rows.max(1));
        let focused = match self.ext.key_target() {
            KeyTarget::Component(id) => Some(id),
            KeyTarget::App if self.overlay.is_none() => self.ext.editor,
            KeyTarget::App | KeyTarget::Dialog => None,
        };
        self.ext.sync_focus(focused);
        let _ = self.renderer.render(lines);
    }

    /// Everything below the transcript: queued messages, status, extension widgets, the
    /// editor (or what takes its place) and the footer. Fullscreen keeps it fixed.
    fn dock_lines(&mut self, width: usize) -> Vec<String> {
        let mut lines = Vec::new();
        if !self.steering.is_empty() || !self.follow_up.is_empty() {
            lines.push(String::new());
            let dim = self.theme.fg(theme::ThemeColor::Dim);
            for text in &self.steering {
                lines.push(pending_line(
                    &dim.paint(&format!("Steering: {text}")),
                    width,
                ));
            }
            for text in &self.follow_up {
                lines.push(pending_line(
                    &dim.paint(&format!("Follow-up: {text}")),
                    width,
                ));
            }
            let hint = format!(
                "↳ {} to edit all queued messages",
                self.key_text("app.message.dequeue")
            );
            lines.push(pending_line(&dim.paint(&hint), width));
        }
        let working_hidden = !self.ext.working_visible;
        // pi 1.6 draws the status into the default editor's top border; above an
        // extension's own editor it keeps its row.
        let embedded = self.ext.editor.is_none();
        let mut status = None;
        let mut loader_row = false;
        match &mut self.status {
            Status::Working(_) if working_hidden => lines.push(String::new()),
            Status::Idle => lines.push(String::new()),
            Status::Working(l) | Status::Compacting(l) if embedded => {
                lines.push(String::new());
                status = Some(border_status(
                    l,
                    &self.theme,
                    self.editor.border_style(),
                    false,
                ));
            }
            Status::Retrying(l) if embedded => {
                lines.push(String::new());
                status = Some(border_status(
                    l,
                    &self.theme,
                    self.editor.border_style(),
                    true,
                ));
            }
            Status::Working(l) | Status::Compacting(l) | Status::Retrying(l) => {
                lines.push(String::new());
                lines.extend(pi_tui::Component::render(l, width));
                loader_row = true;
            }
        }
        self.editor.set_top_status(status);
        if self.ext.widgets.has_above() {
            if loader_row {
                lines.push(String::new());
            }
            lines.extend(
                self.ext
                    .widgets
                    .render_above(width, &self.ext.remote, &self.theme),
            );
        }
        let slot = self.editor_slot(width);
        if let Some(screen) = self.fullscreen.as_mut() {
            screen.slot_in_dock = (lines.len(), slot.len());
        }
        lines.extend(slot);
        lines.extend(
            self.ext
                .widgets
                .render_below(width, &self.ext.remote, &self.theme),
        );
        match self.ext.footer {
            Some(id) => lines.extend(self.ext.remote.lines(id, width)),
            None => {
                if self.footer_dirty {
                    let data = self.footer_data();
                    self.footer.set_data(data);
                    self.footer_dirty = false;
                }
                lines.extend(pi_tui::Component::render(&mut self.footer, width));
                lines.extend(status_line(&self.ext.statuses, width, &self.theme));
            }
        }
        lines
    }

    /// What takes the editor's place: an extension dialog, an extension component, a
    /// picker, the extension's editor, or pi's editor.
    fn editor_slot(&mut self, width: usize) -> Vec<String> {
        if let Some(dialog) = self.ext.dialog_mut() {
            return dialog.render(width);
        }
        if let Some(id) = self.ext.inline_custom() {
            return self.ext.remote.lines(id, width);
        }
        if matches!(&self.overlay, Some(Overlay::Input(input)) if input.is_stale()) {
            // The sign-in finished in the browser: the pasted-code question is moot.
            self.overlay = None;
        }
        if let Some(overlay) = &mut self.overlay {
            return overlay.render(width);
        }
        if let Some(id) = self.ext.editor {
            return self.ext.remote.lines(id, width);
        }
        pi_tui::Component::render(&mut self.editor, width)
    }

    /// Restores the terminal and returns the exit code.
    pub(crate) async fn shutdown(mut self) -> i32 {
        self.ext.close_all();
        self.session.abort_bash();
        if self.session.is_streaming() {
            self.session.abort().await;
        }
        let transcript = self
            .fullscreen
            .as_ref()
            .is_some_and(|f| f.exit_output == crate::config::tui_settings::ExitOutput::Transcript);
        let _ = self.renderer.stop();
        self.clear_program_status();
        if transcript {
            self.print_document();
        }
        let _ = self.renderer.terminal_mut().stop();
        if !self.quit_by_signal {
            self.print_resume_hint();
        }
        self.quit.unwrap_or(0)
    }

    fn footer_data(&self) -> FooterData {
        let stats = self.session.session_stats();
        let usage = self.session.context_usage();
        let model = self.session.model();
        let cwd = self.session.cwd().to_string_lossy().into_owned();
        let home = std::env::var("HOME").unwrap_or_default();
        let cwd = match cwd.strip_prefix(&home) {
            Some(rest) if !home.is_empty() => format!("~{rest}"),
            _ => cwd,
        };
        let registry = self.session.registry();
        let providers: std::collections::HashSet<&str> = registry
            .available()
            .iter()
            .map(|m| m.provider.as_str())
            .collect();
        FooterData {
            cwd,
            git_branch: git_branch(self.session.cwd()),
            session_name: self.session.session_name(),
            input: stats.tokens.input,
            output: stats.tokens.output,
            cache_read: stats.tokens.cache_read,
            cache_write: stats.tokens.cache_write,
            cost: stats.cost,
            context_percent: usage.as_ref().and_then(|u| u.percent),
            context_window: usage
                .as_ref()
                .map_or(model.context_window, |u| u.context_window),
            auto_compact: self.session.auto_compaction_enabled(),
            model_id: if self.no_model {
                "no model".into()
            } else {
                model.id.clone()
            },
            provider: model.provider.clone(),
            reasoning: model.reasoning,
            thinking_level: self.session.thinking_level().as_str().to_owned(),
            show_provider: providers.len() > 1,
            sandbox: self.sandbox_label.clone(),
            experimental: crate::config::experimental::experimental_features_enabled(),
            routed: self
                .session
                .routed_model()
                .map(|(model, level)| (model.id, level.map(|l| l.as_str().to_owned()))),
        }
    }

    /// The display form of an action's first key (`ctrl+o`), or the action id.
    fn key_text(&self, action: &str) -> String {
        self.keys
            .keys(action)
            .first()
            .cloned()
            .unwrap_or_else(|| action.to_owned())
    }

    /// pi's `keyDisplayText`: every key of an action, capitalized (`Shift+Tab`).
    pub(super) fn key_display(&self, action: &str) -> String {
        crate::modes::interactive::selectors::hotkeys::key_display(&self.keys.keys(action))
    }

    /// pi 1.6's startup header, compact and expanded.
    /// Whether startup shows its details (the resource listing and the header's mention of
    /// it): `quietStartup` unset or `false`.
    fn startup_details(&self) -> bool {
        self.session
            .settings()
            .get()
            .quiet_startup
            .is_none_or(|q| q == crate::config::settings::QuietStartup::Flag(false))
    }

    fn header_variants(&self, version: &str, show_details: bool) -> (String, String) {
        let key = |action: &str| self.keys.keys(action).join("/");
        crate::modes::interactive::components::startup_header::header_variants(
            &self.theme,
            version,
            &key,
            show_details,
        )
    }

    /// Rebuilds the history view from the session (start, resume, tree, fork, new).
    fn reload_history(&mut self) {
        let messages = self.session.messages();
        let entries = if self.chat.draws_entries() {
            self.session
                .with_session(|s| s.build_context().custom_entries)
        } else {
            Vec::new()
        };
        self.chat.rebuild(&messages, &entries);
        // A selection points at rows of the old transcript (pi 1.6 drops it too).
        if let Some(screen) = self.fullscreen.as_mut() {
            screen.selection.clear();
        }
        self.footer_dirty = true;
        self.renderer.request_full_redraw();
    }

    fn update_editor_border(&mut self) {
        use theme::ThemeColor as C;
        let color = if self.bash_mode {
            C::BashMode
        } else {
            match self.session.thinking_level().as_str() {
                "minimal" => C::ThinkingMinimal,
                "low" => C::ThinkingLow,
                "medium" => C::ThinkingMedium,
                "high" => C::ThinkingHigh,
                "xhigh" => C::ThinkingXhigh,
                "max" => C::ThinkingMax,
                _ => C::ThinkingOff,
            }
        };
        self.editor.set_border_style(self.theme.fg(color));
    }

    fn notice(&mut self, kind: NoticeKind, text: &str) {
        self.chat.add_notice(kind, text);
    }
}

/// What a first run with no usable model says (at startup and on each prompt).
pub(super) const FIRST_RUN_HELP: &str = "No model selected.

To go on, either:
  /login       sign in with an account (Claude Pro/Max, ChatGPT, GitHub Copilot, Gemini) or save an API key
  /local-llm   install and start a small local model (no key needed; the first run builds llama.cpp, about 10 minutes)
  or set a provider's API key variable (for example ANTHROPIC_API_KEY) and start pi again.

Then use /model to select a model.";

/// A status as the editor's top border shows it: spinner and message in the border's colour
/// (a retry's spinner in the warning colour and its message muted, as pi 1.6 does); an
/// extension's own frames as given. Also the spinner alone, for narrow borders.
fn border_status(
    loader: &Loader,
    theme: &Theme,
    border: pi_tui::Style,
    retry: bool,
) -> (String, String) {
    let (spinner_style, message_style) = if retry {
        (
            theme.fg(theme::ThemeColor::Warning),
            theme.fg(theme::ThemeColor::Muted),
        )
    } else {
        (border, border)
    };
    let frame = loader.frame();
    let spinner = if loader.has_custom_frames() {
        frame.to_owned()
    } else {
        spinner_style.paint(frame)
    };
    let message = message_style.paint(loader.message());
    let whole = if frame.is_empty() {
        message
    } else {
        format!("{spinner} {message}")
    };
    (whole, spinner)
}

fn pending_line(text: &str, width: usize) -> String {
    truncate_to_width(&format!(" {text}"), width, "...", false)
}

pub(crate) fn editor_theme(theme: &Theme) -> EditorTheme {
    use theme::ThemeColor as C;
    EditorTheme {
        border: theme.fg(C::Border),
        select: theme.fg(C::Accent),
        description: theme.fg(C::Muted),
        scroll_info: theme.fg(C::Dim),
    }
}

/// The current git branch from `.git/HEAD` (no process spawned).
fn git_branch(cwd: &std::path::Path) -> Option<String> {
    let mut dir = Some(cwd);
    while let Some(d) = dir {
        let head = d.join(".git").join("HEAD");
        if let Ok(text) = std::fs::read_to_string(&head) {
            let text = text.trim();
            return Some(match text.strip_prefix("ref: refs/heads/") {
                Some(branch) => branch.to_owned(),
                None => "detached".to_owned(),
            });
        }
        dir = d.parent();
    }
    None
}
