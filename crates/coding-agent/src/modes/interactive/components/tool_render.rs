//! Per-tool drawing of a call and its result (the TypeScript tools' `renderCall` and
//! `renderResult`): inner lines of the tool box, at the box's content width.

use pi_ai::InputBlock;
use pi_tui::highlight::{highlight_code, supports_language};
use pi_tui::style::Style;
use pi_tui::width::truncate_to_width;
use serde_json::Value;

use super::{EXPAND_KEY, paint, render_diff, replace_tabs, shorten_path, strip_ansi, syntax_theme};
use crate::modes::interactive::theme::{Theme, ThemeColor};
use crate::tools::edit_diff::{DEFAULT_CONTEXT_LINES, generate_diff_string};
use crate::tools::truncate::{DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size};

/// Visual lines of bash output shown while collapsed.
pub(super) const BASH_PREVIEW_LINES: usize = 5;
/// Lines of a read result or write content shown while collapsed.
pub(super) const FILE_PREVIEW_LINES: usize = 10;
/// Lines of grep output shown while collapsed.
pub(super) const GREP_PREVIEW_LINES: usize = 15;
/// Lines of find/ls output shown while collapsed.
pub(super) const LIST_PREVIEW_LINES: usize = 20;

/// A tool result as the view keeps it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct ResultData {
    pub content: Vec<InputBlock>,
    pub details: Option<Value>,
}

/// Everything a tool renderer looks at.
pub(super) struct ToolView<'a> {
    pub theme: &'a Theme,
    pub name: &'a str,
    pub args: &'a Value,
    pub result: Option<&'a ResultData>,
    pub is_partial: bool,
    pub is_error: bool,
    pub expanded: bool,
    /// `Took 1.2s` / `Elapsed 3.0s` (bash only).
    pub timing: Option<&'a str>,
    /// Images are drawn inline below the box (no `[Image: …]` line in the text then).
    pub show_images: bool,
}

impl ToolView<'_> {
    fn fg(&self, key: ThemeColor) -> Style {
        self.theme.fg(key)
    }

    fn title(&self, text: &str) -> String {
        paint(self.fg(ThemeColor::ToolTitle).bold(), text)
    }

    fn invalid_arg(&self) -> String {
        self.fg(ThemeColor::Error).paint("[invalid arg]")
    }

    /// `... (N more lines, ctrl+o to expand)` (`extra` goes after the count).
    fn more_hint(&self, remaining: usize, extra: &str) -> String {
        format!(
            "{} {}{})",
            self.fg(ThemeColor::Muted)
                .paint(&format!("... ({remaining} more lines,{extra}")),
            self.fg(ThemeColor::Dim).paint(EXPAND_KEY),
            self.fg(ThemeColor::Muted).paint(" to expand"),
        )
    }

    /// `path` in accent, `...` while it is still streaming, `[invalid arg]` if not text.
    fn path_display(&self, path: Option<&str>) -> String {
        match path {
            None => self.invalid_arg(),
            Some("") => self.fg(ThemeColor::ToolOutput).paint("..."),
            Some(p) => {
                let shown = self.fg(ThemeColor::Accent).paint(&shorten_path(p));
                if !pi_tui::capabilities::get().hyperlinks {
                    return shown;
                }
                // A `file://` link to the file, where the terminal shows hyperlinks.
                let path = crate::config::paths::expand_tilde(p);
                let absolute = std::env::current_dir().unwrap_or_default().join(path);
                pi_tui::capabilities::hyperlink(&shown, &pi_tui::capabilities::file_url(&absolute))
            }
        }
    }

    fn error_text(&self) -> Option<String> {
        let text = self
            .result
            .map(|r| text_output(r, self.show_images))
            .unwrap_or_default();
        (!text.trim().is_empty()).then(|| self.fg(ThemeColor::Error).paint(text.trim_end()))
    }
}

/// A string argument: `Some("")` when absent or null, `None` when of another type.
fn arg_str<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    match args.get(key) {
        None | Some(Value::Null) => Some(""),
        Some(Value::String(s)) => Some(s),
        Some(_) => None,
    }
}

/// The path argument (`file_path`, else `path`).
fn path_arg(args: &Value) -> Option<&str> {
    match args.get("file_path") {
        Some(v) if !v.is_null() => v.as_str(),
        _ => arg_str(args, "path"),
    }
}

