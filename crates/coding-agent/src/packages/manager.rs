//! Installing, removing and updating packages with the machine's npm and git, in the
//! TypeScript pi's layout (`paths`), and finding where an installed package lives.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

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
    /// Problems met on the way that did not stop the operation (a failed `git clean`),
    /// for the caller to show.
    warnings: Mutex<Vec<String>>,
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

/// Asks cloud-sync clients (Dropbox; on macOS also File Provider) to leave a managed npm
/// folder alone, with the extended attributes pi 0.75.4 sets through `setfattr` (Linux) or
/// `xattr` (macOS). Best effort: a missing tool or a file system without extended
/// attributes changes nothing.
fn mark_ignored_by_cloud_sync(dir: &Path) {
    let (program, attributes): (&str, &[&str]) = if cfg!(target_os = "macos") {
        (
            "xattr",
            &["com.dropbox.ignored", "com.apple.fileprovider.ignore#P"],
        )
    } else if cfg!(target_os = "linux") {
        ("setfattr", &["user.com.dropbox.ignored"])
    } else {
        return;
    };
    for attribute in attributes {
        let mut command = std::process::Command::new(program);
        if program == "xattr" {
            command.args(["-w", attribute, "1"]);
        } else {
            command.args(["-n", attribute, "-v", "1"]);
        }
        let _ = command
            .arg(dir)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
    }
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
            warnings: Mutex::new(Vec::new()),
        }
    }

    /// The warnings gathered since the last call.
    pub fn take_warnings(&self) -> Vec<String> {
        self.warnings
            .lock()
            .map(|mut w| std::mem::take(&mut *w))
            .unwrap_or_default()
    }

    fn warn(&self, warning: String) {
        if let Ok(mut warnings) = self.warnings.lock() {
            warnings.push(warning);
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
        if scope == SourceScope::Temporary {
            self.roots.ensure_private_temp_root().map_err(io)?;
        }
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
        self.install_npm_specs(&[spec.to_owned()], scope)
    }

    /// One `npm install` of several specs into a scope's npm root.
    pub(super) fn install_npm_specs(
        &self,
        specs: &[String],
        scope: SourceScope,
    ) -> Result<(), PackageError> {
        let root = self.roots.npm_root(scope);
        std::fs::create_dir_all(&root).map_err(io)?;
        mark_ignored_by_cloud_sync(&root);
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
        let mut argv = args(&["install"]);
        argv.extend(specs.iter().cloned());
        argv.push("--prefix".to_owned());
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

    pub(super) fn install_git(
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
        if head == wanted_head {
            return if marker.exists() {
                self.clean_and_install(target, &marker)
            } else {
                self.repair_missing_dependencies(target)
            };
        }
        std::fs::write(&marker, "").map_err(io)?;
        self.runner
            .run("git", &args(&["reset", "--hard", &commit]), Some(target))?;
        self.clean_and_install(target, &marker)
    }

    /// `git clean -fdx`, then the dependencies of the new commit. A clean that fails (a
    /// file another process holds) is a warning: the dependencies are still installed and
    /// the marker stays, so the next update cleans again (pi 0.84.0).
    fn clean_and_install(&self, target: &Path, marker: &Path) -> Result<(), PackageError> {
        let cleaned = self
            .runner
            .run("git", &args(&["clean", "-fdx"]), Some(target));
        if let Err(e) = &cleaned {
            self.warn(format!(
                "Could not remove all untracked files in {} ({e}). Files may be in use by another pi session; close it and run the update again.",
                target.display()
            ));
        }
        if target.join("package.json").exists() {
            self.run_npm(self.git_dependency_install(), Some(target))?;
        }
        if cleaned.is_ok() {
            let _ = std::fs::remove_file(marker);
        }
        Ok(())
    }

    /// Installs the dependencies of an up-to-date checkout again when one is missing
    /// from its `node_modules`.
    fn repair_missing_dependencies(&self, target: &Path) -> Result<(), PackageError> {
        let Ok(text) = crate::text_file::read_text(target.join("package.json")) else {
            return Ok(());
        };
        let Ok(manifest) = serde_json::from_str::<serde_json::Value>(&text) else {
            return Ok(());
        };
        let Some(dependencies) = manifest.get("dependencies").and_then(|d| d.as_object()) else {
            return Ok(());
        };
        let modules = target.join("node_modules");
        let missing = dependencies.keys().any(|name| {
            let path = modules.join(name);
            !name.split('/').any(|part| part == ".." || part.is_empty()) && !path.exists()
        });
        if missing {
            self.run_npm(self.git_dependency_install(), Some(target))?;
        }
        Ok(())
    }

    /// The checkout's `HEAD` commit, if it is there.
    pub(super) fn git_head(&self, target: &Path) -> Option<String> {
        if !target.exists() {
            return None;
        }
        self.runner
            .capture("git", &args(&["rev-parse", "HEAD"]), Some(target))
            .ok()
            .filter(|head| !head.is_empty())
    }

    /// The newest version npm reports for a name or spec (`npm view <spec> version
    /// --json`: one version, or the list a range matches).
    pub(super) fn latest_npm_version(&self, spec: &str) -> Option<semver::Version> {
        let (program, mut argv) = self.npm_program();
        argv.extend(args(&["view", spec, "version", "--json"]));
        let out = self.runner.capture(program, &argv, None).ok()?;
        let parse = |v: &serde_json::Value| v.as_str().and_then(|v| semver::Version::parse(v).ok());
        match serde_json::from_str::<serde_json::Value>(&out).ok()? {
            serde_json::Value::Array(list) => list.iter().filter_map(parse).max(),
            one => parse(&one),
        }
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

    /// Installs a configured package that is missing (or an npm package whose pinned
    /// version differs from the installed one); true when it is there afterwards.
    pub fn ensure_installed(&self, source: &str, scope: SourceScope) -> Result<bool, PackageError> {
        let parsed = PackageSource::parse(source);
        if scope == SourceScope::Temporary && !matches!(parsed, PackageSource::Local { .. }) {
            self.roots.ensure_private_temp_root().map_err(io)?;
        }
        let path = self.install_path(&parsed, scope);
        let present = path.as_ref().is_some_and(|p| p.exists());
        let wrong_version = match (&parsed, &path) {
            (
                PackageSource::Npm {
                    version: Some(v), ..
                },
                Some(p),
            ) if present => !installed_version(p).is_some_and(|i| npm_version_matches(&i, v)),
            _ => false,
        };
        if present && !wrong_version {
            if scope == SourceScope::Temporary && !offline() {
                self.refresh_temporary(&parsed, source, path.as_deref());
            }
            return Ok(true);
        }
        if matches!(parsed, PackageSource::Local { .. }) || offline() {
            return Ok(present);
        }
        self.install(source, scope)?;
        Ok(self.installed_path(source, scope).is_some())
    }
}

impl PackageManager {
    /// `-e` packages have no `pi update`: on each load an unpinned npm package is brought to
    /// the registry's newest and a git checkout to its ref's current commit (pi 0.99.0,
    /// 1.5.0). A failed refresh keeps what is there.
    fn refresh_temporary(&self, parsed: &PackageSource, source: &str, path: Option<&Path>) {
        match parsed {
            PackageSource::Npm {
                name,
                spec,
                version,
            } if !parsed.pinned() => {
                let installed = path
                    .and_then(installed_version)
                    .and_then(|v| semver::Version::parse(&v).ok());
                let query = if version.is_some() { spec } else { name };
                let newer = match (installed, self.latest_npm_version(query)) {
                    (Some(installed), Some(latest)) => latest > installed,
                    _ => false,
                };
                if newer {
                    let spec = if version.is_some() {
                        spec.clone()
                    } else {
                        format!("{name}@latest")
                    };
                    let _ = self.install_npm(&spec, SourceScope::Temporary);
                }
            }
            PackageSource::Git { git_ref, .. } => {
                let at_commit = git_ref.as_deref().is_some_and(|r| {
                    (7..=64).contains(&r.len())
                        && r.chars().all(|c| c.is_ascii_hexdigit())
                        && path
                            .and_then(|p| self.git_head(p))
                            .is_some_and(|head| head.starts_with(&r.to_ascii_lowercase()))
                });
                if !at_commit {
                    let _ = self.install_git(parsed, SourceScope::Temporary, source);
                }
            }
            _ => {}
        }
    }
}

/// Whether an installed version answers a configured npm version (pi 0.79.4): an exact
/// version must be equal, a range (`^1.2.7`, `>=1 <2`, `1.x || 2.x`) must contain it, and a
/// tag (`latest`, `beta`) or anything else that is no range accepts whatever is installed.
fn npm_version_matches(installed: &str, wanted: &str) -> bool {
    let wanted = wanted.trim();
    let Ok(installed) = semver::Version::parse(installed.trim()) else {
        return false;
    };
    if let Ok(exact) = semver::Version::parse(wanted.trim_start_matches(['=', 'v'])) {
        return installed == exact;
    }
    let mut ranges = Vec::new();
    for alternative in wanted.split("||") {
        match npm_range(alternative) {
            Some(range) => ranges.push(range),
            None => return true,
        }
    }
    ranges.iter().any(|range| range.matches(&installed))
}

/// One npm range alternative as a `semver` requirement: comparators separated by spaces
/// are joined with commas, and a bare partial version (`1.2`) means that release line
/// (`=1.2`), as npm reads it. An empty alternative means any version.
fn npm_range(alternative: &str) -> Option<semver::VersionReq> {
    let parts: Vec<String> = alternative
        .split_whitespace()
        .map(|part| {
            if part.starts_with(|c: char| c.is_ascii_digit()) {
                format!("={part}")
            } else {
                part.to_owned()
            }
        })
        .collect();
    if parts.is_empty() {
        return Some(semver::VersionReq::STAR);
    }
    semver::VersionReq::parse(&parts.join(", ")).ok()
}

/// The `version` in an installed package's `package.json`.
pub fn installed_version(path: &Path) -> Option<String> {
    let text = crate::text_file::read_text(path.join("package.json")).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    json.get("version")?.as_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::npm_version_matches;

    #[test]
    fn npm_versions_ranges_and_tags() {
        for (installed, wanted, matches) in [
            ("1.3.0", "1.3.0", true),
            ("1.3.0", "1.2.0", false),
            ("1.3.0", "^1.2.7", true),
            ("2.0.0", "^1.2.7", false),
            ("1.2.5", "~1.2.0", true),
            ("1.5.0", ">=1.0.0 <2.0.0", true),
            ("2.1.0", "1.x || 2.1", true),
            ("1.3.0", "1.2", false),
            ("1.3.0", "latest", true),
            ("1.3.0", "beta", true),
        ] {
            assert_eq!(
                npm_version_matches(installed, wanted),
                matches,
                "{installed} {wanted}"
            );
        }
    }
}
