//! The HTML page of a session: inline CSS and script, images as `data:` URIs and the
//! session's JSONL embedded (base64) for download, so the file works offline.
//!
//! Everything is rendered here, not in the browser: the current branch from root to leaf,
//! each tool call with its result, and totals over the whole session.

use std::collections::{HashMap, HashSet};

use base64::Engine as _;
use pulldown_cmark::{CodeBlockKind, Event, LinkType, Options, Parser, Tag, TagEnd};
use serde_json::{Map, Value};
use similar::{ChangeTag, TextDiff};

use pi_agent_core::{AgentMessage, CustomMessage};
use pi_ai::{
    AssistantBlock, AssistantMessage, InputBlock, Message, StopReason, ToolCall, ToolResultMessage,
    Usage, UserContent, UserMessage,
};

use crate::session::{EntryKind, SessionEntry, SessionManager};

/// Text with more lines than this is folded behind a preview.
const FOLD_LINES: usize = 20;
/// Text longer than this (in bytes) is folded behind a preview.
const FOLD_BYTES: usize = 4000;
/// Lines shown in the preview of folded text.
const PREVIEW_LINES: usize = 8;
/// Characters shown at most in the preview of folded text.
const PREVIEW_CHARS: usize = 1200;

/// Renders the session as a complete HTML document (the current branch, root to leaf).
pub fn render_session_html(session: &SessionManager) -> String {
    let branch = session.branch_entries();
    Page::new(session, &branch).render()
}

struct Page<'a> {
    session: &'a SessionManager,
    branch: &'a [&'a SessionEntry],
    /// Tool results on the branch, by tool call id.
    results: HashMap<&'a str, &'a ToolResultMessage>,
    /// Ids of tool calls on the branch; their results render with the call.
    calls: HashSet<&'a str>,
    out: String,
}

