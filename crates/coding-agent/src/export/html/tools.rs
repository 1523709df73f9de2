//! Tool calls with their arguments and results; edits as line diffs.

use serde_json::{Map, Value};
use similar::{ChangeTag, TextDiff};

use pi_ai::{InputBlock, ToolCall, ToolResultMessage};

use super::content::{fold, fold_terminal, image_tag};
use super::format::esc;

/// A tool call with its arguments and (when recorded) its result.
pub(super) fn tool_call(call: &ToolCall, result: Option<&ToolResultMessage>) -> String {
    let failed = result.is_some_and(|r| r.is_error);
    let mut args = call.arguments.clone();
    let take_str = |args: &mut Map<String, Value>, key: &str| match args.get(key) {
        Some(Value::String(s)) => {
            let s = s.clone();
            args.shift_remove(key);
            Some(s)
        }
        _ => None,
    };
    let mut subtitle = String::new();
    let mut body = String::new();
    match call.name.as_str() {
        "bash" => {
            if let Some(command) = take_str(&mut args, "command") {
                body.push_str(&format!(
                    "<pre class=\"command\">$ {}</pre>\n",
                    esc(&command)
                ));
            }
        }
        "edit" => {
            let edits = edit_pairs(&args);
            if !edits.is_empty() {
                for key in ["edits", "oldText", "newText"] {
                    args.shift_remove(key);
                }
                subtitle = take_str(&mut args, "path").unwrap_or_default();
                for (old, new) in &edits {
                    body.push_str(&diff(old, new));
                }
            }
        }
        "write" => {
            if let Some(content) = take_str(&mut args, "content") {
                subtitle = take_str(&mut args, "path").unwrap_or_default();
                body.push_str(&fold(&content, "code"));
            }
        }
        _ => {}
    }
    if !args.is_empty() {
        let json = serde_json::to_string_pretty(&Value::Object(args)).unwrap_or_default();
        body.push_str(&fold(&json, "json"));
    } else if body.is_empty() {
        body.push_str("<div class=\"muted\">(no arguments)</div>\n");
    }
    let subtitle = if subtitle.is_empty() {
        String::new()
    } else {
        format!(" <span class=\"tool-path\">{}</span>", esc(&subtitle))
    };
    let result = match result {
        Some(result) => tool_result(result),
        None => "<div class=\"muted\">(no result recorded)</div>\n".to_owned(),
    };
    format!(
        "<div class=\"tool{}\" id=\"tool-call-{}\">\n<div class=\"tool-head\"><span class=\"tool-name\">{}</span>{subtitle}</div>\n{body}{result}</div>\n",
        if failed { " error" } else { "" },
        esc(&call.id),
        esc(&call.name)
    )
}

/// The `(oldText, newText)` pairs of edit arguments: `edits` (an array, or a JSON string
/// holding one) and a top-level pair.
pub(super) fn edit_pairs(args: &Map<String, Value>) -> Vec<(String, String)> {
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
    let edits = match args.get("edits") {
        Some(Value::String(s)) => serde_json::from_str::<Value>(s).ok(),
        other => other.cloned(),
    };
    let mut pairs: Vec<(String, String)> = match edits {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|item| {
                let old = text(item, "oldText");
                let new = text(item, "newText");
                (old.is_some() || new.is_some())
                    .then(|| (old.unwrap_or_default(), new.unwrap_or_default()))
            })
            .collect(),
        _ => Vec::new(),
    };
    let top = Value::Object(args.clone());
    let (old, new) = (text(&top, "oldText"), text(&top, "newText"));
    if old.is_some() || new.is_some() {
        pairs.push((old.unwrap_or_default(), new.unwrap_or_default()));
    }
    pairs
}

/// A line diff of `old` → `new`: removed lines red, added lines green.
fn diff(old: &str, new: &str) -> String {
    let mut html = String::from("<div class=\"diff\">\n");
    for change in TextDiff::from_lines(old, new).iter_all_changes() {
        let (class, sign) = match change.tag() {
            ChangeTag::Delete => ("del", '-'),
            ChangeTag::Insert => ("ins", '+'),
            ChangeTag::Equal => ("eq", ' '),
        };
        let line = change.value();
        let line = line.strip_suffix('\n').unwrap_or(line);
        let line = line.strip_suffix('\r').unwrap_or(line);
        html.push_str(&format!(
            "<div class=\"{class}\">{sign}{}</div>\n",
            esc(line)
        ));
    }
    html.push_str("</div>\n");
    html
}

/// A tool result: its text (folded when long) and images; error styling when it failed.
pub(super) fn tool_result(result: &ToolResultMessage) -> String {
    let mut html = format!(
        "<div class=\"tool-result{}\">\n",
        if result.is_error { " error" } else { "" }
    );
    if result.is_error {
        html.push_str("<div class=\"result-label\">Error</div>\n");
    }
    let text: Vec<&str> = result
        .content
        .iter()
        .filter_map(InputBlock::as_text)
        .collect();
    let text = text.join("\n");
    if !text.is_empty() {
        html.push_str(&fold_terminal(&text, "output"));
    }
    let mut images = 0;
    for block in &result.content {
        if let InputBlock::Image(image) = block {
            html.push_str(&image_tag(&image.mime_type, &image.data));
            images += 1;
        }
    }
    if text.is_empty() && images == 0 {
        html.push_str("<div class=\"muted\">(empty result)</div>\n");
    }
    html.push_str("</div>\n");
    html
}