/// A JSON value as JavaScript would print it in a template string.
fn js_display(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(f)) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
            (None, Some(f)) => f.to_string(),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

/// A present, non-null argument.
fn arg<'a>(args: &'a Value, key: &str) -> Option<&'a Value> {
    args.get(key).filter(|v| !v.is_null())
}

/// Text blocks (ANSI and control characters removed) joined by newlines, plus an
/// `[Image: [mime] WxH]` line per image unless the images are drawn inline (`shown`).
pub(super) fn text_output(result: &ResultData, shown: bool) -> String {
    let texts: Vec<String> = result
        .content
        .iter()
        .filter_map(|b| match b {
            InputBlock::Text(t) => Some(sanitize(&strip_ansi(&t.text))),
            InputBlock::Image(_) => None,
        })
        .collect();
    let mut output = texts.join("\n");
    if shown {
        return output;
    }
    let images: Vec<String> = result
        .content
        .iter()
        .filter_map(|b| match b {
            InputBlock::Image(img) => {
                let mime = if img.mime_type.is_empty() {
                    "image/unknown"
                } else {
                    img.mime_type.as_str()
                };
                let dims = (!img.data.is_empty() && !img.mime_type.is_empty())
                    .then(|| pi_tui::image::image_dimensions(&img.data, &img.mime_type))
                    .flatten();
                Some(pi_tui::image::image_fallback(mime, dims, None))
            }
            InputBlock::Text(_) => None,
        })
        .collect();
    if !images.is_empty() {
        if !output.is_empty() {
            output.push('\n');
        }
        output.push_str(&images.join("\n"));
    }
    output
}

/// Drops `\r` and control characters other than newline and tab.
fn sanitize(text: &str) -> String {
    text.chars()
        .filter(|c| *c == '\n' || *c == '\t' || !c.is_control())
        .collect()
}

/// The language to highlight a file as (its extension, when a grammar knows it).
fn language_for(path: &str) -> Option<String> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase())?;
    supports_language(&ext).then_some(ext)
}

/// The first `limit` lines of a file's text (all when `None`), highlighted as `lang` or
/// painted in `toolOutput`; returns the lines and the total line count.
fn file_preview(
    view: &ToolView<'_>,
    text: &str,
    lang: Option<&str>,
    limit: Option<usize>,
) -> (Vec<String>, usize) {
    let text = replace_tabs(&text.replace('\r', ""));
    let mut raw: Vec<&str> = text.split('\n').collect();
    while raw.last().is_some_and(|l| l.is_empty()) {
        raw.pop();
    }
    let total = raw.len();
    let shown = &raw[..limit.map_or(total, |l| l.min(total))];
    let lines = match lang {
        Some(lang) => {
            let mut lines =
                highlight_code(&shown.join("\n"), Some(lang), &syntax_theme(view.theme));
            lines.truncate(shown.len());
            lines
        }
        None => shown
            .iter()
            .map(|l| view.fg(ThemeColor::ToolOutput).paint(l))
            .collect(),
    };
    (lines, total)
}

fn truncation(details: Option<&Value>) -> Option<&Value> {
    details
        .and_then(|d| d.get("truncation"))
        .filter(|t| t.get("truncated").and_then(Value::as_bool) == Some(true))
}

fn num_field(value: &Value, key: &str) -> Option<u64> {
    value
        .get(key)
        .and_then(|v| v.as_u64().or_else(|| v.as_f64().map(|f| f as u64)))
}

fn size_limit(t: &Value) -> String {
    format_size(num_field(t, "maxBytes").map_or(DEFAULT_MAX_BYTES, |b| b as usize))
}

/// The inner lines of a tool box of `width` columns.
pub(super) fn render_tool(view: &ToolView<'_>, width: usize) -> Vec<String> {
    let text = match view.name {
        "bash" => return render_bash(view, width),
        "codemode" => return super::codemode_render::render_codemode(view, width),
        "read" => render_read(view),
        "write" => render_write(view),
        "edit" => render_edit(view),
        "grep" | "find" | "ls" => render_search(view),
        _ => return render_generic(view, width),
    };
    wrap(&text, width)
}

fn wrap(text: &str, width: usize) -> Vec<String> {
    super::text_lines(text, width, 0)
}

