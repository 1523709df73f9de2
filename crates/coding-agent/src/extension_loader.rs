//! Loading extensions at startup: the trust decision for project code, discovery, the
//! node host (started only when a TypeScript extension was found), Rust extensions, and
//! the one runtime they make. The errors a user sees are decided here.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::extension_host::{HostOptions, HostStartError, NodeHost};
use crate::extensions::backend::ExtensionBackend;
use crate::extensions::discovery::{self, DiscoveredExtension, ExtensionSources};
use crate::extensions::registry::{FlagType, LoadError};
use crate::extensions::{Extension, ExtensionRuntime, RustBackend};
use crate::packages::command::Runner;
use crate::packages::manager::PackageManager;
use crate::packages::paths::InstallRoots;
use crate::packages::resolve::ResolvedPackages;
use crate::packages::resources::ResourceType;
use crate::packages::settings::{self as pkg_settings, ConfiguredPackage};
use crate::packages::{self, PackageSource};
use crate::resources::SourceScope;
use crate::trust::{self, DefaultTrust, TrustStore};

/// Asks whether to trust a project folder; `None` when the user did not answer.
pub type AskTrust = Box<dyn Fn(&Path) -> Option<trust::TrustOption> + Send>;

/// What startup knows when it loads extensions.
pub struct LoadOptions {
    pub cwd: PathBuf,
    pub agent_dir: PathBuf,
    /// `rpc`, `print`, `json` or `interactive`.
    pub mode: String,
    /// `-e` paths.
    pub cli_paths: Vec<String>,
    pub no_extensions: bool,
    /// `--approve` (true) / `--no-approve` (false).
    pub approve: Option<bool>,
    /// Asks the user whether to trust the project (interactive mode); `None` cannot ask.
    pub ask_trust: Option<AskTrust>,
    pub theme: String,
}

/// The loaded extensions, and what went wrong.
pub struct Loaded {
    pub runtime: Arc<ExtensionRuntime>,
    /// Messages for stderr (extensions that failed to load, node missing, …).
    pub warnings: Vec<String>,
    /// A failure that ends pi with exit code 1 (an explicit `-e` that did not load).
    pub fatal: Option<String>,
    /// Packages among the configured paths: their prompt templates and skills join the
    /// session's.
    pub packages: Vec<discovery::PackageResources>,
    /// Installed packages (settings `packages`, `-e npm:…` / `-e git:…`): their skills,
    /// prompt templates and themes join the session's (their extensions are loaded).
    pub resolved_packages: ResolvedPackages,
    /// The user trusts this project's own files (`.pi/`): its MCP servers may start.
    pub project_trusted: bool,
    /// The project's trust was for the user to decide but no UI could ask (its protected
    /// resources were skipped): a mode with another way to ask may do so.
    pub trust_unasked: bool,
}

/// `extensions` and `defaultProjectTrust` of a settings file.
fn settings_entries(path: &Path) -> (Vec<String>, Option<String>) {
    let Some(Value::Object(map)) = crate::text_file::read_text(path)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
    else {
        return (Vec::new(), None);
    };
    let entries = map
        .get("extensions")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let trust = map
        .get("defaultProjectTrust")
        .and_then(Value::as_str)
        .map(str::to_owned);
    (entries, trust)
}

