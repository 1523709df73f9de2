//! What `/share` and `/bug` read from the session: the branch with its `pi.share` entry,
//! the report's metadata, and the summary written by the session's model.

use std::path::Path;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::AgentSession;
use crate::bug_report::bundle::{MetadataInput, ProviderFacts};
use crate::compaction::summary_retry::SummaryRetry;
use crate::export::jsonl::{ShareExtras, serialize_branch_with};

/// Which parts a report has.
#[derive(Debug, Clone, Default)]
pub struct BugReportChoices {
    pub hint: Option<String>,
    pub include_session: bool,
}

impl AgentSession {
    /// The system prompt and active tools, for the `pi.share` entry.
    pub fn share_extras(&self) -> ShareExtras {
        ShareExtras {
            system_prompt: self.inner.agent.system_prompt(),
            tools: self
                .inner
                .agent
                .tools()
                .iter()
                .map(|tool| {
                    serde_json::json!({
                        "name": tool.name(),
                        "description": tool.description(),
                        "parameters": tool.parameters(),
                    })
                })
                .collect(),
        }
    }

    /// The branch as JSONL with the `pi.share` entry (`/share`'s and `/bug`'s
    /// `session.jsonl`).
    pub fn share_jsonl(&self) -> Result<String, serde_json::Error> {
        let extras = self.share_extras();
        self.with_session(|s| serialize_branch_with(s, Some(&extras)))
    }

    /// The report's files, without a summary yet.
    pub fn bug_report_bundle(
        &self,
        choices: &BugReportChoices,
        summary: Option<String>,
        agent_dir: &Path,
    ) -> Result<crate::bug_report::BugReportBundle, crate::bug_report::BugReportError> {
        let model = self.model();
        let registry = self.registry();
        let provider = ProviderFacts {
            id: model.provider.clone(),
            name: model.provider.clone(),
            base_url: Some(model.base_url.clone()).filter(|u| !u.is_empty()),
            header_names: {
                let mut names: Vec<String> = model
                    .headers
                    .iter()
                    .flat_map(|h| h.keys().cloned())
                    .collect();
                names.sort();
                names
            },
            auth_types: if pi_ai::oauth::OAuthProvider::from_id(&model.provider).is_some() {
                vec!["api_key", "oauth"]
            } else {
                vec!["api_key"]
            },
            auth_status: registry.auth_status(&model.provider),
            using_oauth: registry.uses_oauth(&model.provider),
            registered_by_extension: self
                .extension_runtime()
                .providers()
                .iter()
                .any(|p| p.name == model.provider),
        };
        let extensions = self.extension_runtime().extensions();
        let errors: Vec<(String, String)> = self
            .extension_runtime()
            .load_errors()
            .into_iter()
            .map(|e| (e.path, e.error))
            .collect();
        let session_id = self.session_id();
        let cwd = self.cwd().display().to_string();
        let thinking = self.thinking_level();
        let metadata = crate::bug_report::bundle::collect_metadata(&MetadataInput {
            id: None,
            hint: choices.hint.as_deref(),
            session_id: &session_id,
            cwd: &cwd,
            include_session: choices.include_session,
            include_summary: summary.is_some(),
            message_count: self.messages().len(),
            model: Some(&model),
            provider: Some(provider),
            thinking_level: thinking.as_str(),
            extensions: &extensions,
            extension_errors: &errors,
            global_settings: &self.settings().global_object(),
            project_settings: &self.settings().project_object(),
        });
        let crashes = crate::bug_report::crash_log::read_crash_log(agent_dir);
        let diagnostics =
            self.with_session(|s| crate::bug_report::bundle::collect_diagnostics(s, &crashes));
        let session_jsonl = if choices.include_session {
            Some(self.share_jsonl()?)
        } else {
            None
        };
        Ok(crate::bug_report::BugReportBundle {
            metadata,
            diagnostics,
            session_jsonl,
            summary,
        })
    }

    /// Records that a report left (`pi.bug-report`).
    pub fn record_bug_report(&self, data: Value) -> Result<String, String> {
        self.append_custom_entry(crate::bug_report::BUG_REPORT_CUSTOM_ENTRY_TYPE, Some(data))
            .map_err(|e| e.to_string())
    }

    /// The summary of this conversation the session's model writes for a report.
    pub async fn summarize_for_bug_report(
        &self,
        hint: Option<&str>,
        cancel: CancellationToken,
    ) -> Result<String, String> {
        let model = self.model();
        let auth = self.inner.request_auth(&model).map_err(|e| e.0)?;
        let retry = SummaryRetry {
            settings: self.inner.settings.get().retry.unwrap_or_default(),
            emit: std::sync::Arc::new(|_| {}),
        };
        let messages = self.messages();
        crate::bug_report::summary::generate_summary(crate::bug_report::summary::SummaryInput {
            messages: &messages,
            hint,
            model: &model,
            auth: &auth,
            thinking_level: self.thinking_level(),
            retry: Some(retry),
            session_id: self.session_id(),
            cancel,
        })
        .await
    }
}
