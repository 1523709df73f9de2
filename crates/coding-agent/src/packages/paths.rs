//! Where packages are installed, in the TypeScript pi's layout so either pi finds the
//! other's installs: npm packages under `<agentDir>/npm` (1.5; 0.73's global npm root is
//! still read), `.pi/npm` for a project; git checkouts under `<agentDir>/git/<host>/<path>`
//! or `.pi/git/...`; one-run (`-e`) installs under `<agentDir>/tmp/extensions`.

use std::path::{Path, PathBuf};

use super::source::PackageSource;
use crate::resources::{SourceScope, normalize};

/// The folders of one pi installation (agent dir) and one project (cwd).
#[derive(Debug, Clone)]
pub struct InstallRoots {
    pub cwd: PathBuf,
    pub agent_dir: PathBuf,
}

/// The home directory `~` in a source expands to.
pub(crate) fn home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// The first 8 hex digits of the SHA-256 of `text` (the TS temporary folder names).
fn short_hash(text: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    digest.as_ref()[..4]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl InstallRoots {
    /// `<cwd>/.pi`.
    pub fn project_dir(&self) -> PathBuf {
        self.cwd.join(".pi")
    }

    /// The folder relative local sources of a scope resolve against: `.pi` for the project,
    /// the agent dir for the user, the cwd for the command line.
    pub fn base_dir(&self, scope: SourceScope) -> PathBuf {
        match scope {
            SourceScope::Project => self.project_dir(),
            SourceScope::User => self.agent_dir.clone(),
            SourceScope::Temporary => self.cwd.clone(),
        }
    }

    /// Makes `<agentDir>/tmp/extensions`, where one-run (`-e`) packages go, private to the
    /// user (mode 0700, also when it exists with another mode), as pi 0.78.1 does.
    pub fn ensure_private_temp_root(&self) -> std::io::Result<()> {
        let root = self.agent_dir.join("tmp").join("extensions");
        std::fs::create_dir_all(&root)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o700))?;
        }
        Ok(())
    }

    /// `<agentDir>/tmp/extensions/<prefix>/<hash>/<suffix>` (the TS `getTemporaryDir`).
    fn temporary_dir(&self, prefix: &str, suffix: &str, git_ref: Option<&str>) -> PathBuf {
        let key = match git_ref {
            Some(git_ref) => format!("{prefix}-{suffix}@{git_ref}"),
            None => format!("{prefix}-{suffix}"),
        };
        normalize(
            &self
                .agent_dir
                .join("tmp")
                .join("extensions")
                .join(prefix)
                .join(short_hash(&key))
                .join(suffix),
        )
    }

    /// The npm project (`--prefix`) packages of a scope are installed into.
    pub fn npm_root(&self, scope: SourceScope) -> PathBuf {
        match scope {
            SourceScope::Temporary => self.temporary_dir("npm", "", None),
            SourceScope::Project => self.project_dir().join("npm"),
            SourceScope::User => self.agent_dir.join("npm"),
        }
    }

    /// Where an npm package of a scope lives in pi's own npm folders.
    pub fn managed_npm_path(&self, name: &str, scope: SourceScope) -> PathBuf {
        self.npm_root(scope).join("node_modules").join(name)
    }

    /// The folder git checkouts of a scope go under (none for one-run checkouts).
    pub fn git_root(&self, scope: SourceScope) -> Option<PathBuf> {
        match scope {
            SourceScope::Temporary => None,
            SourceScope::Project => Some(self.project_dir().join("git")),
            SourceScope::User => Some(self.agent_dir.join("git")),
        }
    }

    /// Where a git package of a scope is checked out; `None` when its path would leave
    /// the install root (`..` in the repository path).
    pub fn git_path(&self, source: &PackageSource, scope: SourceScope) -> Option<PathBuf> {
        let PackageSource::Git {
            host,
            path,
            git_ref,
            ..
        } = source
        else {
            return None;
        };
        let (root, target) = match self.git_root(scope) {
            Some(root) => {
                let target = normalize(&root.join(host).join(path));
                (root, target)
            }
            None => {
                let target = self.temporary_dir(&format!("git-{host}"), path, git_ref.as_deref());
                (self.agent_dir.join("tmp").join("extensions"), target)
            }
        };
        (target.starts_with(normalize(&root)) && target != normalize(&root)).then_some(target)
    }

    /// The marker a git update leaves while it is incomplete (the TS name).
    pub fn git_update_marker(target: &Path) -> PathBuf {
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        target
            .parent()
            .unwrap_or(target)
            .join(format!(".{name}.pi-update-incomplete"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roots() -> InstallRoots {
        InstallRoots {
            cwd: PathBuf::from("/work/proj"),
            agent_dir: PathBuf::from("/home/u/.pi/agent"),
        }
    }

    #[test]
    fn npm_and_git_layouts_match_the_typescript_pi() {
        let r = roots();
        assert_eq!(
            r.managed_npm_path("@scope/x", SourceScope::User),
            PathBuf::from("/home/u/.pi/agent/npm/node_modules/@scope/x")
        );
        assert_eq!(
            r.managed_npm_path("x", SourceScope::Project),
            PathBuf::from("/work/proj/.pi/npm/node_modules/x")
        );
        let git = PackageSource::parse("git:github.com/user/repo@v1");
        assert_eq!(
            r.git_path(&git, SourceScope::User),
            Some(PathBuf::from("/home/u/.pi/agent/git/github.com/user/repo"))
        );
        assert_eq!(
            r.git_path(&git, SourceScope::Project),
            Some(PathBuf::from("/work/proj/.pi/git/github.com/user/repo"))
        );
        let temp = r.git_path(&git, SourceScope::Temporary).unwrap();
        assert!(temp.starts_with("/home/u/.pi/agent/tmp/extensions/git-github.com/"));
        assert!(temp.ends_with("user/repo"));
    }

    #[test]
    fn temporary_names_are_the_typescript_hashes() {
        // The first 8 hex digits of sha256("npm-"), as node's crypto gives them.
        assert_eq!(short_hash("npm-"), "f35b2129");
        assert_eq!(
            roots().npm_root(SourceScope::Temporary),
            PathBuf::from("/home/u/.pi/agent/tmp/extensions/npm/f35b2129")
        );
    }
}
