//! Chunked compaction (seed 004 §3): history too large for one summarization call is split
//! by token share, each part is summarized (with retries), and the partial summaries are
//! merged. Oversized messages are left out when summarizing fails, and as a last resort a
//! one-line placeholder stands in for the summary.

use std::time::Duration;

use pi_agent_core::AgentMessage;
use pi_ai::{Message, UserMessage};
use pi_coding_agent::compaction::{CompactionError, Summarizer, estimate_tokens, generate_summary};

/// Default chunk size as a share of the context window.
pub const BASE_CHUNK_RATIO: f64 = 0.4;
/// Smallest chunk share the adaptive ratio goes down to.
pub const MIN_CHUNK_RATIO: f64 = 0.15;
/// Headroom for the chars/4 token estimate being low.
pub const SAFETY_MARGIN: f64 = 1.2;
/// Tokens a summarization call needs besides the transcript (prompts and the reply).
pub const SUMMARIZATION_OVERHEAD_TOKENS: u64 = 4096;
/// Parts the history is split into when it does not fit one chunk.
pub const DEFAULT_PARTS: usize = 2;
/// Tries per summarization call.
pub const SUMMARY_ATTEMPTS: u32 = 3;
/// A message above this share of the window is oversized for summarization.
pub const OVERSIZED_MESSAGE_SHARE: f64 = 0.5;
/// Average message share of the window above which chunks get smaller.
pub const ADAPTIVE_THRESHOLD: f64 = 0.1;

/// Extra instructions of the call that merges partial summaries into one.
pub const MERGE_SUMMARIES_INSTRUCTIONS: &str = "Each user message in the transcript is a partial summary of one consecutive \
stretch of a longer session, oldest first. Merge the partial summaries into a single summary of the whole session: \
keep every goal, decision, finished and open item, file path and error they record, let later parts override earlier \
ones where they disagree, and drop repetitions. Do not mention that the summary was assembled from parts.";

/// Why chunked summarization produced nothing; every other failure ends in a fallback text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChunkedSummaryError {
    #[error("Compaction cancelled")]
    Aborted,
}

/// How a chunked summary is made.
#[derive(Debug, Clone)]
pub struct ChunkedSummaryParams<'a> {
    /// Model, credentials, reasoning and cancellation of the summary calls.
    pub summarizer: Summarizer<'a>,
    /// The model's context window in tokens.
    pub context_window: u64,
    /// Tokens reserved for the reply; a summary may use 80% of them.
    pub reserve_tokens: u64,
    /// Parts to split into when the history does not fit one chunk.
    pub parts: usize,
    pub custom_instructions: Option<&'a str>,
    /// The summary of an earlier compaction, to be carried forward.
    pub previous_summary: Option<&'a str>,
    /// Pause before the second try of a call; doubled for the third.
    pub retry_delay: Duration,
}

/// Copies of the messages without tool-result (and custom-message) details: they are
/// untrusted, verbose and never meant for a model.
pub fn strip_tool_result_details(messages: &[AgentMessage]) -> Vec<AgentMessage> {
    messages
        .iter()
        .cloned()
        .map(|mut message| {
            match &mut message {
                AgentMessage::Llm(Message::ToolResult(result)) if result.details.is_some() => {
                    std::sync::Arc::make_mut(result).details = None
                }
                AgentMessage::Custom(custom) => {
                    custom.data.remove("details");
                }
                AgentMessage::Llm(_) => {}
            }
            message
        })
        .collect()
}

/// Estimated tokens of the messages (chars/4, as pi estimates).
pub fn estimate_messages_tokens(messages: &[AgentMessage]) -> u64 {
    messages.iter().map(estimate_tokens).sum()
}

/// The chunk ratio for these messages: [`BASE_CHUNK_RATIO`], reduced when the average
/// message (with the safety margin) fills more than 10% of the window, by
/// `min(2 × average share, BASE − MIN)`.
pub fn compute_adaptive_chunk_ratio(messages: &[AgentMessage], context_window: u64) -> f64 {
    if messages.is_empty() || context_window == 0 {
        return BASE_CHUNK_RATIO;
    }
    let average = estimate_messages_tokens(messages) as f64 / messages.len() as f64;
    let share = average * SAFETY_MARGIN / context_window as f64;
    if share <= ADAPTIVE_THRESHOLD {
        return BASE_CHUNK_RATIO;
    }
    let reduction = (share * 2.0).min(BASE_CHUNK_RATIO - MIN_CHUNK_RATIO);
    (BASE_CHUNK_RATIO - reduction).max(MIN_CHUNK_RATIO)
}

