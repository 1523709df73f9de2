//! A `!command` typed by the user: bordered, with live output, a spinner while it runs
//! and the exit status when done.

use pi_agent_core::CustomMessage;
use pi_tui::Component;
use pi_tui::components::loader::Loader;

use super::{EXPAND_KEY, LineCache, strip_ansi, text_lines};
use crate::modes::interactive::theme::{Theme, ThemeColor};
use crate::tools::truncate::{DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, truncate_tail};

/// Output lines shown while collapsed.
pub const PREVIEW_LINES: usize = 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Running,
    Complete,
    Cancelled,
    Error,
}

/// A user bash command and its streaming output.
pub struct BashExecution {
    theme: Theme,
    command: String,
    exclude_from_context: bool,
    output_lines: Vec<String>,
    status: Status,
    exit_code: Option<i32>,
    truncated: bool,
    full_output_path: Option<String>,
    expanded: bool,
    loader: Loader,
    cache: LineCache,
}

impl BashExecution {
    /// A running command; `exclude_from_context` (`!!`) draws it dim instead of `bashMode`.
    pub fn new(command: impl Into<String>, exclude_from_context: bool, theme: &Theme) -> Self {
        BashExecution {
            loader: Self::make_loader(theme, exclude_from_context),
            theme: theme.clone(),
            command: command.into(),
            exclude_from_context,
            output_lines: Vec::new(),
            status: Status::Running,
            exit_code: None,
            truncated: false,
            full_output_path: None,
            expanded: false,
            cache: LineCache::default(),
        }
    }

    /// The finished view of a `bashExecution` custom message (session replay).
    pub fn from_custom(message: &CustomMessage, theme: &Theme) -> Option<Self> {
        if message.role != "bashExecution" {
            return None;
        }
        let str_field = |k: &str| message.get(k).and_then(|v| v.as_str());
        let bool_field = |k: &str| message.get(k).and_then(|v| v.as_bool()).unwrap_or(false);
        let mut component = Self::new(
            str_field("command").unwrap_or(""),
            bool_field("excludeFromContext"),
            theme,
        );
        component.append_output(str_field("output").unwrap_or(""));
        let exit_code = message
            .get("exitCode")
            .and_then(|v| v.as_i64())
            .and_then(|c| i32::try_from(c).ok());
        component.set_complete(
            exit_code,
            bool_field("cancelled"),
            bool_field("truncated"),
            str_field("fullOutputPath").map(str::to_string),
        );
        Some(component)
    }

    fn color_key(exclude_from_context: bool) -> ThemeColor {
        if exclude_from_context {
            ThemeColor::Dim
        } else {
            ThemeColor::BashMode
        }
    }

    fn make_loader(theme: &Theme, exclude_from_context: bool) -> Loader {
        Loader::new(
            "Running... (escape/ctrl+c to cancel)",
            theme.fg(Self::color_key(exclude_from_context)),
            theme.fg(ThemeColor::Muted),
        )
    }

    /// Append a chunk of output (ANSI stripped, `\r\n`/`\r` normalized; a chunk continues
    /// the last incomplete line).
    pub fn append_output(&mut self, chunk: &str) {
        let clean = strip_ansi(chunk).replace("\r\n", "\n").replace('\r', "\n");
        let mut pieces = clean.split('\n');
        match (self.output_lines.last_mut(), pieces.next()) {
            (Some(last), Some(first)) => last.push_str(first),
            (None, Some(first)) => self.output_lines.push(first.to_string()),
            _ => {}
        }
        self.output_lines.extend(pieces.map(str::to_string));
        self.cache.clear();
    }

    /// The command finished: `exit_code` (`None` when killed), cancelled by the user,
    /// output truncated for the model, and the file holding the full output.
    pub fn set_complete(
        &mut self,
        exit_code: Option<i32>,
        cancelled: bool,
        truncated: bool,
        full_output_path: Option<String>,
    ) {
        self.exit_code = exit_code;
        self.status = if cancelled {
            Status::Cancelled
        } else if exit_code.is_some_and(|c| c != 0) {
            Status::Error
        } else {
            Status::Complete
        };
        self.truncated = truncated;
        self.full_output_path = full_output_path;
        self.cache.clear();
    }

