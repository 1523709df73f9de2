//! `/export <file>.jsonl`: the current branch as a session file of its own (pi 1.6's
//! `exportSessionToJsonl`): a new header with the session's id and cwd, then the branch's
//! entries from the root, each one's parent the entry before it.

use std::path::{Path, PathBuf};

use crate::session::SessionManager;
use crate::session::entry::CURRENT_SESSION_VERSION;

/// The branch as JSONL text (every line ends with a newline).
pub fn serialize_branch(session: &SessionManager) -> Result<String, serde_json::Error> {
    serialize_branch_with(session, None)
}

/// What the session viewer is given besides the branch (pi 1.6's
/// `createShareTrailingEntries`): the system prompt and the tools' schemas.
#[derive(Debug, Clone, Default)]
pub struct ShareExtras {
    pub system_prompt: String,
    /// `{name, description, parameters}` of each active tool.
    pub tools: Vec<serde_json::Value>,
}

/// [`serialize_branch`], followed by a `pi.share` custom entry when `share` is given (the
/// files `/share` and `/bug` send), its parent the branch's last entry and its time the
/// header's.
pub fn serialize_branch_with(
    session: &SessionManager,
    share: Option<&ShareExtras>,
) -> Result<String, serde_json::Error> {
    let timestamp = crate::session::time::iso_now();
    let header = serde_json::json!({
        "type": "session",
        "version": CURRENT_SESSION_VERSION,
        "id": session.session_id(),
        "timestamp": timestamp,
        "cwd": session.header().cwd,
    });
    let mut out = serde_json::to_string(&header)?;
    out.push('\n');
    let mut parent: Option<String> = None;
    for entry in session.branch_entries() {
        let mut entry = entry.clone();
        entry.parent_id = parent.take();
        out.push_str(&entry.to_line()?);
        out.push('\n');
        parent = Some(entry.id);
    }
    if let Some(share) = share {
        let id = uuid::Uuid::new_v4().simple().to_string();
        let trailing = serde_json::json!({
            "type": "custom",
            "customType": "pi.share",
            "id": id.get(..8).unwrap_or(&id),
            "parentId": parent,
            "timestamp": timestamp,
            "data": {
                "systemPrompt": share.system_prompt,
                "tools": share.tools,
            },
        });
        out.push_str(&serde_json::to_string(&trailing)?);
        out.push('\n');
    }
    Ok(out)
}

/// Writes the branch to `path` (relative to `base`; a dated name when none), creating its
/// folder, and returns the file written.
pub fn export_session_jsonl(
    session: &SessionManager,
    path: Option<&Path>,
    base: &Path,
) -> Result<PathBuf, String> {
    let name = path.map_or_else(
        || {
            let stamp = crate::session::time::iso_now().replace([':', '.'], "-");
            PathBuf::from(format!("session-{stamp}.jsonl"))
        },
        Path::to_path_buf,
    );
    let file = base.join(crate::config::paths::expand_tilde(&name.to_string_lossy()));
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    }
    let text = serialize_branch(session).map_err(|e| e.to_string())?;
    std::fs::write(&file, text).map_err(|e| e.to_string())?;
    Ok(file)
}