/// Largest estimated chunk for one summarization call: `window × ratio`, and room for the
/// overhead, both after the safety margin; at least 1.
pub fn max_chunk_tokens(context_window: u64, chunk_ratio: f64) -> u64 {
    let by_ratio = context_window as f64 * chunk_ratio / SAFETY_MARGIN;
    let by_room =
        context_window.saturating_sub(SUMMARIZATION_OVERHEAD_TOKENS) as f64 / SAFETY_MARGIN;
    (by_ratio.min(by_room) as u64).max(1)
}

/// Whether one message alone is too big to summarize (over half the window, with margin).
pub fn is_oversized_for_summary(message: &AgentMessage, context_window: u64) -> bool {
    estimate_tokens(message) as f64 * SAFETY_MARGIN
        > context_window as f64 * OVERSIZED_MESSAGE_SHARE
}

fn is_tool_result(message: &AgentMessage) -> bool {
    matches!(message, AgentMessage::Llm(Message::ToolResult(_)))
}

/// Splits messages into at most `parts` consecutive parts of about equal token share.
/// A tool result stays in the part of the call before it.
pub fn split_messages_by_token_share(
    messages: &[AgentMessage],
    parts: usize,
) -> Vec<Vec<AgentMessage>> {
    if messages.is_empty() {
        return Vec::new();
    }
    let parts = parts.clamp(1, messages.len());
    let target = estimate_messages_tokens(messages) as f64 / parts as f64;
    let mut chunks: Vec<Vec<AgentMessage>> = Vec::new();
    let mut current: Vec<AgentMessage> = Vec::new();
    let mut current_tokens = 0u64;
    for message in messages {
        let tokens = estimate_tokens(message);
        let full = (current_tokens + tokens) as f64 > target;
        if full && !current.is_empty() && chunks.len() + 1 < parts && !is_tool_result(message) {
            chunks.push(std::mem::take(&mut current));
            current_tokens = 0;
        }
        current.push(message.clone());
        current_tokens += tokens;
    }
    if !current.is_empty() {
        chunks.push(current);
    }
    chunks
}

/// Splits messages into consecutive chunks of at most `max_tokens` estimated tokens (a
/// single bigger message gets a chunk of its own). A tool result stays with its call.
pub fn chunk_messages_by_max_tokens(
    messages: &[AgentMessage],
    max_tokens: u64,
) -> Vec<Vec<AgentMessage>> {
    let mut chunks: Vec<Vec<AgentMessage>> = Vec::new();
    let mut current: Vec<AgentMessage> = Vec::new();
    let mut current_tokens = 0u64;
    for message in messages {
        let tokens = estimate_tokens(message);
        if !current.is_empty() && current_tokens + tokens > max_tokens && !is_tool_result(message) {
            chunks.push(std::mem::take(&mut current));
            current_tokens = 0;
        }
        current.push(message.clone());
        current_tokens += tokens;
    }
    if !current.is_empty() {
        chunks.push(current);
    }
    chunks
}

/// The placeholder when no summary could be made.
pub fn unavailable_summary(message_count: usize, oversized: usize) -> String {
    let mut text = format!("Context contained {message_count} messages, summary unavailable.");
    if oversized > 0 {
        text.push_str(&format!(
            " {oversized} of them were too large to summarize."
        ));
    }
    text
}

fn oversized_note(message: &AgentMessage) -> String {
    let tokens = estimate_tokens(message);
    format!(
        "[A {} message of about {}K tokens was too large to summarize and is left out.]",
        message.role(),
        tokens.div_ceil(1000)
    )
}

