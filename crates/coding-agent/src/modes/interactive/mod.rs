//! Interactive mode: the terminal coding agent drawn with pi-tui.
//!
//! One task owns all UI state. Terminal input (from a reader thread), session events
//! (from the session's subscription) and finished background operations arrive on one
//! channel; after each batch the whole view is rendered as lines and the differential
//! renderer writes only what changed.

mod app;
mod chat;
mod chat_rows;
pub mod clipboard;
pub mod commands;
pub mod components;
mod extension_ui;
pub mod keymap;
pub mod program_status;
pub mod selectors;
pub mod startup_select;
mod stream_updates;
pub mod theme;
mod tmux_keys;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use pi_tui::events::{TermEvent, read_event_timeout};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use crate::agent_session::AgentSession;
use crate::modes::run::RunPrompt;
use crate::session_event::AgentSessionEvent;

use app::App;
use stream_updates::{Forward, PendingUpdate};

/// The shortest time between two frames (about 60 per second).
const FRAME: Duration = Duration::from_millis(16);

/// What interactive mode starts with besides the session.
#[derive(Debug, Clone, Default)]
pub struct InteractiveOptions {
    /// The agent dir (keybindings, themes, sessions).
    pub agent_dir: PathBuf,
    /// The keyboard protocol the terminal takes (found when interactive mode starts).
    pub keyboard: pi_tui::terminal::KeyboardProtocol,
    /// Prompts from the command line, sent in turn once the UI is up.
    pub initial_prompts: Vec<RunPrompt>,
    /// `pi -r`: open the session picker first.
    pub open_resume_picker: bool,
    /// Startup diagnostics (skills, templates, themes) shown under the header.
    pub warnings: Vec<String>,
    /// The version shown in the header.
    pub version: String,
    /// `--theme` paths and `--no-themes`.
    pub theme_paths: Vec<String>,
    pub no_themes: bool,
    /// Theme files of installed packages (enabled ones).
    pub package_themes: Vec<std::path::PathBuf>,
    /// The project is trusted: its `.pi/themes` load.
    pub project_trusted: bool,
    /// No model has a key: the UI opens with guidance (`/login`, a key, a local model).
    pub no_model: bool,
    /// The footer's sandbox label (`sandbox`, `sandbox, no network`) when tools are confined.
    pub sandbox_label: Option<String>,
    /// `--tui-mode`: this run's layout, over the `tuiMode` setting.
    pub tui_mode: Option<crate::config::tui_settings::TuiMode>,
    /// `--use-theme`: this run's theme, over the `theme` setting (not saved).
    pub use_theme: Option<String>,
}

/// Everything the UI task reacts to.
#[derive(Debug)]
pub(crate) enum AppEvent {
    Term(TermEvent),
    /// The terminal's input stream ended (its reader thread stopped).
    InputClosed,
    Session(Box<AgentSessionEvent>),
    /// A streaming update waits in the run loop's [`PendingUpdate`] under this marker.
    SessionUpdate(u64),
    /// A background operation finished; the closure-free description of what to do.
    Done(app::Completion),
    /// SIGTERM / SIGHUP: leave with this exit code.
    Signal(i32),
    /// SIGTSTP from outside (`kill -TSTP`): suspend as Ctrl+Z does.
    Suspend,
    /// Something from the extensions (`ctx.ui`, errors, host components).
    Ext(extension_ui::ExtEvent),
    /// A step of a `/login` sign-in.
    Login(app::LoginEvent),
    /// A view the `/llama` command asks for.
    Llama(app::LlamaRequest),
}

