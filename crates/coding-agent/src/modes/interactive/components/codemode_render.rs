//! The codemode row as pi 1.6 draws it: the script, highlighted (its first 10 lines while
//! collapsed), the calls it made with their state and time (the last 8 while collapsed),
//! the script's output without the result's header (5 lines while collapsed), and the
//! elapsed or total time.

use pi_tui::highlight::highlight_code;
use serde_json::Value;

use super::tool_render::{ResultData, ToolView, text_output};
use super::{EXPAND_KEY, paint, replace_tabs, syntax_theme};
use crate::modes::interactive::theme::ThemeColor;

const CODE_PREVIEW_LINES: usize = 10;
const CALL_PREVIEW_COUNT: usize = 8;
const OUTPUT_PREVIEW_LINES: usize = 5;
const COLLAPSED_ARGS_CHARS: usize = 80;

fn wrap(text: &str, width: usize) -> Vec<String> {
    super::text_lines(text, width, 0)
}

/// `... (<counted>, ctrl+o to expand)`: `counted` is `N more lines` or `N earlier calls`.
fn expand_hint(view: &ToolView<'_>, counted: &str) -> String {
    format!(
        "{} {}{}",
        view.theme
            .fg(ThemeColor::Muted)
            .paint(&format!("... ({counted},")),
        view.theme
            .fg(ThemeColor::Dim)
            .paint(&format!("{EXPAND_KEY} to expand")),
        view.theme.fg(ThemeColor::Muted).paint(")"),
    )
}

/// `text`'s visual lines, the first `max` of them while collapsed with the hint after.
fn preview(view: &ToolView<'_>, text: &str, max: usize, width: usize) -> Vec<String> {
    let mut lines = wrap(text, width);
    if !view.expanded && lines.len() > max {
        let hidden = lines.len() - max;
        lines.truncate(max);
        lines.push(expand_hint(view, &format!("{hidden} more lines")));
    }
    lines
}

fn duration(ms: Option<f64>) -> String {
    match ms {
        None => String::new(),
        Some(ms) if ms < 1000.0 => format!("{}ms", ms.round()),
        Some(ms) => format!("{:.1}s", ms / 1000.0),
    }
}

/// One call of the script: its state, tool, arguments and time.
fn call_line(view: &ToolView<'_>, call: &Value) -> String {
    let fg = |c| view.theme.fg(c);
    let icon = match call["status"].as_str() {
        Some("running") => fg(ThemeColor::Warning).paint("\u{2026}"),
        Some("ok") => fg(ThemeColor::Success).paint("\u{2713}"),
        Some("error") => fg(ThemeColor::Error).paint("\u{2717}"),
        _ => fg(ThemeColor::Muted).paint("\u{2298}"),
    };
    let name = call["name"].as_str().unwrap_or_default();
    let mut line = format!("{icon} {}", fg(ThemeColor::ToolTitle).paint(name));
    let args = call["args"].as_str().unwrap_or_default();
    if !args.is_empty() {
        let shown = if !view.expanded && args.chars().count() > COLLAPSED_ARGS_CHARS {
            let kept: String = args.chars().take(COLLAPSED_ARGS_CHARS - 3).collect();
            format!("{kept}...")
        } else {
            args.to_owned()
        };
        line.push_str(&format!(" {}", fg(ThemeColor::Muted).paint(&shown)));
    }
    let took = duration(call["durationMs"].as_f64());
    if !took.is_empty() {
        line.push_str(&format!(" {}", fg(ThemeColor::Dim).paint(&took)));
    }
    if view.expanded
        && let Some(error) = call["error"].as_str()
    {
        let error = error.split('\n').collect::<Vec<_>>().join("\n    ");
        line.push_str(&format!("\n    {}", fg(ThemeColor::Error).paint(&error)));
    }
    line
}

