//! Session statistics and context usage, as `get_session_stats` reports them.

use serde::Serialize;

use pi_agent_core::AgentMessage;
use pi_ai::StopReason;

use super::{AgentSession, lock};
use crate::compaction::{calculate_context_tokens, estimate_context_tokens};
use crate::session::EntryKind;

/// Token totals over the assistant messages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenTotals {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub total: u64,
}

/// How full the context window is; `tokens`/`percent` are `null` right after a compaction,
/// until the next reply reports usage.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextUsage {
    pub tokens: Option<u64>,
    pub context_window: u64,
    pub percent: Option<f64>,
}

/// Counts, tokens and cost of the messages in context.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStats {
    pub session_file: Option<String>,
    pub session_id: String,
    pub user_messages: usize,
    pub assistant_messages: usize,
    pub tool_calls: usize,
    pub tool_results: usize,
    pub total_messages: usize,
    pub tokens: TokenTotals,
    #[serde(serialize_with = "pi_ai::js_number::serialize")]
    pub cost: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_usage: Option<ContextUsage>,
}

/// Token and cost sums over the usages a session's entries record.
#[derive(Default)]
struct Totals {
    tokens: TokenTotals,
    cost: f64,
}

impl Totals {
    fn add(&mut self, usage: &pi_ai::Usage) {
        self.tokens.input += usage.input;
        self.tokens.output += usage.output;
        self.tokens.cache_read += usage.cache_read;
        self.tokens.cache_write += usage.cache_write;
        self.cost += usage.cost.total;
    }

    /// A usage kept as JSON in an entry (`usage`, compaction and branch-summary entries).
    fn add_json(&mut self, usage: &serde_json::Value) {
        let count = |key: &str| usage.get(key).and_then(serde_json::Value::as_u64);
        self.tokens.input += count("input").unwrap_or(0);
        self.tokens.output += count("output").unwrap_or(0);
        self.tokens.cache_read += count("cacheRead").unwrap_or(0);
        self.tokens.cache_write += count("cacheWrite").unwrap_or(0);
        self.cost += usage["cost"]["total"].as_f64().unwrap_or(0.0);
    }
}

impl AgentSession {
    /// Statistics over every entry of the session file, as pi 1.6 counts them: all
    /// branches and what compactions replaced, plus the usage of summaries and cache warming.
    pub fn session_stats(&self) -> SessionStats {
        let mut counts = (0, 0, 0, 0);
        let mut total = 0;
        let mut totals = Totals::default();
        self.with_session(|session| {
            for entry in session.entries() {
                match &entry.kind {
                    EntryKind::Usage { usage, .. } => totals.add_json(usage),
                    EntryKind::Compaction {
                        usage: Some(usage), ..
                    }
                    | EntryKind::BranchSummary {
                        usage: Some(usage), ..
                    } => totals.add_json(usage),
                    EntryKind::Message { message } => {
                        total += 1;
                        match message {
                            AgentMessage::Llm(pi_ai::Message::User(_)) => counts.0 += 1,
                            AgentMessage::Llm(pi_ai::Message::Assistant(a)) => {
                                counts.1 += 1;
                                counts.2 += a.tool_calls().count();
                                totals.add(&a.usage);
                            }
                            AgentMessage::Llm(pi_ai::Message::ToolResult(_)) => counts.3 += 1,
                            AgentMessage::Custom(_) => {}
                        }
                    }
                    _ => {}
                }
            }
        });
        let Totals { mut tokens, cost } = totals;
        tokens.total = tokens.input + tokens.output + tokens.cache_read + tokens.cache_write;
        let (user, assistant, tool_calls, tool_results) = counts;
        SessionStats {
            session_file: self
                .session_file()
                .map(|p| p.to_string_lossy().into_owned()),
            session_id: self.session_id(),
            user_messages: user,
            assistant_messages: assistant,
            tool_calls,
            tool_results,
            total_messages: total,
            tokens,
            cost,
            context_usage: self.context_usage(),
        }
    }

    /// How full the context is: unknown after a compaction until a reply reports usage.
    pub fn context_usage(&self) -> Option<ContextUsage> {
        let context_window = self.limits_model().context_window;
        if context_window == 0 {
            return None;
        }
        // Walked back from the leaf: the newest complete reply usually settles it at once.
        let trusted = {
            let session = lock(&self.inner.session);
            // Unknown only after a compaction when the newest complete reply since it
            // reports no usage.
            let mut newest_reply_seen = false;
            let mut compacted = false;
            for entry in session.ancestors(session.leaf_id()) {
                if matches!(entry.kind, EntryKind::Compaction { .. }) {
                    compacted = true;
                    break;
                }
                if !newest_reply_seen
                    && let Some(reply) = entry.message().and_then(AgentMessage::as_assistant)
                    && !matches!(reply.stop_reason, StopReason::Aborted | StopReason::Error)
                {
                    if calculate_context_tokens(&reply.usage) > 0 {
                        break;
                    }
                    newest_reply_seen = true;
                }
            }
            !compacted
        };
        if !trusted {
            return Some(ContextUsage {
                tokens: None,
                context_window,
                percent: None,
            });
        }
        let tokens = self
            .inner
            .agent
            .with_messages(|m| estimate_context_tokens(m).tokens);
        Some(ContextUsage {
            tokens: Some(tokens),
            context_window,
            percent: Some(tokens as f64 / context_window as f64 * 100.0),
        })
    }

    /// The text of the last assistant reply (skipping an empty aborted one), trimmed.
    pub fn last_assistant_text(&self) -> Option<String> {
        self.inner.agent.with_messages(|messages| {
            let last = messages.iter().rev().find_map(|m| {
                m.as_assistant()
                    .filter(|a| !(a.stop_reason == StopReason::Aborted && a.content.is_empty()))
            })?;
            let text = last.text();
            let trimmed = text.trim();
            (!trimmed.is_empty()).then(|| trimmed.to_owned())
        })
    }
}
