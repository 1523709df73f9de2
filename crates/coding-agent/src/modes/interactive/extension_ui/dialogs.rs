//! The dialogs extensions open (`ctx.ui.select/confirm/input/editor`), drawn in the
//! editor's place as the TypeScript pi's `ExtensionSelectorComponent`,
//! `ExtensionInputComponent` and `ExtensionEditorComponent`: a border, the title (with a
//! `(Ns)` countdown when the dialog has a timeout), the body, key hints, a border.

use std::sync::Arc;
use std::time::{Duration, Instant};

use pi_tui::components::editor::{Editor, EditorAction};
use pi_tui::keybindings::Keybindings;
use pi_tui::{Component, Input, KeyCode};
use serde_json::Value;

use super::line_input::LineInput;
use crate::extensions::UiDialog;
use crate::modes::interactive::components::text_lines;
use crate::modes::interactive::theme::{Theme, ThemeColor};

/// What a key did to a dialog.
#[derive(Debug, Clone, PartialEq)]
pub enum DialogOutcome {
    /// Still open.
    Pending,
    /// Closed with this answer (the dialog's empty answer when cancelled).
    Answer(Value),
    /// Ctrl+G in the editor dialog: edit its text in `$VISUAL` / `$EDITOR`.
    ExternalEditor(String),
}

/// Seconds left of a dialog's timeout, shown as `(Ns)` after the title.
#[derive(Debug, Clone, Copy)]
struct Countdown {
    deadline: Instant,
}

impl Countdown {
    fn new(timeout_ms: u64) -> Self {
        Countdown {
            deadline: Instant::now() + Duration::from_millis(timeout_ms),
        }
    }

    /// Whole seconds left, rounded up (as the TypeScript countdown shows them).
    fn seconds(&self) -> u64 {
        let left = self.deadline.saturating_duration_since(Instant::now());
        left.as_millis().div_ceil(1000) as u64
    }

    fn expired(&self) -> bool {
        Instant::now() >= self.deadline
    }
}

enum Body {
    /// Options and the selected index; `confirm` answers `true` for "Yes".
    Select {
        options: Vec<String>,
        selected: usize,
        confirm: bool,
    },
    Input(LineInput),
    Editor(Box<Editor>),
}

/// An open dialog.
pub struct DialogView {
    title: String,
    /// The dialog's own title (a confirm draws its message under it).
    status_title: String,
    /// Selector titles are bold; input and editor titles are not.
    bold_title: bool,
    body: Body,
    countdown: Option<Countdown>,
    /// Text under the title (pi's own dialogs, such as `/bug`'s; extensions give none).
    description: Option<String>,
    /// Show the external editor's key in the editor dialog even without `$VISUAL` or
    /// `$EDITOR` (pi 1.6 always shows it in `/bug`'s editor).
    external_hint: bool,
    theme: Theme,
    keys: Arc<Keybindings>,
}

impl DialogView {
    /// What a program status report says of this dialog: `permission` for a confirm,
    /// `question` otherwise, with the title (pi 1.6's blocked statuses).
    pub fn blocked_status(&self) -> (&'static str, &str) {
        let kind = match self.body {
            Body::Select { confirm: true, .. } => "permission",
            _ => "question",
        };
        (kind, &self.status_title)
    }