/// One summarization call, tried up to [`SUMMARY_ATTEMPTS`] times; a cancellation ends it
/// at once. `Ok(None)` when every try failed.
async fn summarize_with_retry(
    messages: &[AgentMessage],
    params: &ChunkedSummaryParams<'_>,
    custom_instructions: Option<&str>,
    previous_summary: Option<&str>,
) -> Result<Option<String>, ChunkedSummaryError> {
    let mut delay = params.retry_delay;
    for attempt in 1..=SUMMARY_ATTEMPTS {
        if params.summarizer.cancel.is_cancelled() {
            return Err(ChunkedSummaryError::Aborted);
        }
        match generate_summary(
            messages,
            &params.summarizer,
            params.reserve_tokens,
            custom_instructions,
            previous_summary,
        )
        .await
        {
            Ok(summary) => return Ok(Some(summary)),
            Err(CompactionError::Aborted) => return Err(ChunkedSummaryError::Aborted),
            Err(_) if attempt < SUMMARY_ATTEMPTS => {
                if !delay.is_zero() {
                    tokio::select! {
                        _ = tokio::time::sleep(delay) => {}
                        _ = params.summarizer.cancel.cancelled() => {
                            return Err(ChunkedSummaryError::Aborted);
                        }
                    }
                }
                delay = delay.saturating_mul(2);
            }
            Err(_) => {}
        }
    }
    Ok(None)
}

/// Summarizes chunk after chunk, each call carrying the summary so far forward.
async fn summarize_chunks(
    messages: &[AgentMessage],
    params: &ChunkedSummaryParams<'_>,
    max_tokens: u64,
    previous_summary: Option<&str>,
) -> Result<Option<String>, ChunkedSummaryError> {
    let mut running = previous_summary.map(str::to_owned);
    for chunk in chunk_messages_by_max_tokens(messages, max_tokens) {
        let Some(summary) = summarize_with_retry(
            &chunk,
            params,
            params.custom_instructions,
            running.as_deref(),
        )
        .await?
        else {
            return Ok(None);
        };
        running = Some(summary);
    }
    Ok(running)
}

/// Summarizes `messages`; if that fails, again without the oversized ones (noting each);
/// if that fails too, returns the placeholder of [`unavailable_summary`].
pub async fn summarize_with_fallback(
    messages: &[AgentMessage],
    params: &ChunkedSummaryParams<'_>,
    max_tokens: u64,
    previous_summary: Option<&str>,
) -> Result<String, ChunkedSummaryError> {
    if let Some(summary) = summarize_chunks(messages, params, max_tokens, previous_summary).await? {
        return Ok(summary);
    }
    let (oversized, rest): (Vec<&AgentMessage>, Vec<&AgentMessage>) = messages
        .iter()
        .partition(|m| is_oversized_for_summary(m, params.context_window));
    if !oversized.is_empty() && !rest.is_empty() {
        let rest: Vec<AgentMessage> = rest.into_iter().cloned().collect();
        if let Some(summary) = summarize_chunks(&rest, params, max_tokens, previous_summary).await?
        {
            let notes: Vec<String> = oversized.iter().map(|m| oversized_note(m)).collect();
            return Ok(format!("{summary}\n\n{}", notes.join("\n")));
        }
    }
    Ok(unavailable_summary(messages.len(), oversized.len()))
}

