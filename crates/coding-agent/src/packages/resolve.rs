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
                    resolved.warnings.push(install_failure(&package, &e));
                    continue;
                }
            },
        };
        resolved.warnings.extend(manager.take_warnings());
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
        if contents
            .of(ResourceType::Extensions)
            .iter()
            .any(|f| f.enabled)
            && let Some(warning) = host_dependencies_warning(&root)
        {
            resolved.warnings.push(warning);
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

/// The modules pi gives extensions itself: a package must not install its own copies.
const HOST_PROVIDED: [&str; 10] = [
    "@earendil-works/pi-agent-core",
    "@earendil-works/pi-ai",
    "@earendil-works/pi-coding-agent",
    "@earendil-works/pi-tui",
    "@mariozechner/pi-agent-core",
    "@mariozechner/pi-ai",
    "@mariozechner/pi-coding-agent",
    "@mariozechner/pi-tui",
    "@sinclair/typebox",
    "typebox",
];

/// pi 0.99.0's warning for an extension package listing host-provided modules in
/// `dependencies` (they belong in `peerDependencies` with a `*` range).
fn host_dependencies_warning(root: &std::path::Path) -> Option<String> {
    let path = root.join("package.json");
    let text = crate::text_file::read_text(&path).ok()?;
    let manifest: serde_json::Value = serde_json::from_str(&text).ok()?;
    let dependencies = manifest.get("dependencies")?.as_object()?;
    let mut listed: Vec<&str> = dependencies
        .keys()
        .map(String::as_str)
        .filter(|name| HOST_PROVIDED.contains(name))
        .collect();
    listed.sort_unstable();
    (!listed.is_empty()).then(|| {
        format!(
            "Extension package \"{}\": Host-provided extension packages must be declared in peerDependencies with a \"*\" range, not dependencies: {}. Installed copies can bypass the extension loader and create duplicate runtime modules.",
            path.display(),
            listed.join(", ")
        )
    })
}

/// pi 1.6.0's warning for a package skipped because it could not be installed, with how
/// to drop it from the settings (it is tried again at the next start or `/reload`).
fn install_failure(package: &ConfiguredPackage, error: &super::manager::PackageError) -> String {
    let hint = match package.scope {
        SourceScope::Temporary => "Check the source and try again.".to_owned(),
        SourceScope::Project => format!(
            "Run \"pi remove {} --local\" to remove it from settings.json.",
            package.source
        ),
        SourceScope::User => format!(
            "Run \"pi remove {}\" to remove it from settings.json.",
            package.source
        ),
    };
    format!(
        "Extension package \"{}\": failed to install ({error}). {hint}",
        package.source
    )
}
