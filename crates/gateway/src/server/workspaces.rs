//! Where each principal may open sessions: the folders `principals.<name>.workspaces` of
//! gateway.json lists, or by default its own folder `<agent dir>/gateway/workspaces/<name>`.
//! A session's cwd must be one of them or inside one (its real path: symlinks and `..`
//! cannot lead out).

use std::path::{Path, PathBuf};

use super::protocol::{ApiError, codes};
use crate::config_file::GatewayFile;

/// The default workspace of `principal` (made on first use).
pub fn default_workspace(agent_dir: &Path, principal: &str) -> PathBuf {
    let name: String = principal
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.@".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let name = if name.is_empty() || name.chars().all(|c| c == '.') {
        format!("_{name}")
    } else {
        name
    };
    agent_dir.join("gateway").join("workspaces").join(name)
}

/// The workspaces of `principal`, as configured (relative ones against the agent dir).
pub fn workspaces(file: &GatewayFile, agent_dir: &Path, principal: &str) -> Vec<PathBuf> {
    let configured = file.principal(principal).workspaces;
    if configured.is_empty() {
        return vec![default_workspace(agent_dir, principal)];
    }
    configured.iter().map(|p| agent_dir.join(p)).collect()
}

/// Checks that `cwd` lies in a workspace of `principal`; its real path when it does.
pub fn check_cwd(
    file: &GatewayFile,
    agent_dir: &Path,
    principal: &str,
    cwd: &Path,
) -> Result<PathBuf, ApiError> {
    let roots = workspaces(file, agent_dir, principal);
    if let Some(default) = roots.first()
        && file.principal(principal).workspaces.is_empty()
    {
        let _ = std::fs::create_dir_all(default);
    }
    let real = std::fs::canonicalize(cwd)
        .map_err(|e| ApiError::invalid(format!("cwd {}: {e}", cwd.display())))?;
    let inside = roots
        .iter()
        .any(|root| std::fs::canonicalize(root).is_ok_and(|root| real.starts_with(root)));
    if inside {
        return Ok(real);
    }
    Err(ApiError::new(
        codes::FORBIDDEN,
        format!(
            "cwd {} is outside the workspaces of principal {principal} ({}); add it to principals.{principal}.workspaces in gateway.json",
            cwd.display(),
            roots
                .iter()
                .map(|r| r.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cwd_must_lie_in_a_workspace_of_its_principal() {
        let dir = tempfile::tempdir().unwrap();
        let agent = dir.path().join("agent");
        let project = dir.path().join("project");
        std::fs::create_dir_all(project.join("sub")).unwrap();
        let mut file = GatewayFile::default();
        // By default: only the principal's own folder.
        let own = default_workspace(&agent, "alice");
        assert!(check_cwd(&file, &agent, "alice", &project).is_err());
        std::fs::create_dir_all(&own).unwrap();
        assert!(check_cwd(&file, &agent, "alice", &own).is_ok());
        assert!(check_cwd(&file, &agent, "bob", &own).is_err());
        // Configured workspaces, with `..` and symlinks resolved.
        file.principals.insert(
            "alice".into(),
            serde_json::from_value(serde_json::json!({"workspaces": [project]})).unwrap(),
        );
        assert!(check_cwd(&file, &agent, "alice", &project.join("sub")).is_ok());
        assert!(check_cwd(&file, &agent, "alice", &project.join("sub/../..")).is_err());
        std::os::unix::fs::symlink(dir.path(), project.join("up")).unwrap();
        let refused = check_cwd(&file, &agent, "alice", &project.join("up")).unwrap_err();
        assert_eq!(refused.code, "forbidden");
        assert_eq!(
            default_workspace(&agent, "../x").file_name().unwrap(),
            ".._x"
        );
    }
}