    /// Show all output (true) or the last [`PREVIEW_LINES`] lines.
    pub fn set_expanded(&mut self, expanded: bool) {
        if self.expanded != expanded {
            self.expanded = expanded;
            self.cache.clear();
        }
    }

    /// Whether all output is shown.
    pub fn is_expanded(&self) -> bool {
        self.expanded
    }

    /// Advance the spinner (call on the animation timer while running).
    pub fn tick(&mut self) {
        if self.status == Status::Running {
            self.loader.tick();
            self.cache.clear();
        }
    }

    /// Whether the command is still running.
    pub fn is_running(&self) -> bool {
        self.status == Status::Running
    }

    /// The raw output so far.
    pub fn output(&self) -> String {
        self.output_lines.join("\n")
    }

    /// The command.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// Redraw with another theme.
    pub fn set_theme(&mut self, theme: &Theme) {
        self.theme = theme.clone();
        self.loader = Self::make_loader(theme, self.exclude_from_context);
        self.cache.clear();
    }

    fn content(&mut self, width: usize) -> Vec<String> {
        let theme = &self.theme;
        let color = theme.fg(Self::color_key(self.exclude_from_context));
        let muted = theme.fg(ThemeColor::Muted);
        let mut lines = text_lines(
            &color.bold().paint(&format!("$ {}", self.command)),
            width,
            1,
        );

        let full = self.output_lines.join("\n");
        let context = truncate_tail(&full, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES);
        let available: Vec<&str> = if context.content.is_empty() {
            Vec::new()
        } else {
            context.content.split('\n').collect()
        };
        let preview_start = available.len().saturating_sub(PREVIEW_LINES);
        let hidden = preview_start;

        if !available.is_empty() {
            let shown = if self.expanded {
                &available[..]
            } else {
                &available[preview_start..]
            };
            let styled: Vec<String> = shown.iter().map(|l| muted.paint(l)).collect();
            let body = text_lines(&format!("\n{}", styled.join("\n")), width, 1);
            if self.expanded {
                lines.extend(body);
            } else {
                let skip = body.len().saturating_sub(PREVIEW_LINES);
                lines.extend(body.into_iter().skip(skip));
            }
        }

        if self.status == Status::Running {
            lines.extend(self.loader.render(width));
            return lines;
        }

        let dim = theme.fg(ThemeColor::Dim);
        let mut status: Vec<String> = Vec::new();
        if hidden > 0 {
            if self.expanded {
                status.push(format!(
                    "({}{})",
                    dim.paint(EXPAND_KEY),
                    muted.paint(" to collapse")
                ));
            } else {
                status.push(format!(
                    "{} ({}{})",
                    muted.paint(&format!("... {hidden} more lines")),
                    dim.paint(EXPAND_KEY),
                    muted.paint(" to expand")
                ));
            }
        }
        match self.status {
            Status::Cancelled => status.push(theme.fg(ThemeColor::Warning).paint("(cancelled)")),
            Status::Error => {
                let code = self
                    .exit_code
                    .map_or_else(|| "?".to_string(), |c| c.to_string());
                status.push(theme.fg(ThemeColor::Error).paint(&format!("(exit {code})")));
            }
            _ => {}
        }
        if (self.truncated || context.truncated())
            && let Some(path) = &self.full_output_path
        {
            status.push(
                theme
                    .fg(ThemeColor::Warning)
                    .paint(&format!("Output truncated. Full output: {path}")),
            );
        }
        if !status.is_empty() {
            lines.extend(text_lines(&format!("\n{}", status.join("\n")), width, 1));
        }
        lines
    }
}

impl Component for BashExecution {
    fn render(&mut self, width: usize) -> Vec<String> {
        if let Some(lines) = self.cache.get(width, "") {
            return lines;
        }
        let border = self
            .theme
            .fg(Self::color_key(self.exclude_from_context))
            .paint(&"─".repeat(width.max(1)));
        let mut lines = vec![String::new(), border.clone()];
        lines.extend(self.content(width));
        lines.push(border);
        self.cache.store(width, "", &lines);
        lines
    }

    fn invalidate(&mut self) {
        self.loader.invalidate();
        self.cache.clear();
    }
}
