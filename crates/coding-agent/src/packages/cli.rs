//! `pi install | remove | uninstall | update | list` with the TypeScript pi 1.5's
//! arguments, messages and exit codes.

use std::path::PathBuf;

use super::command::Runner;
use super::manager::PackageManager;
use super::paths::InstallRoots;
use super::settings;
use super::update::UpdateEvent;
use crate::resources::SourceScope;

const INSTALL_HELP: &str = "Usage:
  pi install <source> [-l] [--approve|--no-approve]

Install a package and add it to settings.

Options:
  -l, --local       Install project-locally (.pi/settings.json)
  -a, --approve     Trust project-local files for this command
  -na, --no-approve Ignore project-local files for this command

Examples:
  pi install npm:@foo/bar
  pi install git:github.com/user/repo
  pi install git:git@github.com:user/repo
  pi install https://github.com/user/repo
  pi install ssh://git@github.com/user/repo
  pi install ./local/path
";

const REMOVE_HELP: &str = "Usage:
  pi remove <source> [-l] [--approve|--no-approve]

Remove a package and its source from settings.
Alias: pi uninstall <source> [-l]

Options:
  -l, --local       Remove from project settings (.pi/settings.json)
  -a, --approve     Trust project-local files for this command
  -na, --no-approve Ignore project-local files for this command

Examples:
  pi remove npm:@foo/bar
  pi uninstall npm:@foo/bar
";

const UPDATE_HELP: &str = "Usage:
  pi update [source|self|pi] [--self|--extensions|--models|--all] [--extension <source>] [--approve|--no-approve] [--force]

Update pi, installed packages, or model catalogs.

Options:
  --self                  Update pi only (default when no target is given)
  --extensions            Update installed packages only
  --models                Refresh model catalogs only
  --all                   Update pi and installed packages
  --extension <source>    Update one package only
  -a, --approve           Trust project-local files for this command
  -na, --no-approve       Ignore project-local files for this command
  --force                 Reinstall pi even if the current version is latest

Short forms:
  pi update                Update pi only
  pi update --all          Update pi and all extensions
  pi update --models       Refresh model catalogs only
  pi update <source>       Update one package
  pi update pi             Update pi only (self works as alias to pi)
";

const LIST_HELP: &str = "Usage:
  pi list [--approve|--no-approve]

List installed packages from user and project settings.

Options:
  -a, --approve      Trust project-local files for this command
  -na, --no-approve  Ignore project-local files for this command
";

/// The package command and its arguments.
#[derive(Debug, Default)]
struct Parsed {
    command: &'static str,
    source: Option<String>,
    local: bool,
    help: bool,
    /// `--approve` (true) / `--no-approve` (false).
    approve: Option<bool>,
    self_flag: bool,
    extensions_flag: bool,
    all_flag: bool,
    models_flag: bool,
    extension: Option<String>,
    problem: Option<String>,
}

fn usage(command: &str) -> &'static str {
    match command {
        "install" => "pi install <source> [-l]",
        "remove" => "pi remove <source> [-l]",
        "update" => {
            "pi update [source|self|pi] [--self|--extensions|--models|--all] [--extension <source>] [--force]"
        }
        _ => "pi list",
    }
}

fn parse(argv: &[String]) -> Option<Parsed> {
    let (first, rest) = argv.split_first()?;
    let command = match first.as_str() {
        "install" => "install",
        "remove" | "uninstall" => "remove",
        "update" => "update",
        "list" => "list",
        _ => return None,
    };
    let mut parsed = Parsed {
        command,
        ..Parsed::default()
    };
    let unknown = |parsed: &mut Parsed, message: String| {
        parsed.problem.get_or_insert(message);
    };
    let mut index = 0;
    while index < rest.len() {
        let arg = rest[index].as_str();
        index += 1;
        match arg {
            "-h" | "--help" => parsed.help = true,
            "-a" | "--approve" => parsed.approve = Some(true),
            "-na" | "--no-approve" => parsed.approve = Some(false),
            "-l" | "--local" if matches!(command, "install" | "remove") => parsed.local = true,
            "--self" if command == "update" => parsed.self_flag = true,
            "--extensions" if command == "update" => parsed.extensions_flag = true,
            "--all" if command == "update" => parsed.all_flag = true,
            "--models" if command == "update" => parsed.models_flag = true,
            "--force" if command == "update" => {}
            "--extension" if command == "update" => match rest.get(index) {
                Some(value) if !value.starts_with('-') => {
                    if parsed.extension.is_some() {
                        unknown(&mut parsed, "--extension can only be provided once".into());
                    }
                    parsed.extension = Some(value.clone());
                    index += 1;
                }
                _ => unknown(&mut parsed, format!("Missing value for {arg}.")),
            },
            _ if arg.starts_with('-') => {
                unknown(
                    &mut parsed,
                    format!("Unknown option {arg} for \"{command}\"."),
                );
            }
            _ if parsed.source.is_none() => parsed.source = Some(arg.to_owned()),
            _ => unknown(&mut parsed, format!("Unexpected argument {arg}.")),
        }
    }
    if command == "update" && parsed.extension.is_some() {
        if parsed.self_flag || parsed.extensions_flag {
            unknown(
                &mut parsed,
                "--extension cannot be combined with --self or --extensions".into(),
            );
        }
        if parsed.source.is_some() {
            unknown(
                &mut parsed,
                "--extension cannot be combined with a positional source".into(),
            );
        }
    }
    Some(parsed)
}

