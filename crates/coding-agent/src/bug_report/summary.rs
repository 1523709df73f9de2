//! The summary `/bug` can attach instead of the transcript (pi 1.6's
//! `generateBugReportSummary`): the newest messages that fit in 60 % of the context
//! window, the user's description, and instructions, sent to the session's model.

use pi_agent_core::AgentMessage;
use pi_ai::{Model, ThinkingLevel};
use tokio_util::sync::CancellationToken;

use crate::compaction::summarize::{CallError, SummaryRequest, summary_call_with};
use crate::compaction::summary_retry::SummaryRetry;
use crate::model_registry::RequestAuth;

const BUG_SUMMARY_SYSTEM_PROMPT: &str = "You are helping a user file a bug report about pi, the coding agent they are talking to. You will be shown the conversation transcript. Write a report for the pi developers describing what the user was doing and what went wrong.

Do NOT continue the conversation. Do NOT respond to any questions in the conversation. ONLY output the report.";

const BUG_SUMMARY_INSTRUCTIONS: &str = "Write the bug report in Markdown with these sections:

## What the user was doing
One short paragraph.

## What went wrong
Concrete description of the failure: wrong output, errors, hangs, tool failures, unexpected behavior. Quote error messages and tool output verbatim where they exist.

## Steps to reproduce
Numbered list, as specific as the transcript allows.

## Relevant details
Tool calls involved, files touched, model behavior, anything else that helps a developer reproduce or locate the problem.

Do not include file contents, secrets, or credentials from the transcript; refer to files by path only. Keep the report factual and concise.";

/// The newest messages within `budget` tokens (at least one), oldest first.
fn select_messages(messages: &[AgentMessage], budget: u64) -> &[AgentMessage] {
    let mut tokens = 0;
    let mut start = messages.len();
    for (index, message) in messages.iter().enumerate().rev() {
        let next = crate::compaction::tokens::estimate_tokens(message);
        if start < messages.len() && tokens + next > budget {
            break;
        }
        start = index;
        tokens += next;
    }
    &messages[start..]
}

/// The request's one user message.
pub fn summary_prompt(
    messages: &[AgentMessage],
    hint: Option<&str>,
    context_window: u64,
) -> String {
    let window = if context_window > 0 {
        context_window
    } else {
        128_000
    };
    let selected = select_messages(messages, window * 6 / 10);
    let mut parts = Vec::new();
    if selected.len() < messages.len() {
        parts.push(format!(
            "Note: only the last {} of {} messages are shown.",
            selected.len(),
            messages.len()
        ));
    }
    let transcript = crate::compaction::serialize::serialize_conversation(
        &crate::messages::convert_to_llm(selected),
    );
    parts.push(format!("<conversation>\n{transcript}\n</conversation>"));
    if let Some(hint) = hint.map(str::trim).filter(|h| !h.is_empty()) {
        parts.push(format!("<user-report>\n{hint}\n</user-report>"));
    }
    parts.push(BUG_SUMMARY_INSTRUCTIONS.to_owned());
    parts.join("\n\n")
}

/// What the summary call needs.
pub struct SummaryInput<'a> {
    pub messages: &'a [AgentMessage],
    pub hint: Option<&'a str>,
    pub model: &'a Model,
    pub auth: &'a RequestAuth,
    pub thinking_level: ThinkingLevel,
    pub retry: Option<SummaryRetry>,
    pub session_id: String,
    pub cancel: CancellationToken,
}

/// Asks the model for the report; its trimmed text, or pi 1.6's error texts.
pub async fn generate_summary(input: SummaryInput<'_>) -> Result<String, String> {
    let prompt = summary_prompt(input.messages, input.hint, input.model.context_window);
    let max_tokens = if input.model.max_tokens > 0 {
        input.model.max_tokens.min(4096)
    } else {
        4096
    };
    let reasoning = (input.model.reasoning && input.thinking_level != ThinkingLevel::Off)
        .then_some(input.thinking_level);
    let request = SummaryRequest {
        system_prompt: BUG_SUMMARY_SYSTEM_PROMPT,
        max_tokens: Some(max_tokens),
        session_id: Some(input.session_id),
    };
    let result = summary_call_with(
        input.model,
        input.auth,
        &input.cancel,
        prompt,
        reasoning,
        input.retry.as_ref(),
        request,
    )
    .await;
    match result {
        Err(CallError::Aborted) => Err("Bug report summary was cancelled".to_owned()),
        Err(CallError::Failed(message)) => Err(format!(
            "Bug report summary failed: {}",
            message.unwrap_or_else(|| "Unknown error".to_owned())
        )),
        Err(CallError::ToolCall) => Err("Bug report summary attempted to call a tool".to_owned()),
        Ok(summary) => {
            let text = summary.text.trim();
            if text.is_empty() {
                Err("Bug report summary was empty".to_owned())
            } else {
                Ok(text.to_owned())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_ai::{Message, UserMessage};

    fn user(text: &str) -> AgentMessage {
        AgentMessage::Llm(Message::User(UserMessage::text(text)))
    }

    #[test]
    fn prompts_hold_the_conversation_the_report_and_the_instructions() {
        let messages = [user("hello"), user("it broke")];
        let prompt = summary_prompt(&messages, Some("  the link  "), 1000);
        assert!(prompt.starts_with("<conversation>\n[User]: hello"));
        assert!(prompt.contains("</conversation>\n\n<user-report>\nthe link\n</user-report>\n\n"));
        assert!(prompt.ends_with(BUG_SUMMARY_INSTRUCTIONS));
        // Only the newest messages that fit in 60 % of the window (at least one).
        let long = "x".repeat(4000);
        let messages = [user(&long), user("last")];
        let prompt = summary_prompt(&messages, None, 1000);
        assert!(prompt.starts_with("Note: only the last 1 of 2 messages are shown.\n\n"));
        assert!(!prompt.contains("<user-report>"));
        let one = [user(&long)];
        assert!(summary_prompt(&one, None, 10).contains(&long));
    }
}