fn render_bash(view: &ToolView<'_>, width: usize) -> Vec<String> {
    let command = match arg_str(view.args, "command") {
        None => view.invalid_arg(),
        Some("") => view.fg(ThemeColor::ToolOutput).paint("..."),
        Some(c) => c.to_string(),
    };
    let mut title = view.title(&format!("$ {command}"));
    if let Some(timeout) =
        arg(view.args, "timeout").filter(|t| t.as_f64().is_some_and(|f| f != 0.0))
    {
        title.push_str(
            &view
                .fg(ThemeColor::Muted)
                .paint(&format!(" (timeout {}s)", js_display(timeout))),
        );
    }
    let mut lines = wrap(&title, width);
    let Some(result) = view.result else {
        return lines;
    };

    let output = text_output(result, view.show_images);
    let output = output.trim();
    if !output.is_empty() {
        let style = view.fg(ThemeColor::ToolOutput);
        let styled: Vec<String> = output.split('\n').map(|l| style.paint(l)).collect();
        let styled = styled.join("\n");
        if view.expanded {
            lines.extend(wrap(&format!("\n{styled}"), width));
        } else {
            let visual = wrap(&styled, width);
            lines.push(String::new());
            let skipped = visual.len().saturating_sub(BASH_PREVIEW_LINES);
            if skipped > 0 {
                let hint = format!(
                    "{} {}{})",
                    view.fg(ThemeColor::Muted)
                        .paint(&format!("... ({skipped} earlier lines,")),
                    view.fg(ThemeColor::Dim).paint(EXPAND_KEY),
                    view.fg(ThemeColor::Muted).paint(" to expand"),
                );
                lines.push(truncate_to_width(&hint, width, "...", false));
            }
            lines.extend(visual.into_iter().skip(skipped));
        }
    }

    let details = result.details.as_ref();
    let full_path = details
        .and_then(|d| d.get("fullOutputPath"))
        .and_then(Value::as_str);
    let trunc = truncation(details);
    if full_path.is_some() || trunc.is_some() {
        let mut warnings = Vec::new();
        if let Some(path) = full_path {
            warnings.push(format!("Full output: {path}"));
        }
        if let Some(t) = trunc {
            let shown = num_field(t, "outputLines").unwrap_or(0);
            if t.get("truncatedBy").and_then(Value::as_str) == Some("lines") {
                let total = num_field(t, "totalLines").unwrap_or(0);
                warnings.push(format!("Truncated: showing {shown} of {total} lines"));
            } else {
                warnings.push(format!(
                    "Truncated: {shown} lines shown ({} limit)",
                    size_limit(t)
                ));
            }
        }
        let warning = view
            .fg(ThemeColor::Warning)
            .paint(&format!("[{}]", warnings.join(". ")));
        lines.extend(wrap(&format!("\n{warning}"), width));
    }
    if let Some(timing) = view.timing {
        let timing = view.fg(ThemeColor::Muted).paint(timing);
        lines.extend(wrap(&format!("\n{timing}"), width));
    }
    lines
}

/// pi 1.6 names some reads by what they load when collapsed: a skill, or a resource file
/// (`AGENTS.md`, `CLAUDE.md`).
fn compact_read_label(view: &ToolView<'_>, raw_path: &str, range: &str) -> Option<String> {
    let path = std::path::Path::new(raw_path);
    let name = path.file_name()?.to_str()?;
    let hint = view
        .fg(ThemeColor::Dim)
        .paint(&format!(" ({EXPAND_KEY} to expand)"));
    if name == "SKILL.md" {
        let skill = path
            .parent()
            .and_then(|p| p.file_name())
            .and_then(|n| n.to_str())
            .unwrap_or(name);
        return Some(format!(
            "{}{}{range}{hint}",
            view.fg(ThemeColor::CustomMessageLabel)
                .paint("\x1b[1m[skill]\x1b[22m "),
            view.fg(ThemeColor::CustomMessageText).paint(skill)
        ));
    }
    const RESOURCES: [&str; 5] = [
        "AGENTS.override.md",
        "AGENTS.md",
        "AGENTS.MD",
        "CLAUDE.md",
        "CLAUDE.MD",
    ];
    RESOURCES.contains(&name).then(|| {
        format!(
            "{} {}{range}{hint}",
            view.title("read resource"),
            view.fg(ThemeColor::Accent).paint(raw_path)
        )
    })
}