impl<'a> Page<'a> {
    fn new(session: &'a SessionManager, branch: &'a [&'a SessionEntry]) -> Self {
        let mut results = HashMap::new();
        let mut calls = HashSet::new();
        for entry in branch {
            match entry.message() {
                Some(AgentMessage::Llm(Message::ToolResult(r))) => {
                    results.insert(r.tool_call_id.as_str(), r);
                }
                Some(AgentMessage::Llm(Message::Assistant(a))) => {
                    calls.extend(a.tool_calls().map(|c| c.id.as_str()));
                }
                _ => {}
            }
        }
        Self {
            session,
            branch,
            results,
            calls,
            out: String::with_capacity(64 * 1024),
        }
    }

    fn render(mut self) -> String {
        let header = self.session.header();
        let title = match self.session.name() {
            Some(name) => format!("{name} · pi session"),
            None => format!("pi session {}", header.id),
        };
        self.out
            .push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
        self.out.push_str(
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <meta name=\"color-scheme\" content=\"dark light\">\n\
             <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
             img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n",
        );
        self.out
            .push_str(&format!("<title>{}</title>\n<style>\n", esc(&title)));
        self.out.push_str(CSS);
        self.out.push_str("</style>\n</head>\n<body>\n<main>\n");
        self.header();
        self.out.push_str("<section class=\"messages\">\n");
        let before = self.out.len();
        for entry in self.branch {
            self.entry(entry);
        }
        if self.out.len() == before {
            self.out
                .push_str("<p class=\"muted empty\">No messages in this session yet.</p>\n");
        }
        self.out.push_str("</section>\n");
        self.footer();
        self.out.push_str("</main>\n");
        self.out.push_str(&format!(
            "<script type=\"application/x-pi-session+base64\" id=\"pi-session-data\">{}</script>\n",
            base64::engine::general_purpose::STANDARD.encode(session_jsonl(self.session))
        ));
        self.out.push_str("<script>\n");
        self.out.push_str(SCRIPT);
        self.out.push_str("</script>\n</body>\n</html>\n");
        self.out
    }

    fn header(&mut self) {
        let session = self.session;
        let header = session.header();
        let heading = session.name().unwrap_or("Session");
        let mut html = format!(
            "<header class=\"session-header\">\n<h1>{}</h1>\n<dl class=\"info\">\n",
            esc(heading)
        );
        if let Some(name) = session.name() {
            html.push_str(&format!("<dt>Name</dt><dd>{}</dd>\n", esc(name)));
        }
        html.push_str(&format!(
            "<dt>Session</dt><dd><code>{}</code></dd>\n<dt>Working directory</dt><dd><code>{}</code></dd>\n<dt>Created</dt><dd>{}</dd>\n",
            esc(&header.id),
            esc(&header.cwd),
            time(&header.timestamp)
        ));
        if let Some(parent) = &header.parent_session {
            html.push_str(&format!(
                "<dt>Parent session</dt><dd><code>{}</code></dd>\n",
                esc(parent)
            ));
        }
        let models = models(session);
        let model = if models.is_empty() {
            "unknown".to_owned()
        } else {
            models.iter().map(|m| esc(m)).collect::<Vec<_>>().join(", ")
        };
        let label = if models.len() > 1 { "Models" } else { "Model" };
        html.push_str(&format!("<dt>{label}</dt><dd>{model}</dd>\n</dl>\n"));
        let file_name = session
            .session_file()
            .and_then(|f| f.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| format!("{}.jsonl", header.id));
        html.push_str(&format!(
            "<div class=\"toolbar\">\
             <button type=\"button\" data-action=\"expand\">Expand all</button>\
             <button type=\"button\" data-action=\"collapse\">Collapse all</button>\
             <button type=\"button\" data-action=\"download\" data-filename=\"{}\">Download JSONL</button>\
             </div>\n</header>\n",
            esc(&file_name)
        ));
        self.out.push_str(&html);
    }

    fn entry(&mut self, entry: &SessionEntry) {
        match &entry.kind {
            EntryKind::Message { message } => match message {
                AgentMessage::Llm(Message::User(user)) => self.user(entry, user),
                AgentMessage::Llm(Message::Assistant(assistant)) => {
                    self.assistant(entry, assistant)
                }
                AgentMessage::Llm(Message::ToolResult(result)) => {
                    if !self.calls.contains(result.tool_call_id.as_str()) {
                        let title = format!("Tool result · {}", result.tool_name);
                        self.open(entry, "tool-result-entry", &title);
                        self.out.push_str(&tool_result(result));
                        self.close();
                    }
                }
                AgentMessage::Custom(custom) => self.custom(entry, custom),
            },
            EntryKind::ModelChange { provider, model_id } => {
                self.meta(entry, &format!("Model: {provider}/{model_id}"));
            }
            EntryKind::ThinkingLevelChange { thinking_level } => {
                self.meta(entry, &format!("Thinking level: {thinking_level}"));
            }
            EntryKind::Compaction {
                summary,
                tokens_before,
                ..
            } => self.compaction(entry, summary, Some(*tokens_before)),
            EntryKind::BranchSummary {
                summary, from_id, ..
            } => self.branch_summary(entry, summary, from_id),
            EntryKind::CustomMessage {
                custom_type,
                content,
                display,
                ..
            } => {
                if *display {
                    self.open(entry, "custom", &format!("[{custom_type}]"));
                    self.out.push_str(&custom_content(content));
                    self.close();
                }
            }
            EntryKind::Custom { .. }
            | EntryKind::Label { .. }
            | EntryKind::SessionInfo { .. }
            | EntryKind::Unknown(_) => {}
        }
    }

    /// Opens a message block: `<article>` with a head line (role, label, time).
    fn open(&mut self, entry: &SessionEntry, class: &str, title: &str) {
        let label = self
            .session
            .label(&entry.id)
            .map(|l| format!("<span class=\"label\">{}</span>", esc(l)))
            .unwrap_or_default();
        self.out.push_str(&format!(
            "<article class=\"msg {class}\" id=\"entry-{}\">\n<div class=\"msg-head\"><span class=\"role\">{}</span>{label}{}</div>\n",
            esc(&entry.id),
            esc(title),
            time(&entry.timestamp)
        ));
    }

    fn close(&mut self) {
        self.out.push_str("</article>\n");
    }

    fn meta(&mut self, entry: &SessionEntry, text: &str) {
        self.out.push_str(&format!(
            "<div class=\"meta\" id=\"entry-{}\">{}</div>\n",
            esc(&entry.id),
            esc(text)
        ));
    }

    fn user(&mut self, entry: &SessionEntry, user: &UserMessage) {
        self.open(entry, "user", "User");
        match &user.content {
            UserContent::Text(text) => self.out.push_str(&markdown_div(text)),
            UserContent::Blocks(blocks) => self.out.push_str(&input_blocks(blocks)),
        }
        self.close();
    }

    fn assistant(&mut self, entry: &SessionEntry, message: &AssistantMessage) {
        self.open(entry, "assistant", "Assistant");
        for block in &message.content {
            match block {
                AssistantBlock::Text(text) => {
                    if !text.text.trim().is_empty() {
                        self.out.push_str(&markdown_div(&text.text));
                    }
                }
                AssistantBlock::Thinking(thinking) => {
                    if thinking.is_redacted() {
                        self.out.push_str(
                            "<details class=\"thinking\"><summary>Thinking (redacted)</summary></details>\n",
                        );
                    } else if !thinking.thinking.trim().is_empty() {
                        self.out.push_str(&format!(
                            "<details class=\"thinking\"><summary>Thinking</summary>\n<div class=\"thinking-body\">{}</div>\n</details>\n",
                            esc(thinking.thinking.trim())
                        ));
                    }
                }
                AssistantBlock::ToolCall(call) => {
                    let result = self.results.get(call.id.as_str()).copied();
                    self.out.push_str(&tool_call(call, result));
                }
            }
        }
        match message.stop_reason {
            StopReason::Aborted => self
                .out
                .push_str("<div class=\"error-text\">Aborted</div>\n"),
            StopReason::Error => self.out.push_str(&format!(
                "<div class=\"error-text\">Error: {}</div>\n",
                esc(message.error_message.as_deref().unwrap_or("Unknown error"))
            )),
            _ => {}
        }
        self.out.push_str(&usage_line(message));
        self.close();
    }

    fn custom(&mut self, entry: &SessionEntry, custom: &CustomMessage) {
        let text = |key: &str| custom.get(key).and_then(Value::as_str).unwrap_or("");
        match custom.role.as_str() {
            "bashExecution" => self.bash_execution(entry, custom),
            "compactionSummary" => {
                let tokens = custom.get("tokensBefore").and_then(Value::as_u64);
                self.compaction(entry, text("summary"), tokens);
            }
            "branchSummary" => self.branch_summary(entry, text("summary"), text("fromId")),
            "custom" => {
                if custom.get("display").and_then(Value::as_bool) != Some(false) {
                    self.open(entry, "custom", &format!("[{}]", text("customType")));
                    let content = custom.get("content").cloned().unwrap_or(Value::Null);
                    self.out.push_str(&custom_content(&content));
                    self.close();
                }
            }
            role => {
                self.open(entry, "custom", role);
                let json = serde_json::to_string_pretty(&custom.data).unwrap_or_default();
                self.out.push_str(&fold(&json, "json"));
                self.close();
            }
        }
    }

    fn bash_execution(&mut self, entry: &SessionEntry, custom: &CustomMessage) {
        let text = |key: &str| custom.get(key).and_then(Value::as_str).unwrap_or("");
        let flag = |key: &str| custom.get(key).and_then(Value::as_bool) == Some(true);
        let exit_code = custom.get("exitCode").and_then(Value::as_i64);
        let cancelled = flag("cancelled");
        let failed = cancelled || exit_code.is_some_and(|c| c != 0);
        let class = if failed { "bash error" } else { "bash" };
        let title = if flag("excludeFromContext") {
            "Bash (not sent to the model)"
        } else {
            "Bash"
        };
        self.open(entry, class, title);
        self.out.push_str(&format!(
            "<pre class=\"command\">$ {}</pre>\n",
            esc(text("command"))
        ));
        let output = text("output");
        if !output.is_empty() {
            self.out.push_str(&fold(output, "output"));
        }
        if cancelled {
            self.out
                .push_str("<div class=\"status warn\">(cancelled)</div>\n");
        } else if let Some(code) = exit_code.filter(|c| *c != 0) {
            self.out.push_str(&format!(
                "<div class=\"status error-text\">(exit {code})</div>\n"
            ));
        }
        if flag("truncated") {
            let path = text("fullOutputPath");
            let note = if path.is_empty() {
                "Output truncated".to_owned()
            } else {
                format!("Output truncated; full output in {path}")
            };
            self.out.push_str(&format!(
                "<div class=\"status warn\">{}</div>\n",
                esc(&note)
            ));
        }
        self.close();
    }

    fn compaction(&mut self, entry: &SessionEntry, summary: &str, tokens_before: Option<u64>) {
        let what = match tokens_before {
            Some(tokens) => format!("Compacted from {}", count(tokens, "token", "tokens")),
            None => "Compacted".to_owned(),
        };
        self.out.push_str(&format!(
            "<section class=\"summary compaction\" id=\"entry-{}\">\n<details><summary><span class=\"role\">Compaction</span> {}{}</summary>\n{}</details>\n</section>\n",
            esc(&entry.id),
            esc(&what),
            time(&entry.timestamp),
            markdown_div(summary)
        ));
    }

    fn branch_summary(&mut self, entry: &SessionEntry, summary: &str, from_id: &str) {
        self.out.push_str(&format!(
            "<section class=\"summary branch-summary\" id=\"entry-{}\">\n<div class=\"msg-head\"><span class=\"role\">Branch summary</span><span class=\"muted\">from {}</span>{}</div>\n{}</section>\n",
            esc(&entry.id),
            esc(from_id),
            time(&entry.timestamp),
            markdown_div(summary)
        ));
    }

    fn footer(&mut self) {
        let totals = Totals::of(self.session.entries());
        let mut counts = vec![
            format!("{} user", totals.user),
            format!("{} assistant", totals.assistant),
            count(totals.tool_results as u64, "tool result", "tool results"),
        ];
        if totals.bash > 0 {
            counts.push(format!("{} bash", totals.bash));
        }
        if totals.compactions > 0 {
            counts.push(count(
                totals.compactions as u64,
                "compaction",
                "compactions",
            ));
        }
        if totals.branch_summaries > 0 {
            counts.push(count(
                totals.branch_summaries as u64,
                "branch summary",
                "branch summaries",
            ));
        }
        let tokens = format!(
            "input {} · output {} · cache read {} · cache write {} · total {}",
            group_digits(totals.usage.input),
            group_digits(totals.usage.output),
            group_digits(totals.usage.cache_read),
            group_digits(totals.usage.cache_write),
            group_digits(
                totals.usage.input
                    + totals.usage.output
                    + totals.usage.cache_read
                    + totals.usage.cache_write
            ),
        );
        let scope = if self.branch.len() < self.session.entries().len() {
            "Totals cover every branch of the session. "
        } else {
            ""
        };
        self.out.push_str(&format!(
            "<footer class=\"totals\">\n<h2>Totals</h2>\n<dl class=\"info\">\n\
             <dt>Messages</dt><dd>{}</dd>\n<dt>Tool calls</dt><dd>{}</dd>\n\
             <dt>Tokens</dt><dd>{}</dd>\n<dt>Cost</dt><dd>${:.4}</dd>\n</dl>\n\
             <p class=\"muted\">{scope}Exported by pi {}.</p>\n</footer>\n",
            counts.join(" · "),
            totals.tool_calls,
            tokens,
            totals.cost,
            crate::VERSION
        ));
    }
}

/// Counts, tokens and cost over a list of entries.
#[derive(Default)]
struct Totals {
    user: usize,
    assistant: usize,
    tool_results: usize,
    tool_calls: usize,
    bash: usize,
    compactions: usize,
    branch_summaries: usize,
    usage: Usage,
    cost: f64,
}

impl Totals {
    fn of(entries: &[SessionEntry]) -> Self {
        let mut totals = Self::default();
        for entry in entries {
            match &entry.kind {
                EntryKind::Message { message } => match message {
                    AgentMessage::Llm(Message::User(_)) => totals.user += 1,
                    AgentMessage::Llm(Message::Assistant(a)) => {
                        totals.assistant += 1;
                        totals.tool_calls += a.tool_calls().count();
                        totals.usage.input += a.usage.input;
                        totals.usage.output += a.usage.output;
                        totals.usage.cache_read += a.usage.cache_read;
                        totals.usage.cache_write += a.usage.cache_write;
                        totals.cost += cost_of(&a.usage);
                    }
                    AgentMessage::Llm(Message::ToolResult(_)) => totals.tool_results += 1,
                    AgentMessage::Custom(c) if c.role == "bashExecution" => totals.bash += 1,
                    AgentMessage::Custom(_) => {}
                },
                EntryKind::Compaction { .. } => totals.compactions += 1,
                EntryKind::BranchSummary { .. } => totals.branch_summaries += 1,
                _ => {}
            }
        }
        totals
    }
}

/// The message's cost in dollars: `cost.total`, or the sum of its parts when unset.
fn cost_of(usage: &Usage) -> f64 {
    let c = &usage.cost;
    if c.total > 0.0 {
        c.total
    } else {
        c.input + c.output + c.cache_read + c.cache_write
    }
}

/// The `provider/model` pairs the session used, in order of first use.
fn models(session: &SessionManager) -> Vec<String> {
    let mut seen = Vec::new();
    for entry in session.entries() {
        let model = match &entry.kind {
            EntryKind::ModelChange { provider, model_id } => format!("{provider}/{model_id}"),
            EntryKind::Message {
                message: AgentMessage::Llm(Message::Assistant(a)),
            } => format!("{}/{}", a.provider, a.model),
            _ => continue,
        };
        if !seen.contains(&model) {
            seen.push(model);
        }
    }
    if seen.is_empty()
        && let Some((provider, model)) = session.build_context().model
    {
        seen.push(format!("{provider}/{model}"));
    }
    seen
}

/// The header and every entry as JSONL, as the session file holds them.
fn session_jsonl(session: &SessionManager) -> String {
    let mut text = serde_json::to_string(session.header()).unwrap_or_default();
    text.push('\n');
    for entry in session.entries() {
        if let Ok(line) = entry.to_line() {
            text.push_str(&line);
            text.push('\n');
        }
    }
    text
}

/// `in … · out … · cache … · $…  provider/model` under an assistant message.
fn usage_line(message: &AssistantMessage) -> String {
    let u = &message.usage;
    let cost = cost_of(u);
    let mut parts = Vec::new();
    if u.input + u.output + u.cache_read + u.cache_write > 0 {
        parts.push(format!("in {}", format_tokens(u.input)));
        parts.push(format!("out {}", format_tokens(u.output)));
        if u.cache_read > 0 {
            parts.push(format!("cache read {}", format_tokens(u.cache_read)));
        }
        if u.cache_write > 0 {
            parts.push(format!("cache write {}", format_tokens(u.cache_write)));
        }
    }
    if cost > 0.0 || !parts.is_empty() {
        parts.push(format!("${cost:.4}"));
    }
    let model = if message.model.is_empty() {
        String::new()
    } else {
        format!("{}/{}", message.provider, message.model)
    };
    if parts.is_empty() && model.is_empty() {
        return String::new();
    }
    format!(
        "<div class=\"usage\">{}<span class=\"model\">{}</span></div>\n",
        esc(&parts.join(" · ")),
        esc(&model)
    )
}

/// A tool call with its arguments and (when recorded) its result.
fn tool_call(call: &ToolCall, result: Option<&ToolResultMessage>) -> String {
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
        "<div class=\"tool{}\" id=\"tool-{}\">\n<div class=\"tool-head\"><span class=\"tool-name\">{}</span>{subtitle}</div>\n{body}{result}</div>\n",
        if failed { " error" } else { "" },
        esc(&call.id),
        esc(&call.name)
    )
}