/// pi 1.6.0's trust decision for startup: `--approve`/`--no-approve`; for a project with
/// nothing protected, a saved decision or trust; else a user or `-e` extension's
/// `project_trust` answer (they load first, without the project's), a saved decision,
/// `defaultProjectTrust`, and the prompt in the terminal UI.
pub async fn load(options: LoadOptions, rust_extensions: Vec<Arc<dyn Extension>>) -> Loaded {
    let store = TrustStore::new(&options.agent_dir);
    if let Some(decision) = options.approve {
        return load_trusted(&options, rust_extensions, decision).await;
    }
    if !trust::has_trust_requiring_resources(&options.cwd) {
        let (trusted, warning) = match trust::without_protected_resources(&store, &options.cwd) {
            Ok(trusted) => (trusted, None),
            Err(e) => (false, Some(e.to_string())),
        };
        let mut loaded = load_trusted(&options, rust_extensions, trusted).await;
        loaded.warnings.splice(0..0, warning);
        return loaded;
    }
    let untrusted = load_trusted(&options, rust_extensions.clone(), false).await;
    if untrusted.fatal.is_some() {
        return untrusted;
    }
    let cwd = options.cwd.display().to_string();
    let interactive = options.mode == "interactive";
    let answer = untrusted
        .runtime
        .emit_project_trust(&cwd, &options.mode, interactive)
        .await;
    let mut unasked = false;
    let mut warnings: Vec<String> = answer
        .warnings
        .into_iter()
        .map(|warning| format!("Warning: {warning}"))
        .collect();
    let trusted = match answer.trusted {
        Some(trusted) => {
            if answer.remember
                && let Err(e) = store.set(&options.cwd, Some(trusted))
            {
                warnings.push(e.to_string());
            }
            trusted
        }
        None => {
            let (_, default) = settings_entries(&options.agent_dir.join("settings.json"));
            match trust::decide(
                None,
                &store,
                &options.cwd,
                DefaultTrust::parse(default.as_deref()),
            ) {
                Ok(Some(decision)) => decision,
                Ok(None) => match options.ask_trust.as_ref() {
                    Some(ask) => match ask(&options.cwd) {
                        Some(choice) => {
                            if let Err(e) = store.set_many(&choice.updates) {
                                warnings.push(e.to_string());
                            }
                            choice.trusted
                        }
                        None => false,
                    },
                    None => {
                        unasked = true;
                        false
                    }
                },
                Err(e) => {
                    warnings.push(e.to_string());
                    false
                }
            }
        }
    };
    let mut loaded = if trusted {
        // The project's extensions, packages and settings join: load again with them.
        untrusted.runtime.shutdown().await;
        load_trusted(&options, rust_extensions, true).await
    } else {
        untrusted
    };
    loaded.trust_unasked = unasked;
    loaded.warnings.splice(0..0, warnings);
    loaded
}

/// Discovers and loads every extension (TypeScript ones in the node host) for a decided
/// project trust.
async fn load_trusted(
    options: &LoadOptions,
    rust_extensions: Vec<Arc<dyn Extension>>,
    trusted: bool,
) -> Loaded {
    let mut warnings = Vec::new();
    let (project_entries, _) = if trusted {
        settings_entries(&options.cwd.join(".pi").join("settings.json"))
    } else {
        (Vec::new(), None)
    };
    // `-e builtin:<name>` turns a built-in extension on (`crate::builtins`): no path.
    let (package_sources, local_paths): (Vec<String>, Vec<String>) = options
        .cli_paths
        .iter()
        .filter(|p| !crate::builtins::is_builtin_entry(p))
        .cloned()
        .partition(|p| !matches!(PackageSource::parse(p), PackageSource::Local { .. }));
    // Packages load with --no-extensions too: only their extensions stay off.
    let resolved_packages = resolve_packages(
        &options.cwd,
        &options.agent_dir,
        &options.mode,
        trusted,
        &package_sources,
    );
    warnings.extend(
        resolved_packages
            .warnings
            .iter()
            .map(|warning| format!("Warning: {warning}")),
    );
    let again = Reload {
        package_extensions: package_extensions(&resolved_packages, options.no_extensions),
        package_sources,
        cwd: options.cwd.clone(),
        agent_dir: options.agent_dir.clone(),
        mode: options.mode.clone(),
        cli_paths: local_paths.clone(),
        no_extensions: options.no_extensions,
        trusted,
        theme: options.theme.clone(),
        rust: rust_extensions,
    };
    let (user_entries, _) = settings_entries(&options.agent_dir.join("settings.json"));
    let packages = discovery::packages(&ExtensionSources {
        cwd: options.cwd.clone(),
        agent_dir: options.agent_dir.clone(),
        user_entries,
        project_entries: project_entries.clone(),
        cli_paths: local_paths,
        no_discovery: options.no_extensions,
        project_trusted: trusted,
    });
    let (backends, errors, more_warnings, fatal) = load_backends(&again, Vec::new()).await;
    warnings.extend(more_warnings);
    let runtime = Arc::new(ExtensionRuntime::new(backends, errors));
    runtime.set_reloader(Arc::new(move |current| {
        let mut again = again.clone();
        Box::pin(async move {
            // Packages installed or removed since are found again, as the TypeScript pi does.
            let resolving = again.clone();
            let resolved = tokio::task::spawn_blocking(move || {
                resolve_packages(
                    &resolving.cwd,
                    &resolving.agent_dir,
                    &resolving.mode,
                    resolving.trusted,
                    &resolving.package_sources,
                )
            })
            .await
            .unwrap_or_default();
            for warning in &resolved.warnings {
                eprintln!("Warning: {warning}");
            }
            again.package_extensions = package_extensions(&resolved, again.no_extensions);
            let (backends, errors, warnings, fatal) = load_backends(&again, current).await;
            for warning in warnings {
                eprintln!("{warning}");
            }
            match fatal {
                Some(message) if backends.is_empty() => Err(message),
                _ => Ok((backends, errors)),
            }
        })
    }));
    Loaded {
        runtime,
        warnings,
        fatal,
        packages,
        resolved_packages,
        project_trusted: trusted,
        trust_unasked: false,
    }
}

