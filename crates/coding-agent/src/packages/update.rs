//! `pi update --extensions`: which configured packages are updated and what changed, as
//! pi 1.6.0 reports it (`npm:foo 1.2.0 -> 1.3.0`, a git commit change, warnings when npm
//! left the old version in place).

use super::manager::{PackageError, PackageManager, installed_version};
use super::settings::ConfiguredPackage;
use super::source::PackageSource;
use crate::resources::SourceScope;

/// What an update tells the user while it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpdateEvent {
    /// Work on a package (or a scope's npm packages) begins: `Updating npm:foo...`.
    Start(String),
    /// Something went wrong without stopping the update.
    Warning(String),
}

/// An npm package whose registry version was checked.
struct NpmCheck<'a> {
    package: &'a ConfiguredPackage,
    /// The spec installed: the configured range, or `name@latest`.
    spec: String,
    installed: Option<String>,
    target: Option<semver::Version>,
}

/// A package whose installed version or commit changed.
struct Changed {
    source: String,
    scope: SourceScope,
    from: Option<String>,
    to: Option<String>,
    git: bool,
}

impl Changed {
    /// `npm:foo 1.2.0 -> 1.3.0`, `git:host/repo 1a2b3c4 -> 5d6e7f8`, `(project)` after the
    /// source of a project package, `(none)` for a missing side.
    fn line(&self) -> String {
        let show = |value: &Option<String>| match value {
            None => "(none)".to_owned(),
            Some(v) if self.git => v.chars().take(7).collect(),
            Some(v) => v.clone(),
        };
        let scope = if self.scope == SourceScope::Project {
            " (project)"
        } else {
            ""
        };
        format!(
            "{}{scope} {} -> {}",
            self.source,
            show(&self.from),
            show(&self.to)
        )
    }
}

impl PackageManager {
    /// Updates the packages: unpinned npm packages whose registry version is newer than the
    /// installed one (never a downgrade), in one npm run per scope; git checkouts to their
    /// ref or branch. Returns one line per package that changed.
    pub fn update_packages(
        &self,
        packages: &[&ConfiguredPackage],
        report: &mut dyn FnMut(UpdateEvent),
    ) -> Result<Vec<String>, PackageError> {
        let mut npm = Vec::new();
        let mut git = Vec::new();
        for package in packages {
            let parsed = PackageSource::parse(&package.source);
            match &parsed {
                PackageSource::Npm {
                    name,
                    spec,
                    version,
                } if !parsed.pinned() => npm.push(self.check_npm(package, name, spec, version)),
                PackageSource::Git { .. } => git.push((*package, parsed)),
                _ => {}
            }
        }
        npm.retain(|check| match (&check.installed, &check.target) {
            (Some(installed), Some(target)) => semver::Version::parse(installed)
                .map(|installed| *target > installed)
                .unwrap_or(true),
            // Not installed, or npm could not say: install as before.
            _ => true,
        });
        let mut changed = Vec::new();
        for scope in [SourceScope::User, SourceScope::Project] {
            let batch: Vec<&NpmCheck> = npm.iter().filter(|c| c.package.scope == scope).collect();
            if batch.is_empty() {
                continue;
            }
            report(UpdateEvent::Start(match batch.as_slice() {
                [one] => format!("Updating {}...", one.package.source),
                _ if scope == SourceScope::Project => "Updating project npm packages...".to_owned(),
                _ => "Updating user npm packages...".to_owned(),
            }));
            let specs: Vec<String> = batch.iter().map(|c| c.spec.clone()).collect();
            self.install_npm_specs(&specs, scope)?;
            for check in batch {
                let after = self
                    .install_path(&PackageSource::parse(&check.package.source), scope)
                    .filter(|p| p.exists())
                    .and_then(|p| installed_version(&p));
                if let (Some(installed), Some(target)) = (&check.installed, &check.target)
                    && after.as_ref() == Some(installed)
                {
                    report(UpdateEvent::Warning(format!(
                        "{} is still {installed} (registry reports {target}); npm registry metadata may be stale, try again in a few minutes",
                        check.package.source
                    )));
                }
                if after != check.installed {
                    changed.push(Changed {
                        source: check.package.source.clone(),
                        scope,
                        from: check.installed.clone(),
                        to: after,
                        git: false,
                    });
                }
            }
        }
        for (package, parsed) in git {
            report(UpdateEvent::Start(format!(
                "Updating {}...",
                package.source
            )));
            let target = self.install_path(&parsed, package.scope);
            let from = target.as_deref().and_then(|t| self.git_head(t));
            let result = self.install_git(&parsed, package.scope, &package.source);
            for warning in self.take_warnings() {
                report(UpdateEvent::Warning(warning));
            }
            result?;
            let to = target.as_deref().and_then(|t| self.git_head(t));
            if from != to {
                changed.push(Changed {
                    source: package.source.clone(),
                    scope: package.scope,
                    from,
                    to,
                    git: true,
                });
            }
        }
        Ok(changed.iter().map(Changed::line).collect())
    }

    /// The installed version of an npm package and the registry's newest for its spec.
    fn check_npm<'a>(
        &self,
        package: &'a ConfiguredPackage,
        name: &str,
        spec: &str,
        version: &Option<String>,
    ) -> NpmCheck<'a> {
        let installed = self
            .install_path(&PackageSource::parse(&package.source), package.scope)
            .filter(|p| p.exists())
            .and_then(|p| installed_version(&p));
        let target = installed
            .as_ref()
            .and_then(|_| self.latest_npm_version(if version.is_some() { spec } else { name }));
        NpmCheck {
            package,
            spec: if version.is_some() {
                spec.to_owned()
            } else {
                format!("{name}@latest")
            },
            installed,
            target,
        }
    }
}