/// The `(oldText, newText)` pairs of edit arguments: `edits` (an array, or a JSON string
/// holding one) and a top-level pair.
fn edit_pairs(args: &Map<String, Value>) -> Vec<(String, String)> {
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
fn tool_result(result: &ToolResultMessage) -> String {
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
        html.push_str(&fold(&text, "output"));
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

/// Text and image blocks of user or custom content.
fn input_blocks(blocks: &[InputBlock]) -> String {
    let mut html = String::new();
    for block in blocks {
        match block {
            InputBlock::Text(text) => html.push_str(&markdown_div(&text.text)),
            InputBlock::Image(image) => html.push_str(&image_tag(&image.mime_type, &image.data)),
        }
    }
    html
}

/// The content of a custom message: a string (markdown), blocks, or anything else as JSON.
fn custom_content(content: &Value) -> String {
    match content {
        Value::String(text) => markdown_div(text),
        Value::Array(_) => match serde_json::from_value::<Vec<InputBlock>>(content.clone()) {
            Ok(blocks) => input_blocks(&blocks),
            Err(_) => fold(
                &serde_json::to_string_pretty(content).unwrap_or_default(),
                "json",
            ),
        },
        Value::Null => String::new(),
        other => fold(
            &serde_json::to_string_pretty(other).unwrap_or_default(),
            "json",
        ),
    }
}

/// An `<img>` with the image inline as a `data:` URI.
fn image_tag(mime_type: &str, data: &str) -> String {
    let mime_ok = mime_type.starts_with("image/")
        && mime_type
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-./".contains(c));
    let mime = if mime_ok { mime_type } else { "image/png" };
    let data: String = data
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '='))
        .collect();
    format!("<img class=\"image\" alt=\"image\" src=\"data:{mime};base64,{data}\">\n")
}