fn render_read(view: &ToolView<'_>) -> String {
    let raw_path = path_arg(view.args);
    let offset = arg(view.args, "offset");
    let limit = arg(view.args, "limit");
    let mut range = String::new();
    if offset.is_some() || limit.is_some() {
        let start = offset.and_then(Value::as_i64).unwrap_or(1);
        let end = limit
            .and_then(Value::as_i64)
            .map(|l| format!("-{}", start + l - 1))
            .unwrap_or_default();
        range = view
            .fg(ThemeColor::Warning)
            .paint(&format!(":{start}{end}"));
    }
    let text = raw_path
        .filter(|_| !view.expanded)
        .and_then(|p| compact_read_label(view, p, &range))
        .unwrap_or_else(|| {
            format!(
                "{} {}{range}",
                view.title("read"),
                view.path_display(raw_path)
            )
        });
    let mut text = text;
    let Some(result) = view.result else {
        return text;
    };
    // pi 1.6 shows a successful read's content only when tool output is expanded.
    if !view.expanded && !view.is_error {
        return text;
    }
    if view.is_error {
        if let Some(err) = view.error_text() {
            text.push_str("\n\n");
            text.push_str(&err);
        }
        return text;
    }

    let output = text_output(result, view.show_images);
    let lang = raw_path.and_then(language_for);
    let limit = (!view.expanded).then_some(FILE_PREVIEW_LINES);
    let (lines, total) = file_preview(view, &output, lang.as_deref(), limit);
    if !lines.is_empty() {
        text.push_str("\n\n");
        text.push_str(&lines.join("\n"));
    }
    let remaining = total.saturating_sub(lines.len());
    if remaining > 0 {
        text.push('\n');
        text.push_str(&view.more_hint(remaining, ""));
    }

    if let Some(t) = truncation(result.details.as_ref()) {
        let warning = if t.get("firstLineExceedsLimit").and_then(Value::as_bool) == Some(true) {
            format!("[First line exceeds {} limit]", size_limit(t))
        } else if t.get("truncatedBy").and_then(Value::as_str) == Some("lines") {
            format!(
                "[Truncated: showing {} of {} lines ({} line limit)]",
                num_field(t, "outputLines").unwrap_or(0),
                num_field(t, "totalLines").unwrap_or(0),
                num_field(t, "maxLines").unwrap_or(DEFAULT_MAX_LINES as u64),
            )
        } else {
            format!(
                "[Truncated: {} lines shown ({} limit)]",
                num_field(t, "outputLines").unwrap_or(0),
                size_limit(t)
            )
        };
        text.push('\n');
        text.push_str(&view.fg(ThemeColor::Warning).paint(&warning));
    }
    text
}

fn render_write(view: &ToolView<'_>) -> String {
    let raw_path = path_arg(view.args);
    let mut text = format!("{} {}", view.title("write"), view.path_display(raw_path));
    match arg_str(view.args, "content") {
        None => {
            text.push_str("\n\n");
            text.push_str(
                &view
                    .fg(ThemeColor::Error)
                    .paint("[invalid content arg - expected string]"),
            );
        }
        Some("") => {}
        Some(content) => {
            let lang = raw_path.and_then(language_for);
            let limit = (!view.expanded).then_some(FILE_PREVIEW_LINES);
            let (lines, total) = file_preview(view, content, lang.as_deref(), limit);
            text.push_str("\n\n");
            text.push_str(&lines.join("\n"));
            let remaining = total.saturating_sub(lines.len());
            if remaining > 0 {
                text.push('\n');
                text.push_str(&view.more_hint(remaining, &format!(" {total} total,")));
            }
        }
    }
    if view.result.is_some()
        && view.is_error
        && let Some(err) = view.error_text()
    {
        text.push_str("\n\n");
        text.push_str(&err);
    }
    text
}

/// The replacements of edit arguments: `edits` (an array, or a JSON string of one) or
/// the legacy `oldText`/`newText` pair.
fn edit_pairs(args: &Value) -> Vec<(String, String)> {
    let pair = |v: &Value| {
        Some((
            v.get("oldText")?.as_str()?.to_string(),
            v.get("newText")?.as_str()?.to_string(),
        ))
    };
    let edits = match args.get("edits") {
        Some(Value::String(s)) => serde_json::from_str::<Value>(s).ok(),
        Some(v) => Some(v.clone()),
        None => None,
    };
    if let Some(Value::Array(items)) = edits {
        let pairs: Option<Vec<_>> = items.iter().map(pair).collect();
        if let Some(pairs) = pairs.filter(|p| !p.is_empty()) {
            return pairs;
        }
    }
    pair(args).into_iter().collect()
}