/// Printed after an extension that failed to load ends pi (pi 1.6.0's words).
pub const EXTENSION_LOAD_FAILURE_HINT: &str = "Hint: Start without extensions using \"pi -ne\".";

/// What a reload needs to load the same extensions again (the trust decision is kept).
#[derive(Clone)]
struct Reload {
    /// Enabled extensions of installed packages (after the discovered ones).
    package_extensions: Vec<DiscoveredExtension>,
    /// `-e npm:…` / `-e git:…` sources.
    package_sources: Vec<String>,
    cwd: PathBuf,
    agent_dir: PathBuf,
    mode: String,
    cli_paths: Vec<String>,
    no_extensions: bool,
    trusted: bool,
    theme: String,
    rust: Vec<Arc<dyn Extension>>,
}

type LoadedBackends = (
    Vec<Arc<dyn ExtensionBackend>>,
    Vec<LoadError>,
    Vec<String>,
    Option<String>,
);

/// Discovers the extensions and starts their backends: (backends, load errors, warnings,
/// a fatal error). A live host among `current` loads them again in place instead of a new
/// one starting.
async fn load_backends(
    options: &Reload,
    current: Vec<Arc<dyn ExtensionBackend>>,
) -> LoadedBackends {
    let mut warnings = Vec::new();
    let (user_entries, _) = settings_entries(&options.agent_dir.join("settings.json"));
    let (project_entries, _) = settings_entries(&options.cwd.join(".pi").join("settings.json"));
    let mut found = discovery::discover(&ExtensionSources {
        cwd: options.cwd.clone(),
        agent_dir: options.agent_dir.clone(),
        user_entries,
        project_entries,
        cli_paths: options.cli_paths.clone(),
        no_discovery: options.no_extensions,
        project_trusted: options.trusted,
    });
    let cli_start = found
        .iter()
        .position(|e| e.source_info.scope == SourceScope::Temporary)
        .unwrap_or(found.len());
    let mut at = cli_start;
    for extension in &options.package_extensions {
        let key = std::fs::canonicalize(&extension.path).unwrap_or_else(|_| extension.path.clone());
        let known = found
            .iter()
            .any(|e| std::fs::canonicalize(&e.path).unwrap_or_else(|_| e.path.clone()) == key);
        if !known {
            found.insert(at, extension.clone());
            at += 1;
        }
    }
    let mut backends: Vec<Arc<dyn ExtensionBackend>> = options
        .rust
        .iter()
        .map(|ext| {
            Arc::new(RustBackend::new(ext.clone(), options.cwd.clone()))
                as Arc<dyn ExtensionBackend>
        })
        .collect();
    let mut errors: Vec<LoadError> = Vec::new();
    let mut fatal = None;
    if !found.is_empty() {
        let explicit: Vec<String> = found
            .iter()
            .filter(|e| e.explicit)
            .map(|e| e.path.display().to_string())
            .collect();
        let mut reused = None;
        for backend in &current {
            if let Some(reloading) = backend.reload_in_place(&found) {
                match reloading.await {
                    Ok(failed) => reused = Some((backend.clone(), failed)),
                    Err(e) => warnings.push(format!("Reloading the extensions failed: {e}")),
                }
                break;
            }
        }
        let host = match reused {
            Some(reused) => Ok(reused),
            None => NodeHost::start(HostOptions {
                agent_dir: options.agent_dir.clone(),
                cwd: options.cwd.clone(),
                mode: options.mode.clone(),
                extensions: found,
                flag_values: Map::new(),
                theme: options.theme.clone(),
                project_trusted: options.trusted,
            })
            .await
            .map(|(host, failed)| (host as Arc<dyn ExtensionBackend>, failed)),
        };
        match host {
            Ok((host, failed)) => {
                backends.push(host);
                errors = failed;
            }
            Err(error) => {
                // Without the host nothing loaded: an explicit -e makes that fatal.
                let message = match &error {
                    HostStartError::NoNode { .. } => error.to_string(),
                    _ => format!("Error: {error}"),
                };
                if explicit.is_empty() {
                    warnings.push(message);
                } else {
                    fatal = Some(message);
                }
            }
        }
        for error in &errors {
            let line = format!(
                "Failed to load extension \"{}\": {}",
                error.path, error.error
            );
            if fatal.is_none() && explicit.contains(&error.path) {
                fatal = Some(format!("Error: {line}\n{EXTENSION_LOAD_FAILURE_HINT}"));
            } else {
                warnings.push(line);
            }
        }
    }
    (backends, errors, warnings, fatal)
}

