//! Overflow- and threshold-triggered compaction of a session by the runner: pi's cut point,
//! the chunked summarizer of [`crate::compaction_chunks`] with the run's own key, and the
//! result recorded in the session.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use pi_coding_agent::agent_session::AgentSession;
use pi_coding_agent::compaction::{
    CompactionResult, Summarizer, compute_file_lists, format_file_operations, prepare_compaction,
};
use pi_coding_agent::session::{EntryKind, SessionEntry};

use crate::compaction_chunks::{ChunkedSummaryError, ChunkedSummaryParams, summarize_in_stages};

/// Why the runner could not compact.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionCompactionError {
    #[error("Nothing to compact")]
    NothingToCompact,
    #[error("Compaction cancelled")]
    Aborted,
    #[error("Compaction failed: {0}")]
    Failed(String),
}

/// Settings of one runner compaction.
#[derive(Debug, Clone)]
pub struct CompactOptions {
    /// The key of the run's auth profile (else the session's own key).
    pub api_key: Option<String>,
    /// Parts the history is split into when it does not fit one chunk.
    pub parts: usize,
    /// Pause before retrying a failed summary call.
    pub retry_delay: Duration,
    pub custom_instructions: Option<String>,
}

/// Compaction entries on the session's current branch (grows when anyone compacts).
pub fn compaction_count(session: &AgentSession) -> usize {
    session.with_session(|s| {
        s.branch_entries()
            .iter()
            .filter(|e| matches!(e.kind, EntryKind::Compaction { .. }))
            .count()
    })
}

/// Compacts the session: pi decides what is kept, the older part (failed replies left out)
/// is summarized in stages, and the session records the compaction and reloads its context.
pub async fn compact_session(
    session: &AgentSession,
    options: &CompactOptions,
    cancel: CancellationToken,
) -> Result<CompactionResult, SessionCompactionError> {
    let model = session.model();
    let settings = session.settings().get().compaction_settings();
    let path: Vec<SessionEntry> =
        session.with_session(|s| s.branch_entries().into_iter().cloned().collect());
    let preparation =
        prepare_compaction(&path, &settings).ok_or(SessionCompactionError::NothingToCompact)?;
    let messages: Vec<_> = preparation
        .messages_to_summarize
        .iter()
        .chain(&preparation.turn_prefix_messages)
        .filter(|m| m.as_assistant().is_none_or(|a| !a.stop_reason.is_failure()))
        .cloned()
        .collect();
    if messages.is_empty() {
        return Err(SessionCompactionError::NothingToCompact);
    }
    let auth = session
        .registry()
        .request_auth(&model, options.api_key.as_deref())
        .map_err(SessionCompactionError::Failed)?;
    let params = ChunkedSummaryParams {
        summarizer: Summarizer {
            model: &model,
            auth: &auth,
            thinking_level: Some(session.thinking_level()),
            cancel,
            // The runner retries whole runs itself (rotation, failover).
            retry: None,
        },
        context_window: model.context_window,
        reserve_tokens: settings.reserve_tokens,
        parts: options.parts,
        custom_instructions: options.custom_instructions.as_deref(),
        previous_summary: preparation.previous_summary.as_deref(),
        retry_delay: options.retry_delay,
    };
    let mut summary = summarize_in_stages(&messages, &params)
        .await
        .map_err(|ChunkedSummaryError::Aborted| SessionCompactionError::Aborted)?;
    let details = compute_file_lists(&preparation.file_ops);
    summary.push_str(&format_file_operations(
        &details.read_files,
        &details.modified_files,
    ));
    let result = CompactionResult {
        summary,
        first_kept_entry_id: preparation.first_kept_entry_id,
        tokens_before: preparation.tokens_before,
        estimated_tokens_after: None,
        // The chunked summaries' costs are not summed here (yet): the entry has no usage.
        usage: None,
        details,
    };
    session
        .apply_external_compaction(&result)
        .map_err(|e| SessionCompactionError::Failed(e.0))?;
    Ok(result)
}