/// The diff of an edit: the result's `details.diff`, else computed from the arguments.
fn edit_diff(view: &ToolView<'_>) -> Option<String> {
    let from_details = view
        .result
        .and_then(|r| r.details.as_ref())
        .and_then(|d| d.get("diff"))
        .and_then(Value::as_str)
        .filter(|d| !d.is_empty());
    if let Some(diff) = from_details {
        return Some(diff.to_string());
    }
    let diffs: Vec<String> = edit_pairs(view.args)
        .iter()
        .map(|(old, new)| generate_diff_string(old, new, DEFAULT_CONTEXT_LINES).diff)
        .filter(|d| !d.is_empty())
        .collect();
    (!diffs.is_empty()).then(|| diffs.join("\n"))
}

fn render_edit(view: &ToolView<'_>) -> String {
    let raw_path = path_arg(view.args);
    let mut text = format!("{} {}", view.title("edit"), view.path_display(raw_path));
    if view.result.is_none() || view.is_partial {
        return text;
    }
    if view.is_error {
        if let Some(err) = view.error_text() {
            text.push_str("\n\n");
            text.push_str(&err);
        }
    } else if let Some(diff) = edit_diff(view) {
        text.push_str("\n\n");
        text.push_str(&render_diff(&diff, view.theme));
    }
    text
}

fn render_search(view: &ToolView<'_>) -> String {
    let output_style = view.fg(ThemeColor::ToolOutput);
    let args = view.args;
    let path = arg_str(args, "path");
    let path_text = match path {
        None => view.invalid_arg(),
        Some(p) => shorten_path(if p.is_empty() { "." } else { p }),
    };
    let limit = arg(args, "limit").map(js_display);
    let mut text = match view.name {
        "grep" => {
            let pattern = match arg_str(args, "pattern") {
                None => view.invalid_arg(),
                Some(p) => view.fg(ThemeColor::Accent).paint(&format!("/{p}/")),
            };
            let mut t = format!(
                "{} {pattern}{}",
                view.title("grep"),
                paint(output_style, &format!(" in {path_text}"))
            );
            if let Some(glob) = arg_str(args, "glob").filter(|g| !g.is_empty()) {
                t.push_str(&output_style.paint(&format!(" ({glob})")));
            }
            if let Some(limit) = &limit {
                t.push_str(&output_style.paint(&format!(" limit {limit}")));
            }
            t
        }
        "find" => {
            let pattern = match arg_str(args, "pattern") {
                None => view.invalid_arg(),
                Some(p) => view.fg(ThemeColor::Accent).paint(p),
            };
            let mut t = format!(
                "{} {pattern}{}",
                view.title("find"),
                paint(output_style, &format!(" in {path_text}"))
            );
            if let Some(limit) = &limit {
                t.push_str(&output_style.paint(&format!(" (limit {limit})")));
            }
            t
        }
        _ => {
            let shown = match path {
                None => path_text,
                Some(_) => view.fg(ThemeColor::Accent).paint(&path_text),
            };
            let mut t = format!("{} {shown}", view.title("ls"));
            if let Some(limit) = &limit {
                t.push_str(&output_style.paint(&format!(" (limit {limit})")));
            }
            t
        }
    };

    let Some(result) = view.result else {
        return text;
    };
    if view.is_error {
        if let Some(err) = view.error_text() {
            text.push_str("\n\n");
            text.push_str(&err);
        }
        return text;
    }
    let output = text_output(result, view.show_images);
    let output = output.trim();
    if !output.is_empty() {
        let lines: Vec<&str> = output.split('\n').collect();
        let max = if view.expanded {
            lines.len()
        } else if view.name == "grep" {
            GREP_PREVIEW_LINES
        } else {
            LIST_PREVIEW_LINES
        };
        let shown: Vec<String> = lines
            .iter()
            .take(max)
            .map(|l| output_style.paint(l))
            .collect();
        text.push_str("\n\n");
        text.push_str(&shown.join("\n"));
        let remaining = lines.len().saturating_sub(max);
        if remaining > 0 {
            text.push('\n');
            text.push_str(&view.more_hint(remaining, ""));
        }
    }

    let details = result.details.as_ref();
    let limit_key = match view.name {
        "grep" => ("matchLimitReached", "matches limit"),
        "find" => ("resultLimitReached", "results limit"),
        _ => ("entryLimitReached", "entries limit"),
    };
    let mut warnings = Vec::new();
    if let Some(reached) = details
        .and_then(|d| d.get(limit_key.0))
        .filter(|v| !v.is_null() && *v != &Value::Bool(false))
    {
        warnings.push(format!("{} {}", js_display(reached), limit_key.1));
    }
    if let Some(t) = truncation(details) {
        warnings.push(format!("{} limit", size_limit(t)));
    }
    if view.name == "grep"
        && details
            .and_then(|d| d.get("linesTruncated"))
            .and_then(Value::as_bool)
            == Some(true)
    {
        warnings.push("some lines truncated".to_string());
    }
    if !warnings.is_empty() {
        text.push('\n');
        text.push_str(
            &view
                .fg(ThemeColor::Warning)
                .paint(&format!("[Truncated: {}]", warnings.join(", "))),
        );
    }
    text
}