/// Whether `text` is the result's header (`Script completed/failed`, the wall time).
fn is_header(text: &str) -> bool {
    let mut lines = text.split('\n');
    matches!(lines.next(), Some("Script completed" | "Script failed"))
        && lines.next().is_some_and(|l| {
            l.strip_prefix("Wall time ")
                .and_then(|r| r.strip_suffix(" seconds"))
                .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit() || c == '.'))
        })
        && lines.next() == Some("Output:")
        && lines.next() == Some("")
        && lines.next().is_none()
}

/// The inner lines of a codemode row `width` columns wide.
pub(super) fn render_codemode(view: &ToolView<'_>, width: usize) -> Vec<String> {
    let title = paint(view.theme.fg(ThemeColor::ToolTitle).bold(), "codemode");
    let code = match view.args.get("code") {
        None | Some(Value::Null) => Some(""),
        Some(Value::String(code)) => Some(code.as_str()),
        Some(_) => None,
    };
    let Some(code) = code else {
        let invalid = view.theme.fg(ThemeColor::Error).paint("[invalid arg]");
        return wrap(&format!("{title} {invalid}"), width);
    };
    let mut lines = wrap(&title, width);
    if !code.is_empty() {
        let source = replace_tabs(code.replace('\r', "").trim_end());
        let highlighted =
            highlight_code(&source, Some("javascript"), &syntax_theme(view.theme)).join("\n");
        lines.extend(preview(view, &highlighted, CODE_PREVIEW_LINES, width));
    }
    if let Some(result) = view.result {
        lines.extend(render_result(view, result, width));
    }
    lines
}

fn render_result(view: &ToolView<'_>, result: &ResultData, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let calls: Vec<Value> = result
        .details
        .as_ref()
        .and_then(|d| d.get("calls"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if !calls.is_empty() {
        let shown = if view.expanded {
            &calls[..]
        } else {
            &calls[calls.len().saturating_sub(CALL_PREVIEW_COUNT)..]
        };
        let mut rows: Vec<String> = shown.iter().map(|c| call_line(view, c)).collect();
        if shown.len() < calls.len() {
            let earlier = calls.len() - shown.len();
            rows.insert(0, expand_hint(view, &format!("{earlier} earlier calls")));
        }
        lines.push(String::new());
        lines.extend(wrap(&rows.join("\n"), width));
    }
    let output = if view.is_partial {
        String::new()
    } else {
        let content = match result.content.first() {
            Some(pi_ai::InputBlock::Text(first)) if is_header(&first.text) => {
                result.content[1..].to_vec()
            }
            _ => result.content.clone(),
        };
        let rest = ResultData {
            content,
            details: result.details.clone(),
        };
        text_output(&rest, view.show_images).trim().to_owned()
    };
    if !output.is_empty() {
        let color = if view.is_error {
            ThemeColor::Error
        } else {
            ThemeColor::ToolOutput
        };
        let style = view.theme.fg(color);
        let styled: Vec<String> = replace_tabs(&output)
            .split('\n')
            .map(|l| style.paint(l))
            .collect();
        lines.push(String::new());
        lines.extend(preview(
            view,
            &styled.join("\n"),
            OUTPUT_PREVIEW_LINES,
            width,
        ));
        if !view.expanded
            && let Some(path) = result
                .details
                .as_ref()
                .and_then(|d| d.get("fullOutputPath"))
                .and_then(Value::as_str)
        {
            let note = view
                .theme
                .fg(ThemeColor::Muted)
                .paint(&format!("Full output: {path}"));
            lines.extend(wrap(&note, width));
        }
    }
    if let Some(timing) = view.timing {
        lines.push(String::new());
        lines.extend(wrap(&view.theme.fg(ThemeColor::Muted).paint(timing), width));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_is_recognised() {
        assert!(is_header(
            "Script completed\nWall time 0.1 seconds\nOutput:\n"
        ));
        assert!(is_header(
            "Script failed\nWall time 12.0 seconds\nOutput:\n"
        ));
        assert!(!is_header(
            "Script completed\nWall time x seconds\nOutput:\n"
        ));
        assert!(!is_header("hello"));
    }
}
