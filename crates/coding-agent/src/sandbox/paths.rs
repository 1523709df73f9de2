//! Where a file tool may read and write under the sandbox: every path is resolved to what
//! it really names (symlinks and `..` followed, for a file that does not exist yet through
//! its nearest existing folder) and checked against the allowed roots before the disk is
//! touched. A write to a file with other hard links is refused: it could be another name
//! of a file outside.

use std::path::{Component, Path, PathBuf};

use super::SandboxConfig;

/// The allowed roots of one session, resolved.
#[derive(Debug, Clone)]
pub struct PathGuard {
    cwd: PathBuf,
    write: Vec<PathBuf>,
    /// Empty: everything may be read (as bash under the sandbox).
    read: Vec<PathBuf>,
}

/// What a path is wanted for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

/// The real path of a root; a root that does not exist keeps its lexical form.
fn real_root(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| lexical(path))
}

/// `..` and `.` removed without touching the disk.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

impl PathGuard {
    pub fn new(config: &SandboxConfig, cwd: &Path) -> Self {
        Self {
            cwd: cwd.to_path_buf(),
            write: config
                .allowed_write_paths
                .iter()
                .map(|p| real_root(&cwd.join(p)))
                .collect(),
            read: config
                .allowed_read_paths
                .iter()
                .map(|p| real_root(&cwd.join(p)))
                .collect(),
        }
    }

    /// The real path `input` (relative to the cwd) names, or why it cannot be resolved.
    /// For a path that does not exist, its nearest existing folder is resolved and the
    /// rest appended; the rest may not contain `..`.
    pub fn resolve(&self, input: &Path) -> Result<PathBuf, String> {
        let absolute = if input.is_absolute() {
            input.to_path_buf()
        } else {
            self.cwd.join(input)
        };
        if let Ok(real) = std::fs::canonicalize(&absolute) {
            return Ok(real);
        }
        let unresolvable = || {
            format!(
                "Sandbox: {} climbs out of a folder that does not exist",
                input.display()
            )
        };
        let mut rest = Vec::new();
        let mut current = absolute.as_path();
        loop {
            let name = current.file_name().ok_or_else(unresolvable)?;
            rest.push(name.to_owned());
            let parent = current.parent().ok_or_else(unresolvable)?;
            if let Ok(real) = std::fs::canonicalize(parent) {
                let mut resolved = real;
                for name in rest.iter().rev() {
                    resolved.push(name);
                }
                return Ok(resolved);
            }
            current = parent;
        }
    }

    /// The real path, when `access` to it is allowed; else a refusal that says why.
    pub fn check(&self, input: &Path, access: Access) -> Result<PathBuf, String> {
        let real = self.resolve(input)?;
        let roots = match access {
            Access::Write => &self.write,
            Access::Read if self.read.is_empty() => return Ok(real),
            Access::Read => &self.read,
        };
        let inside = roots.iter().any(|root| real.starts_with(root))
            || (access == Access::Read && self.write.iter().any(|root| real.starts_with(root)));
        if !inside {
            let verb = if access == Access::Write {
                "write"
            } else {
                "read"
            };
            return Err(format!(
                "Sandbox: {verb} access to {} is outside the allowed paths ({})",
                real.display(),
                roots
                    .iter()
                    .map(|r| r.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if access == Access::Write {
            use std::os::unix::fs::MetadataExt;
            if let Ok(meta) = std::fs::symlink_metadata(&real)
                && meta.is_file()
                && meta.nlink() > 1
            {
                return Err(format!(
                    "Sandbox: {} has other hard links; writing it could change a file outside the allowed paths",
                    real.display()
                ));
            }
        }
        Ok(real)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(dir: &Path) -> PathGuard {
        let mut config = SandboxConfig::new("/nonexistent");
        config.allowed_write_paths = vec![dir.join("work")];
        PathGuard::new(&config, &dir.join("work"))
    }

    #[test]
    fn writes_stay_inside_through_dots_symlinks_and_hard_links() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("work/sub")).unwrap();
        std::fs::create_dir_all(root.join("outside")).unwrap();
        std::fs::write(root.join("outside/secret.txt"), "s").unwrap();
        let g = guard(&root);
        assert!(g.check(Path::new("a.txt"), Access::Write).is_ok());
        assert!(
            g.check(Path::new("sub/new/deeper.txt"), Access::Write)
                .is_ok()
        );
        assert!(
            g.check(Path::new("../outside/x.txt"), Access::Write)
                .is_err()
        );
        assert!(
            g.check(Path::new("sub/../../outside/x.txt"), Access::Write)
                .is_err()
        );
        assert!(
            g.check(Path::new("nothere/../../outside/x.txt"), Access::Write)
                .is_err()
        );
        assert!(g.check(&root.join("outside/x.txt"), Access::Write).is_err());
        std::os::unix::fs::symlink(root.join("outside"), root.join("work/link")).unwrap();
        assert!(g.check(Path::new("link/x.txt"), Access::Write).is_err());
        assert!(
            g.check(Path::new("link/secret.txt"), Access::Write)
                .is_err()
        );
        std::fs::hard_link(root.join("outside/secret.txt"), root.join("work/hard.txt")).unwrap();
        let refused = g.check(Path::new("hard.txt"), Access::Write).unwrap_err();
        assert!(refused.contains("hard links"), "{refused}");
        // Reads are open when no read paths are configured.
        assert!(
            g.check(&root.join("outside/secret.txt"), Access::Read)
                .is_ok()
        );
    }

    #[test]
    fn reads_stay_inside_the_read_paths_when_given() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("work")).unwrap();
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::fs::write(root.join("secret"), "s").unwrap();
        let mut config = SandboxConfig::new("/nonexistent");
        config.allowed_write_paths = vec![root.join("work")];
        config.allowed_read_paths = vec![root.join("docs")];
        let g = PathGuard::new(&config, &root.join("work"));
        assert!(g.check(&root.join("docs"), Access::Read).is_ok());
        assert!(g.check(Path::new("."), Access::Read).is_ok());
        assert!(g.check(&root.join("secret"), Access::Read).is_err());
        std::os::unix::fs::symlink(root.join("secret"), root.join("docs/alias")).unwrap();
        assert!(g.check(&root.join("docs/alias"), Access::Read).is_err());
    }
}
