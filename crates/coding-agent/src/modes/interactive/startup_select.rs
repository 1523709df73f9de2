//! pi 1.6's `showStartupSelector`: a question asked before the interactive UI starts (the
//! project's trust, a session whose folder is gone), drawn as the extension selector in the
//! user's theme and answered with the arrows and Enter; Escape cancels.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use pi_tui::events::{TermEvent, read_event};
use pi_tui::renderer::Renderer;
use pi_tui::terminal::{CrosstermTerminal, Terminal as _};
use serde_json::Value;

use super::extension_ui::dialogs::{DialogOutcome, DialogView};
use super::theme;
use crate::extensions::ui::UiDialog;

/// Asks `title` with `options` on the terminal; the chosen option's index, or `None` when
/// cancelled, or when there is no terminal to ask on.
pub fn select(agent_dir: &Path, cwd: &Path, title: &str, options: &[String]) -> Option<usize> {
    use std::io::IsTerminal;
    if !(std::io::stdin().is_terminal() && std::io::stdout().is_terminal()) {
        return None;
    }
    // The theme of the settings, made for this terminal's colors (as pi 1.6's startup UI).
    let report = pi_tui::terminal_colors::query(Duration::from_millis(100), false, false);
    theme::system::set_terminal_colors(report.colors);
    let settings = crate::config::settings::read_object(&agent_dir.join("settings.json"));
    let setting = settings.get("theme").and_then(Value::as_str);
    // The project is not trusted yet: its themes are not read.
    let sources = theme::ThemeSources {
        skip_project: true,
        ..theme::ThemeSources::default()
    };
    let (theme, _) = theme::load_theme(setting, agent_dir, cwd, &sources);
    let keys = Arc::new(super::keymap::load(agent_dir));
    let dialog = UiDialog::Select {
        title: title.to_owned(),
        options: options.to_vec(),
        timeout: None,
    };
    let mut view = DialogView::new(&dialog, &theme, &keys)?;
    let mut terminal = CrosstermTerminal::new();
    terminal.start().ok()?;
    let mut renderer = Renderer::new(terminal);
    let answer = loop {
        let (width, _) = renderer.terminal().size();
        if renderer.render(view.render(width.max(1))).is_err() {
            break Value::Null;
        }
        match read_event() {
            Ok(TermEvent::Input(input)) => match view.handle(&input) {
                DialogOutcome::Answer(value) => break value,
                DialogOutcome::Pending | DialogOutcome::ExternalEditor(_) => {}
            },
            Ok(TermEvent::Resize(..)) => renderer.request_full_redraw(),
            Ok(TermEvent::Mouse(_) | TermEvent::Reply(_) | TermEvent::FocusLost) => {}
            Err(_) => break Value::Null,
        }
    };
    // The question leaves the screen before the UI starts where it was.
    let _ = renderer.render(Vec::new());
    let _ = renderer.stop();
    let _ = renderer.terminal_mut().stop();
    let chosen = answer.as_str()?;
    options.iter().position(|o| o == chosen)
}