/// Resolves the command line's unknown `--flags` against the flags extensions registered:
/// their values for the runtime, or the TypeScript pi's error text.
pub fn resolve_flags(
    runtime: &ExtensionRuntime,
    given: &[(String, Option<String>)],
) -> Result<Map<String, Value>, String> {
    let registered = runtime.flags();
    let mut values = Map::new();
    for flag in &registered {
        if let Some(default) = &flag.default {
            values.insert(flag.name.clone(), default.clone());
        }
    }
    let mut unknown = Vec::new();
    for (name, value) in given {
        let Some(flag) = registered.iter().find(|f| f.name == *name) else {
            unknown.push(format!("--{name}"));
            continue;
        };
        match (flag.kind, value) {
            (FlagType::Boolean, _) => {
                values.insert(name.clone(), Value::Bool(true));
            }
            (FlagType::String, Some(value)) => {
                values.insert(name.clone(), Value::String(value.clone()));
            }
            (FlagType::String, None) => {
                return Err(format!("Extension flag \"--{name}\" requires a value"));
            }
        }
    }
    if !unknown.is_empty() {
        let plural = if unknown.len() == 1 { "" } else { "s" };
        return Err(format!("Unknown option{plural}: {}", unknown.join(", ")));
    }
    Ok(values)
}

/// The enabled extensions of the resolved packages (only `-e` ones with
/// `--no-extensions`); `-e` ones are explicit (a failure to load them is fatal).
fn package_extensions(
    resolved: &ResolvedPackages,
    no_extensions: bool,
) -> Vec<DiscoveredExtension> {
    resolved
        .enabled(ResourceType::Extensions)
        .into_iter()
        .filter(|r| !no_extensions || r.source_info.scope == SourceScope::Temporary)
        .map(|r| DiscoveredExtension {
            path: r.path.clone(),
            source_info: r.source_info.clone(),
            explicit: r.source_info.scope == SourceScope::Temporary,
        })
        .collect()
}

/// Resolves the configured packages (project first, then the user's, when the project is
/// trusted) and the command line's package sources, installing what is missing.
fn resolve_packages(
    cwd: &Path,
    agent_dir: &Path,
    mode: &str,
    trusted: bool,
    cli_sources: &[String],
) -> ResolvedPackages {
    let roots = InstallRoots {
        cwd: cwd.to_path_buf(),
        agent_dir: agent_dir.to_path_buf(),
    };
    let manager = PackageManager::new(
        roots.clone(),
        pkg_settings::npm_command(&roots, trusted),
        Runner {
            stdout_to_stderr: mode != "interactive",
        },
    );
    let mut configured = Vec::new();
    if trusted {
        configured.extend(pkg_settings::read_scope(&roots, SourceScope::Project));
    }
    configured.extend(pkg_settings::read_scope(&roots, SourceScope::User));
    let mut resolved = packages::resolve::resolve(&manager, configured);
    let temporary: Vec<ConfiguredPackage> = cli_sources
        .iter()
        .map(|source| ConfiguredPackage {
            source: source.clone(),
            scope: SourceScope::Temporary,
            filter: None,
        })
        .collect();
    let more = packages::resolve::resolve(&manager, temporary);
    resolved.warnings.extend(more.warnings.iter().cloned());
    for kind in ResourceType::ALL {
        for resource in more.all(kind) {
            resolved.push(kind, resource.clone());
        }
    }
    resolved
}