/// Runs a package command when `argv` (without the program name) is one; the exit code.
pub fn handle(argv: &[String]) -> Option<i32> {
    let parsed = parse(argv)?;
    if parsed.help {
        // pi 1.6.0 ends each command's help with an empty line.
        println!(
            "{}",
            match parsed.command {
                "install" => INSTALL_HELP,
                "remove" => REMOVE_HELP,
                "update" => UPDATE_HELP,
                _ => LIST_HELP,
            }
        );
        return Some(0);
    }
    if let Some(problem) = &parsed.problem {
        eprintln!("{problem}");
        eprintln!("Usage: {}", usage(parsed.command));
        return Some(1);
    }
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let roots = InstallRoots {
        cwd,
        agent_dir: crate::config::paths::agent_dir(),
    };
    let (trusted, warnings) = crate::trust::for_command(
        parsed.approve,
        parsed.command == "update",
        &roots.cwd,
        &roots.agent_dir,
    );
    for warning in warnings {
        eprintln!("Warning: {warning}");
    }
    if !trusted && parsed.local && matches!(parsed.command, "install" | "remove") {
        eprintln!("Project is not trusted. Use --approve to modify local package config.");
        return Some(1);
    }
    let manager = PackageManager::new(
        roots.clone(),
        settings::npm_command(&roots, trusted),
        Runner::default(),
    );
    let scope = if parsed.local {
        SourceScope::Project
    } else {
        SourceScope::User
    };
    Some(match parsed.command {
        "install" | "remove" => {
            let Some(source) = parsed.source.as_deref() else {
                eprintln!("Missing {} source.", parsed.command);
                eprintln!("Usage: {}", usage(parsed.command));
                return Some(1);
            };
            if parsed.command == "install" {
                install(&manager, source, scope)
            } else {
                remove(&manager, source, scope)
            }
        }
        "list" => list(&manager, trusted),
        _ => update(&manager, &parsed, trusted),
    })
}

fn install(manager: &PackageManager, source: &str, scope: SourceScope) -> i32 {
    println!("Installing {source}...");
    let result = manager
        .install(source, scope)
        .map_err(|e| e.to_string())
        .and_then(|()| settings::add(&manager.roots, source, scope).map_err(|e| e.to_string()));
    for warning in manager.take_warnings() {
        println!("{warning}");
    }
    match result {
        Ok(_) => {
            println!("Installed {source}");
            0
        }
        Err(e) => {
            eprintln!("Error: {e}");
            1
        }
    }
}

fn remove(manager: &PackageManager, source: &str, scope: SourceScope) -> i32 {
    println!("Removing {source}...");
    let wanted = settings::identity(&manager.roots, source, None);
    let configured = settings::read_scope(&manager.roots, scope)
        .into_iter()
        .find(|p| settings::identity(&manager.roots, &p.source, Some(scope)) == wanted);
    let Some(configured) = configured else {
        eprintln!("No matching package found for {source}");
        return 1;
    };
    let result = manager
        .remove(&configured.source, scope)
        .map_err(|e| e.to_string())
        .and_then(|()| settings::remove(&manager.roots, source, scope).map_err(|e| e.to_string()));
    match result {
        Ok(_) => {
            println!("Removed {source}");
            0
        }
        Err(e) => {
            eprintln!("Error: {e}");
            1
        }
    }
}

