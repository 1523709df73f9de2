//! Project trust in the editor: pi's own trust question (its title and answers, as the
//! terminal UI asks it) as a `session/request_permission`, for a folder whose protected
//! resources (`.pi` settings, extensions, skills, MCP servers…) await the user's decision.
//! pi's RPC mode, and so pi-acp, cannot ask and skips them.

use std::path::Path;

use agent_client_protocol::v1::schema::PermissionOptionKind;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::link::Link;
use crate::trust::{self, TrustOption};

/// Asks whether to trust `cwd`; the answer chosen, `None` when dismissed.
pub async fn ask(link: &Link, cwd: &Path) -> Option<TrustOption> {
    let options = trust::prompt_options(cwd);
    let choices = options
        .iter()
        .enumerate()
        .map(|(i, option)| {
            let kind = match (option.trusted, option.updates.is_empty()) {
                (true, true) => PermissionOptionKind::AllowOnce,
                (true, false) => PermissionOptionKind::AllowAlways,
                (false, true) => PermissionOptionKind::RejectOnce,
                (false, false) => PermissionOptionKind::RejectAlways,
            };
            (format!("trust-{i}"), option.label.clone(), kind)
        })
        .collect();
    let raw = json!({"method": "projectTrust", "cwd": cwd});
    let chosen = link
        .ask(
            "pi-project-trust",
            &trust::prompt_title(cwd),
            raw,
            choices,
            CancellationToken::new(),
        )
        .await?;
    let index: usize = chosen.strip_prefix("trust-")?.parse().ok()?;
    options.into_iter().nth(index)
}