/// Runs the interactive UI until the user quits; returns the exit code.
pub async fn run(session: AgentSession, options: InteractiveOptions) -> i32 {
    let (tx, mut rx) = unbounded_channel::<AppEvent>();
    let input_paused = Arc::new(AtomicBool::new(false));
    apply_capability_settings(&session);
    pi_tui::components::image::set_png_transcoder(crate::images::png_base64);
    let status_override = std::env::var("PI_PROGRAM_STATUS").ok();
    let answer = ask_terminal(
        status_override
            .as_deref()
            .is_none_or(|v| v != "1" && v != "0"),
    );
    let program_status = program_status::enabled(status_override.as_deref(), answer.program_status);
    let mut options = options;
    options.keyboard = answer.keyboard;
    spawn_input_reader(tx.clone(), Arc::clone(&input_paused));
    spawn_signal_watch(tx.clone());
    let pending_update = PendingUpdate::new();
    let subscription = {
        let tx = tx.clone();
        let pending_update = Arc::clone(&pending_update);
        session.subscribe(move |event| {
            pending_update.route(event, |forward| {
                let _ = tx.send(match forward {
                    Forward::Event(event) => AppEvent::Session(event),
                    Forward::UpdateReady(marker) => AppEvent::SessionUpdate(marker),
                });
            });
        })
    };
    // The waiting update is taken when its turn in the queue comes.
    let resolve = |event: AppEvent| match event {
        AppEvent::SessionUpdate(marker) => pending_update
            .take(marker)
            .map(|e| AppEvent::Session(Box::new(e))),
        other => Some(other),
    };
    let mut app = match App::start(session.clone(), &options, tx.clone(), input_paused) {
        Ok(mut app) => {
            app.sync_color_scheme_reports();
            app
        }
        Err(e) => {
            eprintln!("Error: cannot start the terminal UI: {e}");
            session.unsubscribe(subscription);
            session.shutdown_extensions().await;
            return 1;
        }
    };
    // Inside tmux, a warning when its keyboard setup drops modified Enter keys.
    let warn_tx = tx.clone();
    tokio::task::spawn_blocking(move || {
        if let Some(warning) = tmux_keys::warning() {
            let notice = app::Completion::Notice(chat::NoticeKind::Warning, warning);
            let _ = warn_tx.send(AppEvent::Done(notice));
        }
    });
    app.start_program_status(program_status);
    // The UI is up: extensions' session_start handlers may open dialogs.
    app.bind_extensions();
    app.render();
    for prompt in options.initial_prompts {
        app.submit_initial(prompt);
    }
    let mut ticker = tokio::time::interval(Duration::from_millis(80));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    // Frames are drawn at most every FRAME: a burst of stream deltas becomes one frame.
    let mut last_frame = tokio::time::Instant::now();
    let mut dirty = false;
    while !app.should_quit() {
        let next_frame = last_frame + FRAME;
        tokio::select! {
            event = rx.recv() => {
                let Some(event) = event else { break };
                if let Some(event) = resolve(event) {
                    app.handle(event).await;
                }
                // Apply everything already queued before drawing.
                while let Ok(event) = rx.try_recv() {
                    if let Some(event) = resolve(event) {
                        app.handle(event).await;
                    }
                    if app.should_quit() {
                        break;
                    }
                }
                dirty = true;
            }
            _ = ticker.tick(), if app.is_animating() => {
                app.tick();
                dirty = true;
            }
            _ = tokio::time::sleep_until(next_frame), if dirty => {}
        }
        if dirty && !app.should_quit() && tokio::time::Instant::now() >= last_frame + FRAME {
            app.render();
            last_frame = tokio::time::Instant::now();
            dirty = false;
        }
    }
    session.unsubscribe(subscription);
    let code = app.shutdown().await;
    // session_shutdown; a handler that hangs does not keep pi from exiting.
    let _ = tokio::time::timeout(Duration::from_secs(3), session.shutdown_extensions()).await;
    code
}

/// How long a terminal may take to answer the color query (pi 1.6 waits as long before it
/// falls back to palette indices; terminals answer the trailing DA1 request at once).
const TERMINAL_QUERY_TIMEOUT: Duration = Duration::from_millis(100);

/// The detected terminal capabilities with the `terminal.hyperlinks`, `terminal.images` and
/// `terminal.trueColor` settings applied (settings win over `PI_*` variables; `"auto"`
/// keeps what was detected).
fn apply_capability_settings(session: &AgentSession) {
    use pi_tui::capabilities::{self, ImageProtocol};
    let settings = session.settings();
    let mut caps = capabilities::get();
    let value = |key: &str| settings.value(&["terminal", key]);
    if let Some(serde_json::Value::Bool(on)) = value("hyperlinks") {
        caps.hyperlinks = on;
    }
    if let Some(serde_json::Value::Bool(on)) = value("trueColor") {
        caps.true_color = on;
    }
    match value("images") {
        Some(serde_json::Value::Bool(false)) => caps.images = None,
        Some(serde_json::Value::String(p)) if p == "kitty" => {
            caps.images = Some(ImageProtocol::Kitty)
        }
        Some(serde_json::Value::String(p)) if p == "iterm2" => {
            caps.images = Some(ImageProtocol::Iterm2)
        }
        _ => {}
    }
    capabilities::set(caps);
}

