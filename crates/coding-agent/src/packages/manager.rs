//! Installing, removing and updating packages with the machine's npm and git, in the
//! TypeScript pi's layout (`paths`), and finding where an installed package lives.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::command::{CommandError, Runner, args};
use super::paths::{InstallRoots, home};
use super::source::PackageSource;
use crate::resources::{SourceScope, resolve_from};

/// Why a package operation failed.
#[derive(Debug, thiserror::Error)]
pub enum PackageError {
    #[error("Path does not exist: {0}")]
    MissingPath(PathBuf),
    #[error("Refusing to use a path outside the package install root for {0}")]
    OutsideRoot(String),
    #[error("{0}")]
    Command(#[from] CommandError),
    #[error("{0}")]
    Io(String),
}

/// Installs and finds packages for one agent dir and project.
pub struct PackageManager {
    pub roots: InstallRoots,
    /// The argv standing for `npm` (settings `npmCommand`).
    npm: Vec<String>,
    runner: Runner,
    /// `npm root -g`, asked once (0.73's user installs live there).
    global_npm_root: OnceLock<Option<PathBuf>>,
}

fn io(e: std::io::Error) -> PackageError {
    PackageError::Io(e.to_string())
}

/// `--offline` was given.
static OFFLINE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// `--offline`: from now on nothing is installed or updated over the network.
pub fn force_offline() {
    OFFLINE.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// `--offline`, or `PI_OFFLINE` set to 1/true/yes: nothing is installed or updated over
/// the network.
pub fn offline() -> bool {
    OFFLINE.load(std::sync::atomic::Ordering::SeqCst)
        || std::env::var("PI_OFFLINE")
            .map(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes"))
            .unwrap_or(false)
}

/// Writes `.gitignore` ignoring everything in a folder pi manages.
fn ensure_git_ignore(dir: &Path) -> Result<(), PackageError> {
    std::fs::create_dir_all(dir).map_err(io)?;
    let ignore = dir.join(".gitignore");
    if !ignore.exists() {
        std::fs::write(ignore, "*\n!.gitignore\n").map_err(io)?;
    }
    Ok(())
}

impl PackageManager {
    pub fn new(roots: InstallRoots, npm: Vec<String>, runner: Runner) -> Self {
        Self {
            roots,
            npm,
            runner,
            global_npm_root: OnceLock::new(),
        }
    }

    fn npm_program(&self) -> (&str, Vec<String>) {
        match self.npm.split_first() {
            Some((program, rest)) => (program, rest.to_vec()),
            None => ("npm", Vec::new()),
        }
    }

    fn run_npm(&self, extra: Vec<String>, cwd: Option<&Path>) -> Result<(), PackageError> {
        let (program, mut argv) = self.npm_program();
        argv.extend(extra);
        Ok(self.runner.run(program, &argv, cwd)?)
    }

    /// The global npm root (`npm root -g`), where the TypeScript pi 0.73 installed user
    /// packages; `None` when npm cannot say.
    fn global_npm_root(&self) -> Option<&PathBuf> {
        self.global_npm_root
            .get_or_init(|| {
                let (program, mut argv) = self.npm_program();
                argv.extend(args(&["root", "-g"]));
                self.runner
                    .capture(program, &argv, None)
                    .ok()
                    .filter(|root| !root.is_empty())
                    .map(PathBuf::from)
            })
            .as_ref()
    }

    /// Where a source of a scope is (or would be) installed; local paths resolved.
    pub fn install_path(&self, source: &PackageSource, scope: SourceScope) -> Option<PathBuf> {
        match source {
            PackageSource::Npm { name, .. } => {
                let managed = self.roots.managed_npm_path(name, scope);
                if scope != SourceScope::User || managed.exists() {
                    return Some(managed);
                }
                let legacy = self.global_npm_root().map(|root| root.join(name));
                Some(legacy.filter(|p| p.exists()).unwrap_or(managed))
            }
            PackageSource::Git { .. } => self.roots.git_path(source, scope),
            PackageSource::Local { path } => {
                Some(resolve_from(path, &self.roots.base_dir(scope), &home()))
            }
        }
    }

    /// Where an installed source lives, if it is there.
    pub fn installed_path(&self, source: &str, scope: SourceScope) -> Option<PathBuf> {
        self.install_path(&PackageSource::parse(source), scope)
            .filter(|p| p.exists())
    }

    /// `pi install`: npm or git into the scope's folders; a local path must exist.
    pub fn install(&self, source: &str, scope: SourceScope) -> Result<(), PackageError> {
        match PackageSource::parse(source) {
            PackageSource::Npm { spec, .. } => self.install_npm(&spec, scope),
            git @ PackageSource::Git { .. } => self.install_git(&git, scope, source),
            PackageSource::Local { path } => {
                let resolved = resolve_from(&path, &self.roots.cwd, &home());
                if resolved.exists() {
                    Ok(())
                } else {
                    Err(PackageError::MissingPath(resolved))
                }
            }
        }
    }

    fn install_npm(&self, spec: &str, scope: SourceScope) -> Result<(), PackageError> {
        let root = self.roots.npm_root(scope);
        ensure_git_ignore(&root)?;
        let manifest = root.join("package.json");
        if !manifest.exists() {
            std::fs::write(
                &manifest,
                "{\n  \"name\": \"pi-extensions\",\n  \"private\": true\n}",
            )
            .map_err(io)?;
        }
        // npm writes broken nested lock paths when --prefix goes through a symlink.
        let prefix = std::fs::canonicalize(&root).unwrap_or(root);
        let mut argv = args(&["install", spec, "--prefix"]);
        argv.push(prefix.display().to_string());
        argv.extend(args(&["--legacy-peer-deps", "--no-audit", "--no-fund"]));
        self.run_npm(argv, None)
    }

    /// The dependency install run in a git checkout with a `package.json`.
    fn git_dependency_install(&self) -> Vec<String> {
        if self.npm.len() > 1 || self.npm.first().is_some_and(|p| p != "npm") {
            args(&["install"])
        } else {
            args(&[
                "install",
                "--omit=dev",
                "--legacy-peer-deps",
                "--no-audit",
                "--no-fund",
            ])
        }
    }

    fn install_git(
        &self,
        source: &PackageSource,
        scope: SourceScope,
        typed: &str,
    ) -> Result<(), PackageError> {
        let PackageSource::Git { repo, git_ref, .. } = source else {
            return Ok(());
        };
        let target = self
            .roots
            .git_path(source, scope)
            .ok_or_else(|| PackageError::OutsideRoot(typed.to_owned()))?;
        if target.exists() {
            return self.reconcile_git(source, &target);
        }
        if let Some(root) = self.roots.git_root(scope) {
            ensure_git_ignore(&root)?;
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let cloned = (|| {
            let mut argv = args(&["clone", repo]);
            argv.push(target.display().to_string());
            self.runner.run("git", &argv, None)?;
            if let Some(git_ref) = git_ref {
                self.runner
                    .run("git", &args(&["checkout", git_ref]), Some(&target))?;
            }
            if target.join("package.json").exists() {
                self.run_npm(self.git_dependency_install(), Some(&target))?;
            }
            Ok(())
        })();
        if cloned.is_err() {
            // A failed install leaves nothing behind.
            let _ = std::fs::remove_dir_all(&target);
            self.prune_empty_parents(&target, scope);
        }
        cloned
    }

    /// Brings an existing checkout to its pinned ref, or to its branch's newest commit
    /// (pi #9982: a changed pin moves the checkout; a pin never follows the branch).
    fn reconcile_git(&self, source: &PackageSource, target: &Path) -> Result<(), PackageError> {
        let PackageSource::Git { git_ref, .. } = source else {
            return Ok(());
        };
        let (fetch, wanted) = match git_ref {
            Some(git_ref) => (args(&["fetch", "origin", git_ref]), "FETCH_HEAD".to_owned()),
            None => self.upstream_target(target),
        };
        self.runner.run("git", &fetch, Some(target))?;
        let head = self
            .runner
            .capture("git", &args(&["rev-parse", "HEAD"]), Some(target))?;
        let commit = format!("{wanted}^{{commit}}");
        let wanted_head =
            self.runner
                .capture("git", &args(&["rev-parse", &commit]), Some(target))?;
        let marker = InstallRoots::git_update_marker(target);
        if head == wanted_head && !marker.exists() {
            return Ok(());
        }
        std::fs::write(&marker, "").map_err(io)?;
        if head != wanted_head {
            self.runner
                .run("git", &args(&["reset", "--hard", &commit]), Some(target))?;
        }
        self.runner
            .run("git", &args(&["clean", "-fdx"]), Some(target))?;
        if target.join("package.json").exists() {
            self.run_npm(self.git_dependency_install(), Some(target))?;
        }
        let _ = std::fs::remove_file(&marker);
        Ok(())
    }

    /// What an unpinned checkout follows: its upstream branch, else the remote's HEAD.
    fn upstream_target(&self, target: &Path) -> (Vec<String>, String) {
        let upstream = self.runner.capture(
            "git",
            &args(&["rev-parse", "--abbrev-ref", "@{upstream}"]),
            Some(target),
        );
        if let Ok(upstream) = upstream
            && let Some(branch) = upstream.strip_prefix("origin/")
            && !branch.is_empty()
        {
            let refspec = format!("+refs/heads/{branch}:refs/remotes/origin/{branch}");
            return (
                args(&["fetch", "--prune", "--no-tags", "origin", &refspec]),
                "@{upstream}".to_owned(),
            );
        }
        (
            args(&[
                "fetch",
                "--prune",
                "--no-tags",
                "origin",
                "+HEAD:refs/remotes/origin/HEAD",
            ]),
            "origin/HEAD".to_owned(),
        )
    }

    /// `pi remove`: uninstalls an npm package, deletes a git checkout; local paths stay.
    pub fn remove(&self, source: &str, scope: SourceScope) -> Result<(), PackageError> {
        match PackageSource::parse(source) {
            PackageSource::Npm { name, .. } => {
                let root = self.roots.npm_root(scope);
                if !root.exists() {
                    return Ok(());
                }
                let prefix = std::fs::canonicalize(&root).unwrap_or(root);
                let mut argv = args(&["uninstall", &name, "--prefix"]);
                argv.push(prefix.display().to_string());
                argv.extend(args(&["--legacy-peer-deps", "--no-audit", "--no-fund"]));
                self.run_npm(argv, None)
            }
            git @ PackageSource::Git { .. } => {
                let target = self
                    .roots
                    .git_path(&git, scope)
                    .ok_or_else(|| PackageError::OutsideRoot(source.to_owned()))?;
                if target.exists() {
                    std::fs::remove_dir_all(&target).map_err(io)?;
                }
                let _ = std::fs::remove_file(InstallRoots::git_update_marker(&target));
                self.prune_empty_parents(&target, scope);
                Ok(())
            }
            PackageSource::Local { .. } => Ok(()),
        }
    }

    /// Removes the folders a removed checkout leaves empty, up to the git root.
    fn prune_empty_parents(&self, target: &Path, scope: SourceScope) {
        let Some(root) = self.roots.git_root(scope) else {
            return;
        };
        let mut current = target.parent();
        while let Some(dir) = current {
            if !dir.starts_with(&root) || dir == root {
                break;
            }
            if dir.exists() && std::fs::remove_dir(dir).is_err() {
                break;
            }
            current = dir.parent();
        }
    }

    /// Updates one configured package: a pinned npm package or local path is left alone
    /// (the settings say which version); an npm package is installed again when the
    /// registry's newest differs; a git checkout is reconciled with its ref or branch.
    pub fn update(&self, source: &str, scope: SourceScope) -> Result<(), PackageError> {
        let parsed = PackageSource::parse(source);
        match &parsed {
            PackageSource::Local { .. } => Ok(()),
            // A pinned version is only reinstalled when the installed one differs.
            PackageSource::Npm { .. } if parsed.pinned() => {
                self.ensure_installed(source, scope).map(|_| ())
            }
            PackageSource::Npm { name, spec, .. } => {
                let installed = self
                    .install_path(&parsed, scope)
                    .and_then(|p| installed_version(&p));
                let latest = {
                    let (program, mut argv) = self.npm_program();
                    argv.extend(args(&["view", name, "version"]));
                    self.runner.capture(program, &argv, None).ok()
                };
                if installed.is_some() && installed == latest {
                    return Ok(());
                }
                self.install_npm(spec, scope)
            }
            PackageSource::Git { .. } => self.install_git(&parsed, scope, source),
        }
    }

    /// Installs a configured package that is missing (or an npm package whose pinned
    /// version differs from the installed one); true when it is there afterwards.
    pub fn ensure_installed(&self, source: &str, scope: SourceScope) -> Result<bool, PackageError> {
        let parsed = PackageSource::parse(source);
        let path = self.install_path(&parsed, scope);
        let present = path.as_ref().is_some_and(|p| p.exists());
        let wrong_version = match (&parsed, &path) {
            (
                PackageSource::Npm {
                    version: Some(v), ..
                },
                Some(p),
            ) if present => installed_version(p).as_deref() != Some(v.as_str()),
            _ => false,
        };
        if present && !wrong_version {
            return Ok(true);
        }
        if matches!(parsed, PackageSource::Local { .. }) || offline() {
            return Ok(present);
        }
        self.install(source, scope)?;
        Ok(self.installed_path(source, scope).is_some())
    }
}

/// The `version` in an installed package's `package.json`.
pub fn installed_version(path: &Path) -> Option<String> {
    let text = crate::text_file::read_text(path.join("package.json")).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    json.get("version")?.as_str().map(str::to_owned)
}
