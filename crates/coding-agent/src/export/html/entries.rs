//! One block per branch entry: user and assistant messages, bash executions,
//! compactions, branch summaries and custom messages.

use serde_json::Value;

use pi_agent_core::{AgentMessage, CustomMessage};
use pi_ai::{AssistantBlock, AssistantMessage, Message, StopReason, UserContent, UserMessage};

use super::content::{custom_content, fold, fold_terminal, input_blocks};
use super::format::{count, esc, time};
use super::markdown::markdown_div;
use super::page::Page;
use super::stats::usage_line;
use super::tools::{tool_call, tool_result};
use crate::session::{EntryKind, SessionEntry};

impl Page<'_> {
    pub(super) fn entry(&mut self, entry: &SessionEntry) {
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
            } => self.custom_message(entry, custom_type, content, *display),
            EntryKind::Custom { .. }
            | EntryKind::Label { .. }
            | EntryKind::SessionInfo { .. }
            | EntryKind::Usage { .. }
            | EntryKind::ContextEdit { .. }
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
            "system" => self.system(entry, custom),
            "custom" => {
                let display = custom.get("display").and_then(Value::as_bool) != Some(false);
                let content = custom.get("content").cloned().unwrap_or(Value::Null);
                self.custom_message(entry, text("customType"), &content, display);
            }
            role => {
                self.open(entry, "custom", role);
                let json = serde_json::to_string_pretty(&custom.data).unwrap_or_default();
                self.out.push_str(&fold(&json, "json"));
                self.close();
            }
        }
    }

    /// An extension's custom message. One the terminal does not show (`display: false`)
    /// is in the page too, hidden until the viewer reveals hidden messages (`H`).
    fn custom_message(
        &mut self,
        entry: &SessionEntry,
        custom_type: &str,
        content: &Value,
        display: bool,
    ) {
        if display {
            self.open(entry, "custom", &format!("[{custom_type}]"));
        } else {
            self.open(
                entry,
                "custom hidden-message",
                &format!("[{custom_type}] · Hidden in terminal"),
            );
        }
        self.out.push_str(&custom_content(content));
        self.close();
    }

    /// pi 1.5's system record: the sections it sets (joined as the prompt is) and the
    /// tools it adds or removes, folded.
    fn system(&mut self, entry: &SessionEntry, custom: &CustomMessage) {
        let mut text = custom
            .get("sections")
            .and_then(Value::as_object)
            .map(|sections| {
                sections
                    .iter()
                    .map(|(name, value)| match value.as_str() {
                        Some(section) => section.to_owned(),
                        None => format!("({name} removed)"),
                    })
                    .collect::<Vec<_>>()
                    .join("\n\n")
            })
            .unwrap_or_default();
        let names = |key: &str| -> Vec<String> {
            custom
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|t| t.get("name").or(Some(t)).and_then(Value::as_str))
                .map(str::to_owned)
                .collect()
        };
        for (key, label) in [
            ("toolsAdded", "Tools added"),
            ("toolsRemoved", "Tools removed"),
        ] {
            let list = names(key);
            if !list.is_empty() {
                text.push_str(&format!("\n\n{label}: {}", list.join(", ")));
            }
        }
        self.open(entry, "system", "System prompt");
        self.out.push_str(&fold(text.trim_start(), "output"));
        self.close();
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
            self.out.push_str(&fold_terminal(output, "output"));
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
}