/// Preformatted text; long text shows a preview and folds the rest behind `<details>`.
fn fold(text: &str, class: &str) -> String {
    let text = text.trim_end_matches('\n');
    let lines = text.lines().count();
    if lines <= FOLD_LINES && text.len() <= FOLD_BYTES {
        return format!("<pre class=\"{class}\">{}</pre>\n", esc(text));
    }
    let mut preview = text
        .lines()
        .take(PREVIEW_LINES)
        .collect::<Vec<_>>()
        .join("\n");
    if let Some((cut, _)) = preview.char_indices().nth(PREVIEW_CHARS) {
        preview.truncate(cut);
    }
    let what = if lines > 1 {
        count(lines as u64, "line", "lines")
    } else {
        count(text.chars().count() as u64, "character", "characters")
    };
    format!(
        "<div class=\"fold\"><details><summary>Show all {what}</summary><pre class=\"{class}\">{}</pre></details><pre class=\"{class} preview\">{}\n…</pre></div>\n",
        esc(text),
        esc(&preview)
    )
}

/// `<time>` for an ISO timestamp, shown as `YYYY-MM-DD HH:MM:SS UTC` (the script localizes it).
fn time(iso: &str) -> String {
    let bytes = iso.as_bytes();
    let shown = if iso.is_ascii() && bytes.len() >= 19 && bytes[10] == b'T' {
        format!("{} {} UTC", &iso[..10], &iso[11..19])
    } else {
        iso.to_owned()
    };
    format!("<time datetime=\"{}\">{}</time>", esc(iso), esc(&shown))
}

/// `1 line`, `2 lines`, `1,000 lines`: the count with its noun in singular or plural.
fn count(n: u64, one: &str, many: &str) -> String {
    let noun = if n == 1 { one } else { many };
    format!("{} {noun}", group_digits(n))
}

/// `1234567` → `1,234,567`.
fn group_digits(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Compact token counts: `950`, `1.4k`, `14k`, `1.2M`.
fn format_tokens(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..10_000 => format!("{:.1}k", n as f64 / 1_000.0),
        10_000..1_000_000 => format!("{}k", (n as f64 / 1_000.0).round()),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

/// Escapes text for HTML content and attribute values.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Markdown wrapped in a `<div class="md">`.
fn markdown_div(text: &str) -> String {
    format!("<div class=\"md\">{}</div>\n", markdown(text))
}

/// Markdown options: GFM tables, strikethrough and task lists; `~x~` parses as subscript
/// only so that it can be put back as text (strikethrough needs `~~`, as in pi's page).
const MARKDOWN_OPTIONS: Options = Options::ENABLE_TABLES
    .union(Options::ENABLE_STRIKETHROUGH)
    .union(Options::ENABLE_TASKLISTS)
    .union(Options::ENABLE_SUBSCRIPT);

/// CommonMark with GFM tables, strikethrough and task lists as HTML. Raw HTML shows as
/// text, links keep only http(s), mailto and relative URLs, single newlines break lines.
fn markdown(text: &str) -> String {
    let mut events: Vec<Event> = Vec::new();
    // The open fenced or indented code block: its language and text.
    let mut code: Option<(String, String)> = None;
    // The lines of the open raw HTML block.
    let mut html_block: Option<String> = None;
    // For each open link and image: whether it renders as a link.
    let mut links: Vec<bool> = Vec::new();
    for event in Parser::new_ext(text, MARKDOWN_OPTIONS) {
        if let Some((lang, body)) = &mut code {
            match event {
                Event::Text(t) => body.push_str(&t),
                Event::End(TagEnd::CodeBlock) => {
                    let body = body.strip_suffix('\n').unwrap_or(body);
                    events.push(Event::Html(code_block(lang, body).into()));
                    code = None;
                }
                _ => {}
            }
            continue;
        }
        if let Some(block) = &mut html_block {
            match event {
                Event::Html(t) | Event::Text(t) => block.push_str(&t),
                Event::End(TagEnd::HtmlBlock) => {
                    let shown = esc(block.trim_end()).replace('\n', "<br>\n");
                    events.push(Event::Html(format!("<p>{shown}</p>\n").into()));
                    html_block = None;
                }
                _ => {}
            }
            continue;
        }
        match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => {
                        info.split_whitespace().next().unwrap_or("").to_owned()
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                code = Some((lang, String::new()));
            }
            Event::Start(Tag::HtmlBlock) => html_block = Some(String::new()),
            Event::Html(t) | Event::InlineHtml(t) => events.push(Event::Text(t)),
            Event::SoftBreak | Event::HardBreak => events.push(Event::Html("<br>\n".into())),
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }) => {
                let keep = !links.contains(&true) && safe_url(&dest_url);
                links.push(keep);
                if keep {
                    events.push(Event::Start(Tag::Link {
                        link_type,
                        dest_url,
                        title,
                        id,
                    }));
                }
            }
            Event::End(TagEnd::Link) => {
                if links.pop() == Some(true) {
                    events.push(Event::End(TagEnd::Link));
                }
            }
            // Images would load from elsewhere: they show as their alt text, a link to
            // the image when the URL is safe.
            Event::Start(Tag::Image {
                dest_url,
                title,
                id,
                ..
            }) => {
                let keep = !links.contains(&true) && safe_url(&dest_url);
                links.push(keep);
                if keep {
                    events.push(Event::Start(Tag::Link {
                        link_type: LinkType::Inline,
                        dest_url,
                        title,
                        id,
                    }));
                }
                events.push(Event::Html("<span class=\"md-image\">".into()));
            }
            Event::End(TagEnd::Image) => {
                events.push(Event::Html("</span>".into()));
                if links.pop() == Some(true) {
                    events.push(Event::End(TagEnd::Link));
                }
            }
            Event::Start(Tag::Subscript) | Event::End(TagEnd::Subscript) => {
                events.push(Event::Text("~".into()));
            }
            event => events.push(event),
        }
    }
    let mut html = String::with_capacity(text.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut html, events.into_iter());
    html
}