/// Summarizes a history of any size (seed 004 §3): details stripped; one pass when it fits a
/// chunk, else split by token share, each part summarized and the parts merged.
pub async fn summarize_in_stages(
    messages: &[AgentMessage],
    params: &ChunkedSummaryParams<'_>,
) -> Result<String, ChunkedSummaryError> {
    let messages = strip_tool_result_details(messages);
    if messages.is_empty() {
        return Ok(params
            .previous_summary
            .map_or_else(|| "No prior history.".to_owned(), str::to_owned));
    }
    let ratio = compute_adaptive_chunk_ratio(&messages, params.context_window);
    let max_tokens = max_chunk_tokens(params.context_window, ratio);
    let total = estimate_messages_tokens(&messages);
    if params.parts <= 1 || messages.len() < 2 || total <= max_tokens {
        return summarize_with_fallback(&messages, params, max_tokens, params.previous_summary)
            .await;
    }
    let mut partials = Vec::new();
    for part in split_messages_by_token_share(&messages, params.parts) {
        partials.push(summarize_with_fallback(&part, params, max_tokens, None).await?);
    }
    if partials.len() == 1 && params.previous_summary.is_none() {
        return Ok(partials.remove(0));
    }
    let count = partials.len();
    let as_messages: Vec<AgentMessage> = partials
        .iter()
        .enumerate()
        .map(|(i, summary)| {
            AgentMessage::from(UserMessage::text(format!(
                "Partial summary {} of {count}:\n\n{summary}",
                i + 1
            )))
        })
        .collect();
    let instructions = match params.custom_instructions {
        Some(custom) if !custom.is_empty() => format!("{MERGE_SUMMARIES_INSTRUCTIONS}\n\n{custom}"),
        _ => MERGE_SUMMARIES_INSTRUCTIONS.to_owned(),
    };
    let merged = summarize_with_retry(
        &as_messages,
        params,
        Some(&instructions),
        params.previous_summary,
    )
    .await?;
    Ok(merged.unwrap_or_else(|| partials.join("\n\n---\n\n")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_ai::{InputBlock, ToolResultMessage};

    fn user(chars: usize) -> AgentMessage {
        AgentMessage::from(UserMessage::text("u".repeat(chars)))
    }

    fn tool_result(chars: usize) -> AgentMessage {
        AgentMessage::from(ToolResultMessage {
            tool_call_id: "c".into(),
            tool_name: "read".into(),
            content: vec![InputBlock::text("r".repeat(chars))].into(),
            details: Some(serde_json::json!({"secret": "payload"})),
            ..Default::default()
        })
    }

    fn sizes(chunks: &[Vec<AgentMessage>]) -> Vec<u64> {
        chunks.iter().map(|c| estimate_messages_tokens(c)).collect()
    }

    #[test]
    fn ratio_stays_at_base_for_small_messages_and_shrinks_for_big_ones() {
        let small: Vec<_> = (0..10).map(|_| user(4_000)).collect();
        assert_eq!(
            compute_adaptive_chunk_ratio(&small, 100_000),
            BASE_CHUNK_RATIO
        );
        // Average 10k tokens → share 0.12 → reduction 0.24 → 0.16.
        let big: Vec<_> = (0..4).map(|_| user(40_000)).collect();
        let ratio = compute_adaptive_chunk_ratio(&big, 100_000);
        assert!((ratio - 0.16).abs() < 1e-9, "{ratio}");
        // A huge average is capped at the minimum.
        let huge = vec![user(400_000)];
        let ratio = compute_adaptive_chunk_ratio(&huge, 100_000);
        assert!((ratio - MIN_CHUNK_RATIO).abs() < 1e-9, "{ratio}");
        assert_eq!(compute_adaptive_chunk_ratio(&[], 100_000), BASE_CHUNK_RATIO);
    }

    #[test]
    fn chunk_budget_respects_ratio_overhead_and_margin() {
        assert_eq!(max_chunk_tokens(120_000, 0.4), 40_000);
        // Small windows are bounded by the room the overhead leaves.
        assert_eq!(max_chunk_tokens(6_000, 0.4), 1_586);
        assert_eq!(max_chunk_tokens(1_000, 0.4), 1);
    }

    #[test]
    fn split_by_share_balances_and_keeps_tool_results_with_their_call() {
        let messages: Vec<_> = (0..8).map(|_| user(4_000)).collect();
        let parts = split_messages_by_token_share(&messages, 2);
        assert_eq!(sizes(&parts), [4_000, 4_000]);
        let three = split_messages_by_token_share(&messages, 3);
        assert_eq!(three.len(), 3);
        assert_eq!(three.iter().map(Vec::len).sum::<usize>(), 8);
        let with_result = vec![user(4_000), user(4_000), tool_result(8_000), user(4_000)];
        let parts = split_messages_by_token_share(&with_result, 2);
        assert_eq!(parts.iter().map(Vec::len).collect::<Vec<_>>(), [3, 1]);
        // More parts than messages: one per message, except the result joins its call.
        assert_eq!(split_messages_by_token_share(&with_result, 10).len(), 3);
        assert!(split_messages_by_token_share(&[], 2).is_empty());
    }

    #[test]
    fn max_token_chunks_isolate_big_messages() {
        let messages = vec![user(400), user(400), user(40_000), user(400)];
        let chunks = chunk_messages_by_max_tokens(&messages, 500);
        assert_eq!(sizes(&chunks), [200, 10_000, 100]);
    }

    #[test]
    fn details_are_stripped_and_oversize_is_half_the_window() {
        let stripped = strip_tool_result_details(&[tool_result(10)]);
        match &stripped[0] {
            AgentMessage::Llm(Message::ToolResult(r)) => assert_eq!(r.details, None),
            other => panic!("{other:?}"),
        }
        // 50k chars = 12.5k tokens × 1.2 = 15k > 10k (half of 20k).
        assert!(is_oversized_for_summary(&user(50_000), 20_000));
        assert!(!is_oversized_for_summary(&user(20_000), 20_000));
        assert_eq!(
            unavailable_summary(7, 0),
            "Context contained 7 messages, summary unavailable."
        );
    }
}
