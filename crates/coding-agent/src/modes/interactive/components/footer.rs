//! The footer under the editor: working directory and session name, then token totals,
//! cost, context usage and the model.

use pi_tui::Component;
use pi_tui::width::{truncate_to_width, visible_width};

use super::{LineCache, paint};
use crate::modes::interactive::theme::{Theme, ThemeColor};

/// Everything the footer shows, gathered by the caller so it renders without a session.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FooterData {
    /// The working directory as shown (the caller replaces the home directory by `~`).
    pub cwd: String,
    /// The current git branch, shown as ` (branch)` after the directory.
    pub git_branch: Option<String>,
    /// The session's display name.
    pub session_name: Option<String>,
    /// Input tokens over all assistant messages.
    pub input: u64,
    /// Output tokens over all assistant messages.
    pub output: u64,
    /// Cache-read tokens over all assistant messages.
    pub cache_read: u64,
    /// Cache-write tokens over all assistant messages.
    pub cache_write: u64,
    /// Total cost in dollars.
    pub cost: f64,
    /// Context usage in percent; `None` when unknown (right after a compaction).
    pub context_percent: Option<f64>,
    /// The model's context window in tokens.
    pub context_window: u64,
    /// Whether auto-compaction is on (shows ` (auto)`).
    pub auto_compact: bool,
    /// The model id; empty when no model is selected.
    pub model_id: String,
    /// The model's provider.
    pub provider: String,
    /// Whether the model supports reasoning (then the thinking level is shown).
    pub reasoning: bool,
    /// The thinking level (`off`, `low`, …).
    pub thinking_level: String,
    /// Show `(provider)` before the model (when several providers are available).
    pub show_provider: bool,
    /// The sandbox label (`sandbox`, `sandbox, no network`), shown after the directory
    /// when the tools are confined.
    pub sandbox: Option<String>,
    /// Early features are on (`PI_EXPERIMENTAL=1`): ` • xp` ends the token stats.
    pub experimental: bool,
    /// With a virtual model selected: the physical model id and level of the latest
    /// response, shown as ` → id • level`.
    pub routed: Option<(String, Option<String>)>,
}

/// `value` with `digits` decimals, halves rounded up like JavaScript's `toFixed`.
fn to_fixed(value: f64, digits: i32) -> String {
    let scale = 10f64.powi(digits);
    let rounded = (value * scale).round() / scale;
    format!("{rounded:.prec$}", prec = digits as usize)
}

/// Token counts the way the footer shows them: `999`, `1.2k`, `45k`, `1.5M`, `12M`.
pub fn format_tokens(count: u64) -> String {
    if count < 1_000 {
        count.to_string()
    } else if count < 10_000 {
        let tenths = (count + 50) / 100;
        format!("{}.{}k", tenths / 10, tenths % 10)
    } else if count < 1_000_000 {
        format!("{}k", (count + 500) / 1_000)
    } else if count < 10_000_000 {
        let tenths = (count + 50_000) / 100_000;
        format!("{}.{}M", tenths / 10, tenths % 10)
    } else {
        format!("{}M", (count + 500_000) / 1_000_000)
    }
}

/// The two footer lines.
pub struct Footer {
    theme: Theme,
    data: FooterData,
    cache: LineCache,
}

impl Footer {
    /// A footer with empty data (fill it with [`Self::set_data`]).
    pub fn new(theme: &Theme) -> Self {
        Footer {
            theme: theme.clone(),
            data: FooterData::default(),
            cache: LineCache::default(),
        }
    }

    /// A footer showing `data`.
    pub fn with_data(data: FooterData, theme: &Theme) -> Self {
        let mut footer = Self::new(theme);
        footer.data = data;
        footer
    }

    /// Replace the data (the view is redrawn only when it changed).
    pub fn set_data(&mut self, data: FooterData) {
        if data != self.data {
            self.data = data;
            self.cache.clear();
        }
    }

    /// The data shown.
    pub fn data(&self) -> &FooterData {
        &self.data
    }

    /// Redraw with another theme.
    pub fn set_theme(&mut self, theme: &Theme) {
        self.theme = theme.clone();
        self.cache.clear();
    }

    fn pwd_line(&self, width: usize) -> String {
        let d = &self.data;
        let mut pwd = d.cwd.clone();
        if let Some(branch) = d.git_branch.as_deref().filter(|b| !b.is_empty()) {
            pwd = format!("{pwd} ({branch})");
        }
        if let Some(name) = d.session_name.as_deref().filter(|n| !n.is_empty()) {
            pwd = format!("{pwd} • {name}");
        }
        let dim = self.theme.fg(ThemeColor::Dim);
        let mut line = dim.paint(&pwd);
        if let Some(label) = d.sandbox.as_deref() {
            line.push_str(&dim.paint(" • "));
            line.push_str(
                &self
                    .theme
                    .fg(ThemeColor::Warning)
                    .paint(&format!("[{label}]")),
            );
        }
        truncate_to_width(&line, width, &dim.paint("..."), false)
    }