fn list(manager: &PackageManager, trusted: bool) -> i32 {
    let user = settings::read_scope(&manager.roots, SourceScope::User);
    let project = if trusted {
        settings::read_scope(&manager.roots, SourceScope::Project)
    } else {
        Vec::new()
    };
    if user.is_empty() && project.is_empty() {
        println!("No packages installed.");
        return 0;
    }
    let show = |package: &settings::ConfiguredPackage| {
        if package.filter.is_some() {
            println!("  {} (filtered)", package.source);
        } else {
            println!("  {}", package.source);
        }
        if let Some(path) = manager.installed_path(&package.source, package.scope) {
            println!("    {}", path.display());
        }
    };
    if !user.is_empty() {
        println!("User packages:");
        user.iter().for_each(show);
    }
    if !project.is_empty() {
        if !user.is_empty() {
            println!();
        }
        println!("Project packages:");
        project.iter().for_each(show);
    }
    0
}

fn update(manager: &PackageManager, parsed: &Parsed, trusted: bool) -> i32 {
    let only_models = parsed.models_flag
        && !(parsed.self_flag || parsed.extensions_flag || parsed.all_flag)
        && parsed.source.is_none()
        && parsed.extension.is_none();
    if only_models {
        // This build's catalog is compiled in and models.json is read at every start:
        // there is no downloaded catalog to fetch again.
        println!("Model catalogs refreshed");
        return 0;
    }
    let bare = !(parsed.self_flag || parsed.extensions_flag || parsed.all_flag)
        && parsed.source.is_none()
        && parsed.extension.is_none();
    if bare {
        // pi 0.79.7: a bare `pi update` updates pi only.
        println!("Extensions are skipped. Run pi update --extensions to update extensions.");
    }
    let positional_self = matches!(parsed.source.as_deref(), Some("self" | "pi"));
    let one = parsed
        .extension
        .clone()
        .or_else(|| parsed.source.clone().filter(|_| !positional_self));
    let packages = one.is_some() || parsed.extensions_flag || parsed.all_flag;
    let itself = one.is_none()
        && (parsed.all_flag || parsed.self_flag || positional_self || !parsed.extensions_flag);
    if packages {
        let configured = settings::configured(&manager.roots, trusted);
        let wanted = one
            .as_deref()
            .map(|s| settings::identity(&manager.roots, s, None));
        let targets: Vec<_> = configured
            .iter()
            .filter(|p| {
                wanted.as_ref().is_none_or(|w| {
                    // A bare npm name or git shorthand names the configured package too.
                    settings::identity(&manager.roots, &p.source, Some(p.scope)) == *w
                        || super::source::PackageSource::parse(&p.source).identity()
                            == format!("npm:{}", one.as_deref().unwrap_or_default())
                })
            })
            .collect();
        if let Some(source) = &one
            && targets.is_empty()
        {
            eprintln!("Error: No matching package found for {source}");
            return 1;
        }
        if super::manager::offline() {
            println!("Skipped package updates (offline mode)");
        } else {
            let mut warnings = 0;
            let changed = manager.update_packages(&targets, &mut |event| match event {
                UpdateEvent::Start(line) => println!("{line}"),
                UpdateEvent::Warning(line) => {
                    warnings += 1;
                    println!("{line}");
                }
            });
            let changed = match changed {
                Ok(changed) => changed,
                Err(e) => {
                    eprintln!("Error: {e}");
                    return 1;
                }
            };
            match (&one, changed.len(), warnings) {
                (Some(source), 0, 1..) => {
                    println!("{source} was not updated, see the warnings above");
                }
                (None, 0, 1..) => println!("No packages were updated, see the warnings above"),
                (Some(source), 0, _) => println!("{source} is already up to date"),
                (None, 0, _) => println!("Packages are already up to date"),
                (_, count, _) => {
                    let plural = if count == 1 { "" } else { "s" };
                    println!("Updated {count} package{plural}:");
                    for line in changed {
                        println!("  {line}");
                    }
                }
            }
        }
    }
    if itself {
        eprintln!("error: pi cannot self-update this installation.");
        eprintln!(
            "pi-rs is one binary: build the new version with `cargo install --path crates/coding-agent` (or your package manager) and replace it."
        );
        return 1;
    }
    0
}
