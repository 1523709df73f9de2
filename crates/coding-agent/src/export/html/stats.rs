//! Totals over the session, the models it used and the usage line under each reply.

use pi_agent_core::AgentMessage;
use pi_ai::{AssistantMessage, Message, Usage};

use super::format::{esc, format_tokens};
use crate::session::{EntryKind, SessionEntry, SessionManager};

/// Counts, tokens and cost over a list of entries.
#[derive(Default)]
pub(super) struct Totals {
    pub(super) user: usize,
    pub(super) assistant: usize,
    pub(super) tool_results: usize,
    pub(super) tool_calls: usize,
    pub(super) bash: usize,
    pub(super) compactions: usize,
    pub(super) branch_summaries: usize,
    pub(super) usage: Usage,
    pub(super) cost: f64,
}

impl Totals {
    pub(super) fn of(entries: &[SessionEntry]) -> Self {
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
pub(super) fn models(session: &SessionManager) -> Vec<String> {
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

/// `in … · out … · cache … · $…  provider/model` under an assistant message.
pub(super) fn usage_line(message: &AssistantMessage) -> String {
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