fn render_generic(view: &ToolView<'_>, width: usize) -> Vec<String> {
    let mut text = view.title(view.name);
    let has_args = match view.args {
        Value::Null => false,
        Value::Object(map) => !map.is_empty(),
        _ => true,
    };
    if has_args {
        text.push(' ');
        text.push_str(&view.fg(ThemeColor::Muted).paint(&view.args.to_string()));
    }
    let mut lines = wrap(&text, width);
    let Some(result) = view.result else {
        return lines;
    };
    let output = text_output(result, view.show_images);
    let output = output.trim_end();
    if output.trim().is_empty() {
        return lines;
    }
    let style = if view.is_error {
        view.fg(ThemeColor::Error)
    } else {
        view.fg(ThemeColor::ToolOutput)
    };
    let all: Vec<&str> = output.split('\n').collect();
    let max = if view.expanded {
        all.len()
    } else {
        FILE_PREVIEW_LINES
    };
    let mut body: Vec<String> = all.iter().take(max).map(|l| style.paint(l)).collect();
    let remaining = all.len().saturating_sub(max);
    if remaining > 0 {
        body.push(view.more_hint(remaining, ""));
    }
    lines.extend(wrap(&format!("\n{}", body.join("\n")), width));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_string_arguments_like_the_typescript_str_helper() {
        let args = json!({"a": "x", "b": null, "c": 3});
        assert_eq!(arg_str(&args, "a"), Some("x"));
        assert_eq!(arg_str(&args, "b"), Some(""));
        assert_eq!(arg_str(&args, "missing"), Some(""));
        assert_eq!(arg_str(&args, "c"), None);
        assert_eq!(path_arg(&json!({"file_path": "f", "path": "p"})), Some("f"));
        assert_eq!(path_arg(&json!({"path": "p"})), Some("p"));
    }

    #[test]
    fn collects_edit_pairs_from_every_argument_shape() {
        let e = json!({"path": "a", "edits": [{"oldText": "a", "newText": "b"}]});
        assert_eq!(edit_pairs(&e), vec![("a".to_string(), "b".to_string())]);
        let s = json!({"path": "a", "edits": "[{\"oldText\":\"c\",\"newText\":\"d\"}]"});
        assert_eq!(edit_pairs(&s), vec![("c".to_string(), "d".to_string())]);
        let legacy = json!({"path": "a", "oldText": "e", "newText": "f"});
        assert_eq!(
            edit_pairs(&legacy),
            vec![("e".to_string(), "f".to_string())]
        );
    }

    #[test]
    fn numbers_print_like_javascript() {
        assert_eq!(js_display(&json!(30)), "30");
        assert_eq!(js_display(&json!(1.5)), "1.5");
        assert_eq!(js_display(&json!(2.0)), "2");
    }

    #[test]
    fn images_become_placeholder_lines() {
        let r = ResultData {
            content: vec![
                InputBlock::text("a\x1b[31mb\x1b[0m\r"),
                InputBlock::Image(pi_ai::ImageContent::new("", "image/png")),
            ],
            details: None,
        };
        assert_eq!(text_output(&r, false), "ab\n[Image: [image/png]]");
        assert_eq!(text_output(&r, true), "ab");
    }
}