/// Whether a link URL is safe to keep: http(s), mailto or relative (no other scheme).
fn safe_url(url: &str) -> bool {
    // Browsers skip tabs, newlines and other control characters inside a URL's scheme.
    let url: String = url
        .chars()
        .filter(|c| !c.is_ascii_control() && *c != ' ')
        .collect();
    match url.find([':', '/', '?', '#']) {
        Some(end) if url[end..].starts_with(':') => {
            let scheme = url[..end].to_ascii_lowercase();
            matches!(scheme.as_str(), "http" | "https" | "mailto")
        }
        _ => true,
    }
}

/// A code block, its language (when given) as `data-lang`.
fn code_block(lang: &str, code: &str) -> String {
    let lang_attr = if lang.is_empty() {
        String::new()
    } else {
        format!(" data-lang=\"{}\"", esc(lang))
    };
    format!(
        "<pre class=\"code\"{lang_attr}><code>{}</code></pre>\n",
        esc(code)
    )
}

const CSS: &str = r#":root {
  --bg: #15171c;
  --card: #1d2027;
  --card-alt: #232733;
  --text: #d9dee8;
  --muted: #8a92a3;
  --border: #2f3440;
  --accent: #82aaff;
  --user: #22324a;
  --code-bg: #111318;
  --ins-bg: rgba(80, 200, 120, 0.16);
  --ins: #8fe0a0;
  --del-bg: rgba(240, 90, 90, 0.16);
  --del: #f59a9a;
  --error: #f7768e;
  --warn: #e0af68;
  --summary: #2a2640;
  --thinking: #a7aecb;
}
@media (prefers-color-scheme: light) {
  :root {
    --bg: #f4f5f7;
    --card: #ffffff;
    --card-alt: #f0f2f6;
    --text: #1f2430;
    --muted: #667085;
    --border: #d9dde5;
    --accent: #2d5bd7;
    --user: #e6eefc;
    --code-bg: #f2f3f6;
    --ins-bg: rgba(40, 160, 80, 0.14);
    --ins: #17692f;
    --del-bg: rgba(210, 50, 50, 0.12);
    --del: #a01c1c;
    --error: #c0283f;
    --warn: #9a6700;
    --summary: #efeafc;
    --thinking: #505a73;
  }
}
* { box-sizing: border-box; }
body {
  margin: 0;
  background: var(--bg);
  color: var(--text);
  font: 15px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", sans-serif;
}
main { max-width: 980px; margin: 0 auto; padding: 24px 16px 48px; }
code, pre, .diff, .command {
  font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
  font-size: 13px;
}
pre {
  margin: 8px 0;
  padding: 10px 12px;
  background: var(--code-bg);
  border: 1px solid var(--border);
  border-radius: 6px;
  white-space: pre-wrap;
  word-break: break-word;
  overflow-x: auto;
}
.md :not(pre) > code { background: var(--code-bg); padding: 1px 4px; border-radius: 4px; }
.muted { color: var(--muted); }
.session-header, .totals, .msg, .summary {
  background: var(--card);
  border: 1px solid var(--border);
  border-radius: 10px;
  padding: 14px 18px;
  margin: 14px 0;
}
.session-header h1 { margin: 0 0 10px; font-size: 22px; }
.totals h2 { margin: 0 0 10px; font-size: 17px; }
.info { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 0; }
.info dt { color: var(--muted); }
.info dd { margin: 0; word-break: break-all; }
.toolbar { margin-top: 12px; display: flex; gap: 8px; flex-wrap: wrap; }
button {
  font: inherit;
  font-size: 13px;
  color: var(--text);
  background: var(--card-alt);
  border: 1px solid var(--border);
  border-radius: 6px;
  padding: 4px 10px;
  cursor: pointer;
}
button:hover { border-color: var(--accent); }
.msg-head { display: flex; gap: 10px; align-items: baseline; margin-bottom: 6px; font-size: 13px; }
.msg-head time, summary time { margin-left: auto; color: var(--muted); font-size: 12px; }
.role { font-weight: 600; color: var(--accent); }
.label { font-size: 12px; padding: 0 6px; border-radius: 8px; background: var(--card-alt); color: var(--warn); }
.msg.user { background: var(--user); }
.md p { margin: 6px 0; }
.md h1, .md h2, .md h3, .md h4, .md h5, .md h6 { margin: 14px 0 6px; line-height: 1.3; }
.md h1 { font-size: 1.35em; }
.md h2 { font-size: 1.2em; }
.md h3 { font-size: 1.08em; }
.md h4, .md h5, .md h6 { font-size: 1em; }
.md > :first-child { margin-top: 0; }
.md > :last-child { margin-bottom: 0; }
.md ul, .md ol { margin: 6px 0; padding-left: 26px; }
.md li { margin: 2px 0; }
.md li > p { margin: 2px 0; }
.md li > input[type="checkbox"] { margin: 0 6px 0 0; vertical-align: middle; }
.md ul:has(> li > input[type="checkbox"]) { list-style: none; padding-left: 8px; }
.md blockquote { margin: 8px 0; padding: 2px 12px; border-left: 3px solid var(--border); color: var(--muted); }
.md table { border-collapse: collapse; margin: 8px 0; display: block; max-width: 100%; overflow-x: auto; }
.md th, .md td { border: 1px solid var(--border); padding: 4px 10px; }
.md th { background: var(--card-alt); font-weight: 600; }
.md hr { border: none; border-top: 1px solid var(--border); margin: 12px 0; }
.md a { color: var(--accent); }
.md del { color: var(--muted); }
.md .md-image::before { content: "image: "; color: var(--muted); }
.md pre.code[data-lang]::before {
  content: attr(data-lang);
  display: block;
  color: var(--muted);
  font-size: 11px;
  margin-bottom: 4px;
}
.image { display: block; max-width: 100%; max-height: 480px; margin: 8px 0; border-radius: 6px; }
details > summary { cursor: pointer; color: var(--muted); }
details.thinking { margin: 8px 0; }
.thinking-body { white-space: pre-wrap; color: var(--thinking); font-style: italic; padding: 6px 0 0 12px; border-left: 2px solid var(--border); }
.tool {
  margin: 10px 0;
  padding: 10px 12px;
  background: var(--card-alt);
  border: 1px solid var(--border);
  border-left: 3px solid var(--accent);
  border-radius: 6px;
}
.tool.error { border-left-color: var(--error); }
.tool-head { font-size: 13px; }
.tool-name { font-weight: 600; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.tool-path { color: var(--muted); font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.command { color: var(--warn); }
.diff { margin: 8px 0; border: 1px solid var(--border); border-radius: 6px; overflow-x: auto; background: var(--code-bg); }
.diff > div { white-space: pre-wrap; word-break: break-word; padding: 0 10px; }
.diff .del { background: var(--del-bg); color: var(--del); }
.diff .ins { background: var(--ins-bg); color: var(--ins); }
.diff .eq { color: var(--muted); }
.tool-result { margin-top: 6px; }
.tool-result.error pre, .bash.error pre.output { border-color: var(--error); color: var(--error); }
.result-label, .error-text { color: var(--error); font-weight: 600; font-size: 13px; }
.warn { color: var(--warn); }
.status { font-size: 13px; }
.fold details[open] + .preview { display: none; }
.fold summary { font-size: 13px; }
.summary.compaction, .summary.branch-summary { background: var(--summary); }
.summary summary .role { margin-right: 6px; }
.meta { color: var(--muted); font-size: 12px; margin: 6px 4px; }
.usage { display: flex; gap: 12px; color: var(--muted); font-size: 12px; margin-top: 8px; }
.usage .model { margin-left: auto; }
.empty { text-align: center; }
"#;

const SCRIPT: &str = r#"(function () {
  "use strict";
  function download(button) {
    var node = document.getElementById("pi-session-data");
    if (!node) return;
    var raw = atob(node.textContent.trim());
    var bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    var link = document.createElement("a");
    link.download = button.getAttribute("data-filename") || "session.jsonl";
    link.href = URL.createObjectURL(new Blob([bytes], { type: "application/x-ndjson" }));
    document.body.appendChild(link);
    link.click();
    link.remove();
    setTimeout(function () { URL.revokeObjectURL(link.href); }, 1000);
  }
  function setAll(open) {
    document.querySelectorAll("details").forEach(function (d) { d.open = open; });
  }
  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("button[data-action]") : null;
    if (!button) return;
    var action = button.getAttribute("data-action");
    if (action === "download") download(button);
    else if (action === "expand") setAll(true);
    else if (action === "collapse") setAll(false);
  });
  document.querySelectorAll("time[datetime]").forEach(function (node) {
    var date = new Date(node.getAttribute("datetime"));
    if (!isNaN(date.getTime())) {
      node.title = node.textContent;
      node.textContent = date.toLocaleString();
    }
  });
})();
"#;

