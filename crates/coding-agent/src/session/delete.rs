//! Deleting a saved session, as pi 1.6's resume picker does: through the `trash` command
//! when there is one, else for good. The picker and ACP's `session/delete` share it.

use std::path::Path;

/// Deletes the session file at `path`; says which way ("Session moved to trash" or
/// "Session deleted").
pub fn delete_session_file(path: &Path) -> Result<&'static str, String> {
    let trashed = std::process::Command::new("trash")
        .arg("--")
        .arg(path)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if trashed || !path.exists() {
        return Ok("Session moved to trash");
    }
    std::fs::remove_file(path)
        .map(|()| "Session deleted")
        .map_err(|e| format!("Failed to delete: {e}"))
}