    fn stats_line(&self, width: usize) -> String {
        let d = &self.data;
        let theme = &self.theme;
        let mut parts: Vec<String> = Vec::new();
        if d.input > 0 {
            parts.push(format!("↑{}", format_tokens(d.input)));
        }
        if d.output > 0 {
            parts.push(format!("↓{}", format_tokens(d.output)));
        }
        if d.cache_read > 0 {
            parts.push(format!("R{}", format_tokens(d.cache_read)));
        }
        if d.cache_write > 0 {
            parts.push(format!("W{}", format_tokens(d.cache_write)));
        }
        if d.cost != 0.0 {
            parts.push(format!("${}", to_fixed(d.cost, 3)));
        }

        let auto = if d.auto_compact { " (auto)" } else { "" };
        let window = format_tokens(d.context_window);
        let percent_value = d.context_percent.unwrap_or(0.0);
        let context = match d.context_percent {
            Some(p) => format!("{}%/{window}{auto}", to_fixed(p, 1)),
            None => format!("?/{window}{auto}"),
        };
        let context = if percent_value > 90.0 {
            theme.fg(ThemeColor::Error).paint(&context)
        } else if percent_value > 70.0 {
            theme.fg(ThemeColor::Warning).paint(&context)
        } else {
            context
        };
        parts.push(context);
        if d.experimental {
            parts.push(format!(
                "{} {}",
                theme.fg(ThemeColor::Dim).paint("•"),
                theme.fg(ThemeColor::Warning).bold().paint("xp")
            ));
        }

        let mut left = parts.join(" ");
        let mut left_width = visible_width(&left);
        if left_width > width {
            left = truncate_to_width(&left, width, "...", false);
            left_width = visible_width(&left);
        }

        const MIN_PADDING: usize = 2;
        let model = if d.model_id.is_empty() {
            "no-model"
        } else {
            d.model_id.as_str()
        };
        let right_plain = if d.reasoning {
            let level = if d.thinking_level.is_empty() {
                "off"
            } else {
                d.thinking_level.as_str()
            };
            if level == "off" {
                format!("{model} • thinking off")
            } else {
                format!("{model} • {level}")
            }
        } else {
            model.to_string()
        };
        let right_plain = match &d.routed {
            Some((id, Some(level))) => format!("{right_plain} → {id} • {level}"),
            Some((id, None)) => format!("{right_plain} → {id}"),
            None => right_plain,
        };
        let mut right = right_plain.clone();
        if d.show_provider && !d.model_id.is_empty() {
            right = format!("({}) {right_plain}", d.provider);
            if left_width + MIN_PADDING + visible_width(&right) > width {
                right = right_plain;
            }
        }

        let right_width = visible_width(&right);
        let remainder = if left_width + MIN_PADDING + right_width <= width {
            format!("{}{right}", " ".repeat(width - left_width - right_width))
        } else {
            let available = width.saturating_sub(left_width + MIN_PADDING);
            if available > 0 {
                let cut = truncate_to_width(&right, available, "", false);
                let cut_width = visible_width(&cut);
                format!(
                    "{}{cut}",
                    " ".repeat(width.saturating_sub(left_width + cut_width))
                )
            } else {
                String::new()
            }
        };
        let dim = theme.fg(ThemeColor::Dim);
        let remainder = if remainder.is_empty() {
            remainder
        } else {
            dim.paint(&remainder)
        };
        format!("{}{remainder}", paint(dim, &left))
    }
}

impl Component for Footer {
    fn render(&mut self, width: usize) -> Vec<String> {
        if let Some(lines) = self.cache.get(width, "") {
            return lines;
        }
        let lines = vec![self.pwd_line(width), self.stats_line(width)];
        self.cache.store(width, "", &lines);
        lines
    }

    fn invalidate(&mut self) {
        self.cache.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_tokens_like_the_typescript_footer() {
        assert_eq!(format_tokens(0), "0");
        assert_eq!(format_tokens(999), "999");
        assert_eq!(format_tokens(1_000), "1.0k");
        assert_eq!(format_tokens(1_250), "1.3k");
        assert_eq!(format_tokens(9_999), "10.0k");
        assert_eq!(format_tokens(45_400), "45k");
        assert_eq!(format_tokens(128_000), "128k");
        assert_eq!(format_tokens(999_999), "1000k");
        assert_eq!(format_tokens(1_500_000), "1.5M");
        assert_eq!(format_tokens(12_400_000), "12M");
    }

    #[test]
    fn rounds_halves_up() {
        assert_eq!(to_fixed(75.25, 1), "75.3");
        assert_eq!(to_fixed(0.0, 1), "0.0");
        assert_eq!(to_fixed(0.4567, 3), "0.457");
    }
}