#[cfg(test)]
mod tests {
    use super::*;

    use std::path::Path;

    use pi_ai::{ImageContent, TextContent, ThinkingContent, ToolResultMessage, UsageCost};
    use serde_json::json;

    fn assistant(content: Vec<AssistantBlock>) -> AssistantMessage {
        AssistantMessage {
            content,
            usage: Usage {
                input: 1200,
                output: 34,
                total_tokens: 1234,
                cost: UsageCost {
                    total: 0.0125,
                    ..UsageCost::default()
                },
                ..Usage::default()
            },
            ..AssistantMessage::empty("openai-completions", "mock", "mock-model")
        }
    }

    fn call(id: &str, name: &str, args: Value) -> AssistantBlock {
        let Value::Object(args) = args else {
            panic!("arguments must be an object")
        };
        AssistantBlock::ToolCall(ToolCall::new(id, name, args))
    }

    fn result(id: &str, name: &str, text: &str, is_error: bool) -> ToolResultMessage {
        ToolResultMessage {
            tool_call_id: id.into(),
            tool_name: name.into(),
            content: vec![InputBlock::text(text)],
            is_error,
            ..ToolResultMessage::default()
        }
    }

    fn session() -> SessionManager {
        SessionManager::in_memory(Path::new("/nowhere"))
    }

