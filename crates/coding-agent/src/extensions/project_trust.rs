//! `project_trust` (pi 1.6.0): user and `-e` extensions decide a project's trust before its
//! protected resources load.

use tokio_util::sync::CancellationToken;

use super::{ExtensionEvent, ExtensionRuntime};

impl ExtensionRuntime {
    /// `project_trust`: the first extension's yes/no decides; errors come back as pi 1.6.0's
    /// startup warnings (`Extension "<path>" project_trust error: …`).
    pub async fn emit_project_trust(&self, cwd: &str, mode: &str, has_ui: bool) -> TrustAnswer {
        let event = ExtensionEvent::ProjectTrust {
            cwd: cwd.to_owned(),
            mode: mode.to_owned(),
            has_ui,
        };
        let mut answer = TrustAnswer::default();
        for backend in self.handling(event.kind()) {
            match backend.dispatch(&event, CancellationToken::new()).await {
                Ok(Some(reply)) => {
                    let reply: TrustReply = serde_json::from_value(reply).unwrap_or_default();
                    answer.warnings.extend(reply.errors.into_iter().map(|e| {
                        format!(
                            "Extension \"{}\" project_trust error: {}",
                            e.extension_path, e.error
                        )
                    }));
                    if let Some(result) = reply.result {
                        answer.trusted = Some(result.trusted.as_deref() == Some("yes"));
                        answer.remember = result.remember;
                        return answer;
                    }
                }
                Ok(None) => {}
                Err(error) => answer
                    .warnings
                    .push(format!("Extension project_trust error: {error}")),
            }
        }
        answer
    }
}

/// What `project_trust` handlers decided.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct TrustAnswer {
    /// `Some` when an extension answered yes (`true`) or no.
    pub trusted: Option<bool>,
    /// The extension asked for its decision to be saved.
    pub remember: bool,
    /// Handler errors, as startup warnings.
    pub warnings: Vec<String>,
}

/// The host's `project_trust` reply: `{result?: {trusted, remember?}, errors}`.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct TrustReply {
    result: Option<TrustResult>,
    errors: Vec<TrustHandlerError>,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct TrustResult {
    trusted: Option<String>,
    remember: bool,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct TrustHandlerError {
    extension_path: String,
    error: String,
}
