//! From the configured packages (settings and `-e npm:…` / `-e git:…`) to the resource
//! files pi loads, as the TypeScript pi's package manager resolves them: the project's
//! entry wins over the user's for the same package, missing packages are installed (not
//! offline; a failure is a warning and skips the package), each package's files are
//! collected with its filters, and a file met twice is kept once.

use std::collections::HashSet;
use std::path::PathBuf;

use super::manager::PackageManager;
use super::resources::{self, ResourceType};
use super::settings::{ConfiguredPackage, identity};
use super::source::PackageSource;
use crate::resources::{SourceInfo, SourceOrigin, SourceScope};

/// One resource file of a package, and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct PackageResource {
    pub path: PathBuf,
    /// Switched off by the package's filters (`pi config`).
    pub enabled: bool,
    pub source_info: SourceInfo,
}

/// Every package resource by type, and what went wrong.
#[derive(Debug, Clone, Default)]
pub struct ResolvedPackages {
    pub extensions: Vec<PackageResource>,
    pub skills: Vec<PackageResource>,
    pub prompts: Vec<PackageResource>,
    pub themes: Vec<PackageResource>,
    /// Packages that could not be installed or found (pi goes on without them).
    pub warnings: Vec<String>,
}

impl ResolvedPackages {
    fn of_mut(&mut self, kind: ResourceType) -> &mut Vec<PackageResource> {
        match kind {
            ResourceType::Extensions => &mut self.extensions,
            ResourceType::Skills => &mut self.skills,
            ResourceType::Prompts => &mut self.prompts,
            ResourceType::Themes => &mut self.themes,
        }
    }

    /// Every file of a type, enabled or not.
    pub fn all(&self, kind: ResourceType) -> &[PackageResource] {
        match kind {
            ResourceType::Extensions => &self.extensions,
            ResourceType::Skills => &self.skills,
            ResourceType::Prompts => &self.prompts,
            ResourceType::Themes => &self.themes,
        }
    }

    /// The enabled files of a type.
    pub fn enabled(&self, kind: ResourceType) -> Vec<&PackageResource> {
        self.all(kind).iter().filter(|r| r.enabled).collect()
    }

    /// Adds a file unless the same path is there already.
    pub fn push(&mut self, kind: ResourceType, resource: PackageResource) {
        if !self.all(kind).iter().any(|r| r.path == resource.path) {
            self.of_mut(kind).push(resource);
        }
    }
}

/// Keeps one entry per package identity: the project's over the user's, else the first.
pub fn dedupe(
    manager: &PackageManager,
    packages: Vec<ConfiguredPackage>,
) -> Vec<ConfiguredPackage> {
    let mut kept: Vec<(String, ConfiguredPackage)> = Vec::new();
    for package in packages {
        let key = identity(&manager.roots, &package.source, Some(package.scope));
        match kept.iter_mut().find(|(k, _)| *k == key) {
            Some((_, existing))
                if package.scope == SourceScope::Project && existing.scope == SourceScope::User =>
            {
                *existing = package;
            }
            Some(_) => {}
            None => kept.push((key, package)),
        }
    }
    kept.into_iter().map(|(_, p)| p).collect()
}

/// Resolves the packages (already in precedence order: project first) into files.
pub fn resolve(manager: &PackageManager, packages: Vec<ConfiguredPackage>) -> ResolvedPackages {
    let mut resolved = ResolvedPackages::default();
    let mut seen: HashSet<PathBuf> = HashSet::new();
    for package in dedupe(manager, packages) {
        let parsed = PackageSource::parse(&package.source);
        let root = match &parsed {
            PackageSource::Local { .. } => manager.installed_path(&package.source, package.scope),
            _ => match manager.ensure_installed(&package.source, package.scope) {
                Ok(true) => manager.installed_path(&package.source, package.scope),
                Ok(false) => None,
                Err(e) => {
                    resolved
                        .warnings
                        .push(format!("Failed to install {}: {e}", package.source));
                    continue;
                }
            },
        };
        let Some(root) = root else {
            if !matches!(parsed, PackageSource::Local { .. }) {
                resolved.warnings.push(format!(
                    "Package {} is not installed (offline); its resources are skipped",
                    package.source
                ));
            }
            continue;
        };
        let info = |path: &PathBuf, base: PathBuf| SourceInfo {
            path: path.clone(),
            source: package.source.clone(),
            scope: package.scope,
            origin: SourceOrigin::Package,
            base_dir: Some(base),
        };
        let mut add = |resolved: &mut ResolvedPackages, kind, path: PathBuf, enabled, base| {
            let key = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
            if seen.insert(key) {
                resolved.of_mut(kind).push(PackageResource {
                    source_info: info(&path, base),
                    path,
                    enabled,
                });
            }
        };
        if root.is_file() {
            let base = root.parent().map(PathBuf::from).unwrap_or_default();
            add(
                &mut resolved,
                ResourceType::Extensions,
                root.clone(),
                true,
                base,
            );
            continue;
        }
        let contents = resources::collect(&root, package.filter.as_ref());
        if !contents.is_package {
            // A folder that is no package is one extension (its index file).
            add(
                &mut resolved,
                ResourceType::Extensions,
                root.clone(),
                true,
                root.clone(),
            );
            continue;
        }
        for kind in ResourceType::ALL {
            for file in contents.of(kind) {
                add(
                    &mut resolved,
                    kind,
                    file.path.clone(),
                    file.enabled,
                    root.clone(),
                );
            }
        }
    }
    resolved
}