    #[test]
    fn user_text_is_escaped() {
        let mut s = session();
        s.append_message(UserMessage::text("<script>alert('x')</script> & co").into())
            .unwrap();
        let html = render_session_html(&s);
        assert!(!html.contains("<script>alert"));
        assert!(html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; co"));
        // Only the page's own scripts are present.
        assert_eq!(html.matches("<script").count(), 2);
    }

    #[test]
    fn everything_user_provided_is_escaped() {
        let mut s = session();
        s.append_session_info("<b>name</b>").unwrap();
        s.append_message(
            assistant(vec![
                AssistantBlock::Text(TextContent::new("```<lang>\n</pre><script>\n```")),
                AssistantBlock::Thinking(ThinkingContent::new("<img src=x>")),
                call("c\"1", "<tool>", json!({"k": "<v>"})),
            ])
            .into(),
        )
        .unwrap();
        s.append_message(result("c\"1", "<tool>", "</pre><script>bad()</script>", true).into())
            .unwrap();
        let html = render_session_html(&s);
        assert!(!html.contains("<b>name"));
        assert!(!html.contains("<script>bad"));
        assert!(!html.contains("</pre><script>"));
        assert!(!html.contains("<img src=x"));
        assert!(!html.contains("<tool>"));
        assert!(html.contains("&lt;b&gt;name&lt;/b&gt;"));
        assert!(html.contains("id=\"tool-c&quot;1\""));
    }

    #[test]
    fn header_shows_id_cwd_time_name_and_model() {
        let mut s = session();
        s.append_model_change("anthropic", "claude-x").unwrap();
        s.append_session_info("My session").unwrap();
        s.append_message(UserMessage::text("hi").into()).unwrap();
        let html = render_session_html(&s);
        let header = s.header();
        assert!(html.contains(&header.id));
        assert!(html.contains("<code>/nowhere</code>"));
        assert!(html.contains(&format!("<time datetime=\"{}\">", header.timestamp)));
        assert!(html.contains("<h1>My session</h1>"));
        assert!(html.contains("anthropic/claude-x"));
        assert!(html.contains("<title>My session · pi session</title>"));
    }

    #[test]
    fn markdown_subset() {
        let html = markdown(
            "Hello `a<b>` world\nnext line\n\n```rust\nfn x() {}\n\nlet y = 1 < 2;\n```\nafter",
        );
        assert_eq!(
            html,
            "<p>Hello <code>a&lt;b&gt;</code> world<br>\nnext line</p>\n\
             <pre class=\"code\" data-lang=\"rust\"><code>fn x() {}\n\nlet y = 1 &lt; 2;</code></pre>\n\
             <p>after</p>\n"
        );
        assert_eq!(markdown("a `` x`y `` b"), "<p>a <code>x`y</code> b</p>\n");
        assert_eq!(markdown("un`closed"), "<p>un`closed</p>\n");
        // An unterminated fence runs to the end.
        assert_eq!(
            markdown("~~~~\ncode\n~~~"),
            "<pre class=\"code\"><code>code\n~~~</code></pre>\n"
        );
        assert_eq!(markdown("  \n\n"), "");
    }

    #[test]
    fn markdown_renders_gfm_elements() {
        let html = markdown(
            "# Title\n\n## Sub\n\n- **bold** and *em*\n- ~~gone~~ about ~5 min or ~10\n\n\
             1. one\n2. two\n\n- [x] done\n- [ ] todo\n\n> quoted\n\n\
             | a | b |\n|---|:-:|\n| 1 | `x` |\n\n---\n\n[site](https://example.com \"t\") \
             [rel](docs/a.md) [mail](mailto:a@b.c) <https://x.org>",
        );
        for part in [
            "<h1>Title</h1>",
            "<h2>Sub</h2>",
            "<ul>\n<li><strong>bold</strong> and <em>em</em></li>",
            "<li><del>gone</del> about ~5 min or ~10</li>",
            "<ol>\n<li>one</li>\n<li>two</li>\n</ol>",
            "<input disabled=\"\" type=\"checkbox\" checked=\"\"/>\ndone",
            "<blockquote>\n<p>quoted</p>\n</blockquote>",
            "<table><thead><tr><th>a</th><th style=\"text-align: center\">b</th></tr></thead>",
            "<td style=\"text-align: center\"><code>x</code></td>",
            "<hr />",
            "<a href=\"https://example.com\" title=\"t\">site</a>",
            "<a href=\"docs/a.md\">rel</a>",
            "<a href=\"mailto:a@b.c\">mail</a>",
            "<a href=\"https://x.org\">https://x.org</a>",
        ] {
            assert!(html.contains(part), "{part} not in {html}");
        }
        // Subscript syntax is text again: `~a~` is not struck through.
        assert_eq!(markdown("~a~ b"), "<p>~a~ b</p>\n");
    }

    #[test]
    fn markdown_escapes_raw_html_and_drops_unsafe_links() {
        let html = markdown(
            "<script>alert(1)</script>\n\ntext <b onclick=\"x()\">bold</b> <img src=x onerror=y>\n\n\
             <div>\n*block*\n</div>",
        );
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<b "), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(!html.contains("<div"), "{html}");
        assert!(
            html.contains("<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>"),
            "{html}"
        );
        assert!(
            html.contains("&lt;b onclick=\"x()\"&gt;bold&lt;/b&gt;"),
            "{html}"
        );
        assert!(
            html.contains("<p>&lt;div&gt;<br>\n*block*<br>\n&lt;/div&gt;</p>"),
            "{html}"
        );

        for link in [
            "[x](javascript:alert(1))",
            "[x](JavaScript:alert(1))",
            "[x](java\tscript:alert(1))",
            "[x](<java script:alert(1)>)",
            "[x](javascript&#58;alert(1))",
            "[x](vbscript:msgbox)",
            "[x](data:text/html,hi)",
            "<javascript:alert(1)>",
            "[x][r]\n\n[r]: javascript:alert(1)",
            "![x](javascript:alert(1))",
        ] {
            let html = markdown(link);
            assert!(!html.contains("<a"), "{link}: {html}");
            assert!(!html.to_lowercase().contains("href"), "{link}: {html}");
        }
        assert_eq!(
            markdown("[click **me**](javascript:alert(1))"),
            "<p>click <strong>me</strong></p>\n"
        );
        // Images load nothing: their alt text links to them.
        assert_eq!(
            markdown("![a cat](https://example.com/cat.png)"),
            "<p><a href=\"https://example.com/cat.png\"><span class=\"md-image\">a cat</span></a></p>\n"
        );
        assert_eq!(
            markdown("[![badge](b.svg)](https://ci.example)"),
            "<p><a href=\"https://ci.example\"><span class=\"md-image\">badge</span></a></p>\n"
        );
        assert!(safe_url("https://a") && safe_url("HTTP://a") && safe_url("mailto:a@b"));
        assert!(safe_url("a/b:c") && safe_url("#frag") && safe_url("?q=a:b") && safe_url(""));
        assert!(!safe_url("file:///etc/passwd") && !safe_url(" javascript:x") && !safe_url(":x"));
    }

    #[test]
    fn tool_calls_render_with_their_results() {
        let mut s = session();
        s.append_message(UserMessage::text("do things").into())
            .unwrap();
        s.append_message(
            assistant(vec![
                call("c1", "bash", json!({"command": "ls -la", "timeout": 5})),
                call(
                    "c2",
                    "edit",
                    json!({"path": "src/a.rs", "edits": [{"oldText": "let a = 1;\nkeep\n", "newText": "let a = 2;\nkeep\n"}]}),
                ),
                call("c3", "write", json!({"path": "notes.md", "content": "# Notes"})),
                call("c4", "grep", json!({"pattern": "foo", "path": "."})),
            ])
            .into(),
        )
        .unwrap();
        s.append_message(result("c1", "bash", "total 0", false).into())
            .unwrap();
        s.append_message(result("c2", "edit", "No match", true).into())
            .unwrap();
        s.append_message(result("c3", "write", "Wrote notes.md", false).into())
            .unwrap();
        let html = render_session_html(&s);
        assert!(html.contains("<pre class=\"command\">$ ls -la</pre>"));
        assert!(html.contains("&quot;timeout&quot;: 5"));
        assert!(html.contains("<div class=\"del\">-let a = 1;</div>"));
        assert!(html.contains("<div class=\"ins\">+let a = 2;</div>"));
        assert!(html.contains("<div class=\"eq\"> keep</div>"));
        assert!(html.contains("<span class=\"tool-path\">src/a.rs</span>"));
        assert!(html.contains("<pre class=\"code\"># Notes</pre>"));
        assert!(html.contains("&quot;pattern&quot;: &quot;foo&quot;"));
        assert!(html.contains("<div class=\"tool error\" id=\"tool-c2\">"));
        assert!(html.contains("<div class=\"result-label\">Error</div>"));
        assert!(html.contains("(no result recorded)"));
        // Results render once, inside their call.
        assert_eq!(html.matches("total 0").count(), 1);
        assert!(!html.contains("Tool result ·"));
        let call_at = html.find("id=\"tool-c1\"").unwrap();
        let result_at = html.find("total 0").unwrap();
        let next_call = html.find("id=\"tool-c2\"").unwrap();
        assert!(call_at < result_at && result_at < next_call);
    }

    #[test]
    fn legacy_edit_arguments_become_a_diff() {
        let args = json!({"path": "a", "oldText": "x", "newText": "y", "edits": "[{\"oldText\":\"p\",\"newText\":\"q\"}]"});
        let Value::Object(args) = args else {
            unreachable!()
        };
        assert_eq!(
            edit_pairs(&args),
            vec![("p".into(), "q".into()), ("x".into(), "y".into())]
        );
    }

    #[test]
    fn long_output_is_folded_and_orphan_results_stand_alone() {
        let long: String = (1..=100).map(|i| format!("line {i}\n")).collect();
        let mut s = session();
        s.append_message(result("gone", "read", &long, false).into())
            .unwrap();
        let html = render_session_html(&s);
        assert!(html.contains("Tool result · read"));
        assert!(html.contains("<summary>Show all 100 lines</summary>"));
        assert!(html.contains("line 100"));
        assert!(html.contains("<pre class=\"output preview\">line 1\n"));
        let short = fold("a\nb", "output");
        assert_eq!(short, "<pre class=\"output\">a\nb</pre>\n");
    }

    #[test]
    fn thinking_images_usage_and_errors() {
        let mut s = session();
        s.append_message(
            UserMessage::blocks(vec![
                InputBlock::text("look"),
                InputBlock::Image(ImageContent::new("iVBORw0KGgo=", "image/png")),
                InputBlock::Image(ImageContent::new("AAAA\"onerror=", "text/html\"")),
            ])
            .into(),
        )
        .unwrap();
        let mut reply = assistant(vec![
            AssistantBlock::Thinking(ThinkingContent::new("pondering")),
            AssistantBlock::Text(TextContent::new("answer")),
        ]);
        reply.stop_reason = StopReason::Error;
        reply.error_message = Some("rate <limited>".into());
        s.append_message(reply.into()).unwrap();
        let html = render_session_html(&s);
        assert!(html.contains("src=\"data:image/png;base64,iVBORw0KGgo=\""));
        assert!(html.contains("src=\"data:image/png;base64,AAAAonerror=\""));
        assert!(html.contains(
            "<details class=\"thinking\"><summary>Thinking</summary>\n<div class=\"thinking-body\">pondering</div>"
        ));
        assert!(html.contains("Error: rate &lt;limited&gt;"));
        assert!(html.contains("in 1.2k · out 34 · $0.0125"));
        assert!(html.contains("mock/mock-model"));
    }

    #[test]
    fn bash_executions_summaries_and_custom_messages() {
        let mut s = session();
        let bash: AgentMessage = serde_json::from_value(json!({
            "role": "bashExecution", "command": "make <all>", "output": "boom",
            "exitCode": 2, "cancelled": false, "truncated": true,
            "fullOutputPath": "/tmp/out.log", "timestamp": 1
        }))
        .unwrap();
        s.append_message(bash).unwrap();
        let first = s.leaf_id().unwrap().to_owned();
        s.append_compaction("Summary of <old> work", &first, 123_456, None, None)
            .unwrap();
        s.append_custom_message("note", json!("shown *text*"), true, None)
            .unwrap();
        s.append_custom_message("hidden", json!("secret stuff"), false, None)
            .unwrap();
        s.branch_with_summary(Some(&first), "We tried `x`", None, None)
            .unwrap();
        let html = render_session_html(&s);
        assert!(html.contains("<pre class=\"command\">$ make &lt;all&gt;</pre>"));
        assert!(html.contains("class=\"msg bash error\""));
        assert!(html.contains("(exit 2)"));
        assert!(html.contains("full output in /tmp/out.log"));
        // The compaction and custom messages are off the current branch now.
        assert!(!html.contains("Summary of"));
        assert!(html.contains("Branch summary"));
        assert!(html.contains("We tried <code>x</code>"));
        assert!(html.contains("Totals cover every branch"));

        let mut linear = session();
        linear
            .append_compaction("Summary of <old> work", "none", 123_456, None, None)
            .unwrap();
        linear
            .append_custom_message("note", json!("shown text"), true, None)
            .unwrap();
        linear
            .append_custom_message("hidden", json!("secret stuff"), false, None)
            .unwrap();
        let html = render_session_html(&linear);
        assert!(html.contains("Compacted from 123,456 tokens"));
        assert!(html.contains("Summary of &lt;old&gt; work"));
        assert!(html.contains("[note]"));
        assert!(html.contains("shown text"));
        assert!(!html.contains("secret stuff"));
    }

    #[test]
    fn footer_totals_and_no_remote_resources() {
        let mut s = session();
        s.append_message(UserMessage::text("see https://example.com").into())
            .unwrap();
        s.append_message(assistant(vec![AssistantBlock::Text(TextContent::new("a"))]).into())
            .unwrap();
        s.append_message(assistant(vec![AssistantBlock::Text(TextContent::new("b"))]).into())
            .unwrap();
        let html = render_session_html(&s);
        assert!(html.contains("<dt>Messages</dt><dd>1 user · 2 assistant · 0 tool results</dd>"));
        assert!(
            html.contains("input 2,400 · output 68 · cache read 0 · cache write 0 · total 2,468")
        );
        assert!(html.contains("<dt>Cost</dt><dd>$0.0250</dd>"));
        for attr in [
            "src=\"http",
            "href=\"http",
            "src='http",
            "href='http",
            "url(http",
        ] {
            assert!(!html.contains(attr), "{attr}");
        }
        // The session is embedded for download and decodes back to its JSONL.
        let start = html.find("id=\"pi-session-data\">").unwrap() + "id=\"pi-session-data\">".len();
        let end = start + html[start..].find("</script>").unwrap();
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(&html[start..end])
            .unwrap();
        let jsonl = String::from_utf8(decoded).unwrap();
        assert_eq!(jsonl.lines().count(), 4);
        assert!(jsonl.contains("see https://example.com"));
    }

    #[test]
    fn small_helpers() {
        assert_eq!(group_digits(0), "0");
        assert_eq!(group_digits(999), "999");
        assert_eq!(group_digits(1000), "1,000");
        assert_eq!(group_digits(1234567), "1,234,567");
        assert_eq!(format_tokens(950), "950");
        assert_eq!(format_tokens(1395), "1.4k");
        assert_eq!(format_tokens(14_600), "15k");
        assert_eq!(format_tokens(2_500_000), "2.5M");
        assert_eq!(
            time("2026-11-21T23:22:23.092Z"),
            "<time datetime=\"2026-11-21T23:22:23.092Z\">2026-11-21 23:22:23 UTC</time>"
        );
        assert_eq!(time("bad"), "<time datetime=\"bad\">bad</time>");
        assert_eq!(count(0, "line", "lines"), "0 lines");
        assert_eq!(count(1, "line", "lines"), "1 line");
        assert_eq!(count(1200, "line", "lines"), "1,200 lines");
    }
}