    /// The view of a dialog request; `None` for `custom` (not drawn by pi).
    pub fn new(dialog: &UiDialog, theme: &Theme, keys: &Arc<Keybindings>) -> Option<Self> {
        let (title, bold_title, body) = match dialog {
            UiDialog::Select { title, options, .. } => (
                title.clone(),
                true,
                Body::Select {
                    options: options.clone(),
                    selected: 0,
                    confirm: false,
                },
            ),
            UiDialog::Confirm { title, message, .. } => (
                format!("{title}\n{message}"),
                true,
                Body::Select {
                    options: vec!["Yes".into(), "No".into()],
                    selected: 0,
                    confirm: true,
                },
            ),
            UiDialog::Input { title, .. } => {
                let mut input = LineInput::new();
                input.set_focused(true);
                (title.clone(), false, Body::Input(input))
            }
            UiDialog::Editor { title, prefill } => {
                let mut editor = Editor::new(
                    crate::modes::interactive::app::editor_theme(theme),
                    Arc::clone(keys),
                );
                editor.set_focused(true);
                if let Some(text) = prefill {
                    editor.set_text(text);
                }
                (title.clone(), false, Body::Editor(Box::new(editor)))
            }
            UiDialog::Custom { .. } => return None,
        };
        let status_title = match dialog {
            UiDialog::Select { title, .. }
            | UiDialog::Confirm { title, .. }
            | UiDialog::Input { title, .. }
            | UiDialog::Editor { title, .. } => title.clone(),
            _ => String::new(),
        };
        Some(DialogView {
            title,
            status_title,
            bold_title,
            body,
            countdown: dialog.timeout_ms().filter(|ms| *ms > 0).map(Countdown::new),
            description: None,
            external_hint: false,
            theme: theme.clone(),
            keys: Arc::clone(keys),
        })
    }