/// What the terminal answered at startup that pi acts on later.
struct TerminalAnswer {
    /// It takes OSC 7501 program status reports.
    program_status: bool,
    /// The keyboard protocol to ask for.
    keyboard: pi_tui::terminal::KeyboardProtocol,
}

/// Asks the terminal for its colors (for the `system` theme), its keyboard protocol, with
/// `program_status` whether it takes OSC 7501 reports, and its cell size when it shows
/// images (images are laid out in cells), before the input reader owns stdin. Replies
/// that come after the wait reach the app through the reader.
fn ask_terminal(program_status: bool) -> TerminalAnswer {
    use pi_tui::terminal::KeyboardProtocol;
    use std::io::IsTerminal;
    if !(std::io::stdin().is_terminal() && std::io::stdout().is_terminal()) {
        return TerminalAnswer {
            program_status: false,
            keyboard: KeyboardProtocol::Legacy,
        };
    }
    let images = pi_tui::capabilities::get().images.is_some();
    let report = pi_tui::terminal_colors::query(TERMINAL_QUERY_TIMEOUT, program_status, images);
    theme::system::set_terminal_colors(report.colors);
    if let Some(cell) = report.cell {
        pi_tui::image::set_cell_dimensions(cell);
    }
    // pi 1.6: the kitty protocol where the terminal answered its query, else
    // `modifyOtherKeys` once DA1 showed the terminal answers at all.
    let keyboard = if report.kitty_keyboard {
        KeyboardProtocol::Kitty
    } else if report.answered {
        KeyboardProtocol::ModifyOtherKeys
    } else {
        KeyboardProtocol::Legacy
    };
    TerminalAnswer {
        program_status: report.program_status,
        keyboard,
    }
}

/// Terminal input comes from a reader thread; it stops reading while `paused` is set
/// (an external editor or a suspended pi owns the terminal then).
fn spawn_input_reader(tx: UnboundedSender<AppEvent>, paused: Arc<AtomicBool>) {
    std::thread::spawn(move || {
        loop {
            if paused.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(20));
                continue;
            }
            match read_event_timeout(Duration::from_millis(50)) {
                Ok(None) => {
                    if tx.is_closed() {
                        break;
                    }
                }
                Ok(Some(event)) => {
                    if tx.send(AppEvent::Term(event)).is_err() {
                        break;
                    }
                }
                Err(_) => {
                    let _ = tx.send(AppEvent::InputClosed);
                    break;
                }
            }
        }
    });
}

fn spawn_signal_watch(tx: UnboundedSender<AppEvent>) {
    // `kill -TSTP` restores the terminal before pi stops, as Ctrl+Z does (pi 1.6).
    let suspend = tx.clone();
    tokio::spawn(async move {
        use tokio::signal::unix::{SignalKind, signal};
        let kind = SignalKind::from_raw(nix::sys::signal::Signal::SIGTSTP as i32);
        let Ok(mut stop) = signal(kind) else {
            return;
        };
        while stop.recv().await.is_some() {
            if suspend.send(AppEvent::Suspend).is_err() {
                break;
            }
        }
    });
    tokio::spawn(async move {
        use tokio::signal::unix::{SignalKind, signal};
        // SIGINT from outside (Ctrl+C typed is a key in raw mode) also restores the
        // terminal; pi 1.6.0 leaves the alternate screen on then.
        let (Ok(mut terminate), Ok(mut hangup), Ok(mut interrupt)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
            signal(SignalKind::interrupt()),
        ) else {
            return;
        };
        let code = tokio::select! {
            _ = terminate.recv() => 143,
            _ = hangup.recv() => 129,
            _ = interrupt.recv() => 130,
        };
        let _ = tx.send(AppEvent::Signal(code));
    });
}
