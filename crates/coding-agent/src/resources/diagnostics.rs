//! Diagnostics of resource loading: warnings, errors and name collisions, in the shape the
//! TypeScript pi reports them.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The kind of a diagnostic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DiagnosticKind {
    /// Loaded anyway, or skipped with a reason.
    Warning,
    /// Something asked for could not be loaded.
    Error,
    /// Two resources share a name; the first one found wins.
    Collision,
}

/// The two sides of a name collision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceCollision {
    /// `skill` or `prompt`.
    pub resource_type: String,
    /// The shared name.
    pub name: String,
    /// The resource that is used.
    pub winner_path: PathBuf,
    /// The resource that is dropped.
    pub loser_path: PathBuf,
}

/// A problem found while loading resources.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceDiagnostic {
    /// Warning, error or collision.
    #[serde(rename = "type")]
    pub kind: DiagnosticKind,
    /// What happened.
    pub message: String,
    /// The file or directory concerned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// For collisions: which file won and which lost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collision: Option<ResourceCollision>,
}

/// One line: `path: message`, or for a collision which file is used and which is skipped.
impl std::fmt::Display for ResourceDiagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.collision, &self.path) {
            (Some(c), _) => write!(
                f,
                "{}: {} is skipped, {} is used",
                self.message,
                c.loser_path.display(),
                c.winner_path.display()
            ),
            (None, Some(path)) => write!(f, "{}: {}", path.display(), self.message),
            (None, None) => f.write_str(&self.message),
        }
    }
}

impl ResourceDiagnostic {
    pub(crate) fn warning(message: impl Into<String>, path: &Path) -> Self {
        Self {
            kind: DiagnosticKind::Warning,
            message: message.into(),
            path: Some(path.to_path_buf()),
            collision: None,
        }
    }

    pub(crate) fn error(message: impl Into<String>, path: &Path) -> Self {
        Self {
            kind: DiagnosticKind::Error,
            ..Self::warning(message, path)
        }
    }

    pub(crate) fn collision(
        resource_type: &str,
        label: &str,
        name: &str,
        winner: &Path,
        loser: &Path,
    ) -> Self {
        Self {
            kind: DiagnosticKind::Collision,
            message: format!("name \"{label}\" collision"),
            path: Some(loser.to_path_buf()),
            collision: Some(ResourceCollision {
                resource_type: resource_type.to_owned(),
                name: name.to_owned(),
                winner_path: winner.to_path_buf(),
                loser_path: loser.to_path_buf(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::{SourceInfo, SourceScope};

    #[test]
    fn diagnostics_display_on_one_line() {
        let w = ResourceDiagnostic::warning("description is required", Path::new("/s/SKILL.md"));
        assert_eq!(w.to_string(), "/s/SKILL.md: description is required");
        let c = ResourceDiagnostic::collision(
            "prompt",
            "/x",
            "x",
            Path::new("/a/x.md"),
            Path::new("/b/x.md"),
        );
        assert_eq!(
            c.to_string(),
            "name \"/x\" collision: /b/x.md is skipped, /a/x.md is used"
        );
        let json = serde_json::to_value(&c).unwrap();
        assert_eq!(json["type"], "collision");
        assert_eq!(json["collision"]["resourceType"], "prompt");
        assert_eq!(json["collision"]["winnerPath"], "/a/x.md");
        let info = SourceInfo::local(Path::new("/f"), "auto", SourceScope::User, None);
        assert_eq!(
            serde_json::to_value(&info).unwrap(),
            serde_json::json!({"path": "/f", "source": "auto", "scope": "user", "origin": "top-level"})
        );
    }
}