    /// Text shown under the title, as pi 1.6's selector and editor take it.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into()).filter(|d| !d.is_empty());
        self
    }

    /// Always show the external editor's key in the editor dialog's hints.
    pub fn with_external_editor_hint(mut self) -> Self {
        self.external_hint = true;
        self
    }

    /// The answer a dismissed dialog gives.
    pub fn empty(&self) -> Value {
        match self.body {
            Body::Select { confirm: true, .. } => Value::Bool(false),
            _ => Value::Null,
        }
    }

    /// Whether a countdown runs (the app then ticks).
    pub fn has_countdown(&self) -> bool {
        self.countdown.is_some()
    }

    /// The timeout ran out: the dialog closes with its empty answer.
    pub fn expired(&self) -> Option<Value> {
        self.countdown
            .filter(Countdown::expired)
            .map(|_| self.empty())
    }

    /// Puts text edited outside back into the editor dialog.
    pub fn set_editor_text(&mut self, text: &str) {
        if let Body::Editor(editor) = &mut self.body {
            editor.set_text(text);
        }
    }

    /// Handles a key.
    pub fn handle(&mut self, input: &Input) -> DialogOutcome {
        let keys = Arc::clone(&self.keys);
        let is = |id: &str| keys.matches(input, id);
        let empty = self.empty();
        match &mut self.body {
            Body::Select {
                options,
                selected,
                confirm,
            } => {
                let plain = |c: char| *input == Input::key(KeyCode::Char(c));
                if is("tui.select.up") || plain('k') {
                    *selected = selected.saturating_sub(1);
                } else if is("tui.select.down") || plain('j') {
                    *selected = (*selected + 1).min(options.len().saturating_sub(1));
                } else if is("tui.select.confirm") {
                    if let Some(option) = options.get(*selected) {
                        return DialogOutcome::Answer(if *confirm {
                            Value::Bool(option == "Yes")
                        } else {
                            Value::String(option.clone())
                        });
                    }
                } else if is("tui.select.cancel") {
                    return DialogOutcome::Answer(empty);
                }
                DialogOutcome::Pending
            }
            Body::Input(line) => {
                if is("tui.select.confirm") {
                    return DialogOutcome::Answer(Value::String(line.value().to_owned()));
                }
                if is("tui.select.cancel") {
                    return DialogOutcome::Answer(empty);
                }
                line.handle(input);
                DialogOutcome::Pending
            }
            Body::Editor(editor) => {
                if is("tui.select.cancel") {
                    return DialogOutcome::Answer(empty);
                }
                if is("app.editor.external") {
                    return DialogOutcome::ExternalEditor(editor.text());
                }
                match editor.handle(input) {
                    EditorAction::Submit(text) => DialogOutcome::Answer(Value::String(text)),
                    _ => DialogOutcome::Pending,
                }
            }
        }
    }

    /// `key description` hints, keys dim and descriptions muted, two spaces apart.
    fn hints(&self, hints: &[(String, &str)]) -> String {
        let dim = self.theme.fg(ThemeColor::Dim);
        let muted = self.theme.fg(ThemeColor::Muted);
        hints
            .iter()
            .map(|(key, what)| format!("{}{}", dim.paint(key), muted.paint(&format!(" {what}"))))
            .collect::<Vec<_>>()
            .join("  ")
    }

    fn key_text(&self, id: &str) -> String {
        self.keys.keys(id).join("/")
    }

    pub fn render(&mut self, width: usize) -> Vec<String> {
        let accent = self.theme.fg(ThemeColor::Accent);
        let border = self
            .theme
            .fg(ThemeColor::Border)
            .paint(&"─".repeat(width.max(1)));
        let title = match self.countdown {
            Some(countdown) => format!("{} ({}s)", self.title, countdown.seconds()),
            None => self.title.clone(),
        };
        let title = if self.bold_title {
            accent.bold().paint(&title)
        } else {
            accent.paint(&title)
        };
        let mut lines = vec![border.clone(), String::new()];
        lines.extend(text_lines(&title, width, 1));
        if let Some(description) = &self.description {
            lines.push(String::new());
            let text = self.theme.fg(ThemeColor::Text);
            let painted: Vec<String> = description.split('\n').map(|l| text.paint(l)).collect();
            lines.extend(text_lines(&painted.join("\n"), width, 1));
        }
        lines.push(String::new());
        let confirm = (self.key_text("tui.select.confirm"), "");
        let cancel = (self.key_text("tui.select.cancel"), "cancel");
        let hint = match &mut self.body {
            Body::Select {
                options, selected, ..
            } => {
                // At most ten options, the window centred on the selection (pi 1.6), with
                // the position shown when some are out of it.
                let visible = 10;
                let start = selected
                    .saturating_sub(visible / 2)
                    .min(options.len().saturating_sub(visible));
                let end = (start + visible).min(options.len());
                for (i, option) in options.iter().enumerate().take(end).skip(start) {
                    let line = if i == *selected {
                        format!("{}{}", accent.paint("→ "), accent.paint(option))
                    } else {
                        format!("  {}", self.theme.fg(ThemeColor::Text).paint(option))
                    };
                    lines.extend(text_lines(&line, width, 1));
                }
                if start > 0 || end < options.len() {
                    let position = format!("  ({}/{})", *selected + 1, options.len());
                    lines.extend(text_lines(
                        &self.theme.fg(ThemeColor::Muted).paint(&position),
                        width,
                        0,
                    ));
                }
                vec![
                    ("↑↓".to_owned(), "navigate"),
                    (confirm.0, "select"),
                    (cancel.0, cancel.1),
                ]
            }
            Body::Input(line) => {
                lines.extend(line.render(width));
                vec![(confirm.0, "submit"), (cancel.0, cancel.1)]
            }
            Body::Editor(editor) => {
                lines.extend(editor.render(width));
                let mut hints = vec![
                    (confirm.0, "submit"),
                    (self.key_text("tui.input.newLine"), "newline"),
                    (cancel.0, cancel.1),
                ];
                let external = self.external_hint
                    || std::env::var_os("VISUAL")
                        .or_else(|| std::env::var_os("EDITOR"))
                        .is_some_and(|e| !e.is_empty());
                if external {
                    hints.push((self.key_text("app.editor.external"), "external editor"));
                }
                hints
            }
        };
        lines.push(String::new());
        lines.extend(text_lines(&self.hints(&hint), width, 1));
        lines.push(String::new());
        lines.push(border);
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::components::strip_ansi;
    use pi_tui::ColorMode;

    fn keys() -> Arc<Keybindings> {
        Arc::new(crate::modes::interactive::keymap::load(
            std::path::Path::new("/nonexistent"),
        ))
    }

    fn plain(lines: &[String]) -> Vec<String> {
        lines
            .iter()
            .map(|l| strip_ansi(l).trim_end().to_owned())
            .collect()
    }

    #[test]
    fn confirm_draws_like_the_typescript_selector_and_answers() {
        let theme = Theme::dark(ColorMode::TrueColor);
        let dialog = UiDialog::Confirm {
            title: "Delete?".into(),
            message: "rm -rf x".into(),
            timeout: None,
        };
        let mut view = DialogView::new(&dialog, &theme, &keys()).unwrap();
        let lines = plain(&view.render(60));
        assert_eq!(
            lines,
            [
                "─".repeat(60).as_str(),
                "",
                " Delete?",
                " rm -rf x",
                "",
                " → Yes",
                "   No",
                "",
                " ↑↓ navigate  enter select  escape/ctrl+c cancel",
                "",
                "─".repeat(60).as_str(),
            ]
        );
        assert_eq!(
            view.handle(&Input::key(KeyCode::Down)),
            DialogOutcome::Pending
        );
        assert_eq!(
            view.handle(&Input::key(KeyCode::Enter)),
            DialogOutcome::Answer(Value::Bool(false))
        );
        assert_eq!(
            view.handle(&Input::key(KeyCode::Up)),
            DialogOutcome::Pending
        );
        assert_eq!(
            view.handle(&Input::key(KeyCode::Enter)),
            DialogOutcome::Answer(Value::Bool(true))
        );
    }

    /// A long list shows ten options around the selection and where it is (pi 1.6).
    #[test]
    fn a_long_select_scrolls_a_window_of_ten() {
        let theme = Theme::dark(ColorMode::TrueColor);
        let dialog = UiDialog::Select {
            title: "Pick".into(),
            options: (1..=20).map(|n| format!("option {n}")).collect(),
            timeout: None,
        };
        let mut view = DialogView::new(&dialog, &theme, &keys()).unwrap();
        let shown = plain(&view.render(60));
        assert!(shown.contains(&" → option 1".to_owned()), "{shown:?}");
        assert!(shown.contains(&"   option 10".to_owned()), "{shown:?}");
        assert!(!shown.iter().any(|l| l.contains("option 11")), "{shown:?}");
        assert!(shown.contains(&"  (1/20)".to_owned()), "{shown:?}");
        for _ in 0..12 {
            view.handle(&Input::key(KeyCode::Down));
        }
        let shown = plain(&view.render(60));
        assert!(shown.contains(&"   option 8".to_owned()), "{shown:?}");
        assert!(shown.contains(&" → option 13".to_owned()), "{shown:?}");
        assert!(shown.contains(&"   option 17".to_owned()), "{shown:?}");
        assert!(
            !shown
                .iter()
                .any(|l| l.contains("option 7 ") || l.ends_with("option 7"))
        );
        assert!(!shown.iter().any(|l| l.contains("option 18")), "{shown:?}");
        assert!(shown.contains(&"  (13/20)".to_owned()), "{shown:?}");
    }

    #[test]
    fn input_answers_its_text_or_nothing() {
        let theme = Theme::dark(ColorMode::TrueColor);
        let dialog = UiDialog::Input {
            title: "Name".into(),
            placeholder: None,
            timeout: Some(5_000),
        };
        let mut view = DialogView::new(&dialog, &theme, &keys()).unwrap();
        assert!(plain(&view.render(30))[2].starts_with(" Name (5s)"));
        view.handle(&Input::key(KeyCode::Char('x')));
        assert_eq!(
            view.handle(&Input::key(KeyCode::Enter)),
            DialogOutcome::Answer(Value::String("x".into()))
        );
        assert_eq!(
            view.handle(&Input::key(KeyCode::Esc)),
            DialogOutcome::Answer(Value::Null)
        );
        assert!(view.expired().is_none());
    }
}
