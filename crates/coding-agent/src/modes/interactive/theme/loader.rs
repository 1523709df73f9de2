//! Finding theme files and picking the configured theme.

use std::path::{Path, PathBuf};

use pi_tui::style::ColorMode;

use super::{Theme, ThemeError, parse_theme_json};
use crate::config::paths::expand_tilde;

/// The built-in theme names (the generated `system` theme first, as pi 1.6 lists it).
const BUILTINS: [&str; 3] = [super::system::SYSTEM_THEME_NAME, "dark", "light"];

/// Read, parse and resolve one theme file.
pub fn load_theme_from_path(path: &Path, mode: ColorMode) -> Result<Theme, ThemeError> {
    let label = path.display().to_string();
    let text = crate::text_file::read_text(path).map_err(|e| ThemeError::Read {
        label: label.clone(),
        message: e.to_string(),
    })?;
    let json = parse_theme_json(&label, &text)?;
    Theme::from_json(&json, &label, mode, Some(path.to_path_buf()))
}

/// `dark` or `light` from a `COLORFGBG` value (its last field the background), as pi 1.6
/// reads it; `dark` when it says nothing.
pub fn theme_name_for_background(colorfgbg: Option<&str>) -> &'static str {
    match super::system::colorfgbg_appearance(colorfgbg) {
        Some(super::system::Appearance::Light) => "light",
        _ => "dark",
    }
}

/// `light` or `dark`: the terminal's appearance (its reported background, else
/// `COLORFGBG`), which picks the half of an automatic `light/dark` theme setting.
pub fn terminal_theme_name() -> &'static str {
    match super::system::terminal_appearance_now() {
        super::system::Appearance::Light => "light",
        super::system::Appearance::Dark => "dark",
    }
}

/// pi 1.6's automatic theme setting `light/dark`: the theme for each terminal appearance.
pub fn parse_auto_theme(setting: &str) -> Option<(&str, &str)> {
    let (light, dark) = setting.split_once('/')?;
    let (light, dark) = (light.trim(), dark.trim());
    (!dark.contains('/') && !light.is_empty() && !dark.is_empty()).then_some((light, dark))
}

/// The theme used when settings name none: pi 1.6's `system` theme, made from the
/// terminal's own colors.
pub fn default_theme_name() -> &'static str {
    super::system::SYSTEM_THEME_NAME
}

/// The `.json` files of a directory, sorted; a missing directory has none.
fn json_files_in(dir: &Path, warnings: &mut Vec<String>) -> Vec<PathBuf> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => {
            warnings.push(format!("theme directory {}: {e}", dir.display()));
            return Vec::new();
        }
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json") && p.is_file())
        .collect();
    files.sort();
    files
}

/// Where custom themes come from besides the agent dir and the project.
#[derive(Debug, Clone, Default)]
pub struct ThemeSources {
    /// The settings' `themes` entries (files or folders).
    pub settings: Vec<String>,
    /// `--theme <path>` (repeatable): loaded even with `--no-themes`.
    pub cli: Vec<String>,
    /// `--no-themes`: no discovery (`<agentDir>/themes`, `.pi/themes`, settings, packages).
    pub no_discovery: bool,
    /// Theme files of installed packages (after the settings entries).
    pub packages: Vec<PathBuf>,
    /// The project is not trusted: `.pi/themes` is skipped (pi 1.6.0).
    pub skip_project: bool,
}

/// Theme files: `<agentDir>/themes`, `<cwd>/.pi/themes`, the settings `themes` entries,
/// the packages' themes, then `--theme` paths.
fn theme_files(
    agent_dir: &Path,
    cwd: &Path,
    sources: &ThemeSources,
    warnings: &mut Vec<String>,
) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut entries: Vec<&String> = Vec::new();
    if !sources.no_discovery {
        files.extend(json_files_in(&agent_dir.join("themes"), warnings));
        if !sources.skip_project {
            files.extend(json_files_in(&cwd.join(".pi").join("themes"), warnings));
        }
        entries.extend(&sources.settings);
    }

    for entry in entries {
        push_entry(cwd, entry, &mut files, warnings);
    }
    if !sources.no_discovery {
        files.extend(sources.packages.iter().filter(|p| p.is_file()).cloned());
    }
    for entry in &sources.cli {
        push_entry(cwd, entry, &mut files, warnings);
    }
    let mut seen = std::collections::HashSet::new();
    files.retain(|f| seen.insert(f.clone()));
    files
}

/// A settings or `--theme` entry: a `.json` file or a folder of them.
fn push_entry(cwd: &Path, entry: &str, files: &mut Vec<PathBuf>, warnings: &mut Vec<String>) {
    let path = cwd.join(expand_tilde(entry));
    if path.is_dir() {
        files.extend(json_files_in(&path, warnings));
    } else if path.is_file() && path.extension().is_some_and(|e| e == "json") {
        files.push(path);
    } else if path.exists() {
        warnings.push(format!("theme path {} is not a .json file", path.display()));
    } else {
        warnings.push(format!("theme path {} does not exist", path.display()));
    }
}

/// Every custom theme file with its load result.
fn load_custom(
    agent_dir: &Path,
    cwd: &Path,
    sources: &ThemeSources,
    mode: ColorMode,
    warnings: &mut Vec<String>,
) -> Vec<(PathBuf, Result<Theme, ThemeError>)> {
    theme_files(agent_dir, cwd, sources, warnings)
        .into_iter()
        .map(|path| {
            let result = load_theme_from_path(&path, mode);
            (path, result)
        })
        .collect()
}

/// Load the theme `name` (default: by terminal background), in the detected color mode.
///
/// Never fails: problems become warnings and the dark theme is used instead.
pub fn load_theme(
    name: Option<&str>,
    agent_dir: &Path,
    cwd: &Path,
    sources: &ThemeSources,
) -> (Theme, Vec<String>) {
    load_theme_with_mode(name, agent_dir, cwd, sources, ColorMode::detect())
}

/// [`load_theme`] with an explicit color mode.
pub fn load_theme_with_mode(
    name: Option<&str>,
    agent_dir: &Path,
    cwd: &Path,
    sources: &ThemeSources,
    mode: ColorMode,
) -> (Theme, Vec<String>) {
    let wanted: &str = match name.map(|n| (n, parse_auto_theme(n))) {
        Some((_, Some((light, dark)))) => {
            if terminal_theme_name() == "light" {
                light
            } else {
                dark
            }
        }
        Some((n, None)) => n,
        None => default_theme_name(),
    };
    let mut warnings = Vec::new();
    let custom = load_custom(agent_dir, cwd, sources, mode, &mut warnings);
    for (_, result) in &custom {
        if let Err(e) = result {
            warnings.push(e.to_string());
        }
    }

    // The system theme's name is reserved; otherwise a custom theme's `name` wins (as in
    // the TS pi), then the built-ins, then a file stem.
    if wanted == super::system::SYSTEM_THEME_NAME {
        return (Theme::system(mode), warnings);
    }
    let by_name = custom
        .iter()
        .find_map(|(_, r)| r.as_ref().ok().filter(|t| t.name() == wanted));
    if let Some(theme) = by_name {
        return (theme.clone(), warnings);
    }
    if let Some(theme) = Theme::builtin(wanted, mode) {
        return (theme, warnings);
    }
    let by_stem = custom
        .iter()
        .find(|(path, _)| path.file_stem().is_some_and(|s| s == wanted));
    match by_stem {
        Some((_, Ok(theme))) => return (theme.clone(), warnings),
        Some((path, Err(_))) => warnings.push(format!(
            "theme \"{wanted}\" ({}) could not be loaded; using \"dark\"",
            path.display()
        )),
        None => warnings.push(format!("theme \"{wanted}\" not found; using \"dark\"")),
    }
    (Theme::dark(mode), warnings)
}

/// The theme pi 1.6.0 sets up outside interactive mode (print, json, rpc), which its
/// extensions see as `ctx.ui.theme`: the settings' `theme` (an automatic `light/dark`
/// setting, `--use-theme` and the themes extensions register count only in interactive
/// mode), else `system`, and `system` again when the named theme does not load. No
/// terminal is asked for its colors there, so `system` is the palette fallback (ANSI
/// indices, faint neutrals); a named theme is painted in the color mode of the
/// environment (`COLORTERM`, known terminals, `PI_TRUE_COLOR`).
pub fn non_interactive_theme(agent_dir: &Path, cwd: &Path, project_trusted: bool) -> Theme {
    let settings = crate::config::settings_store::SettingsStore::load_for_trust(
        &crate::config::paths::settings_path(agent_dir),
        &crate::config::paths::project_settings_path(cwd),
        project_trusted,
    )
    .get();
    let mode = ColorMode::detect();
    let wanted = settings.theme.as_deref().filter(|name| !name.contains('/'));
    match wanted {
        Some(name) if name != super::system::SYSTEM_THEME_NAME => {
            let sources = ThemeSources {
                settings: settings.themes.clone().unwrap_or_default(),
                skip_project: !project_trusted,
                ..Default::default()
            };
            let (theme, warnings) =
                load_theme_with_mode(Some(name), agent_dir, cwd, &sources, mode);
            if warnings.iter().any(|w| w.ends_with("using \"dark\"")) {
                Theme::system(mode)
            } else {
                theme
            }
        }
        _ => Theme::system(mode),
    }
}

/// The names of the built-in themes and every loadable custom theme, sorted, with the
/// `system` theme first (it is the default and adapts to every terminal).
pub fn available_themes(agent_dir: &Path, cwd: &Path, sources: &ThemeSources) -> Vec<String> {
    let mut warnings = Vec::new();
    let mut names: Vec<String> = BUILTINS.iter().map(|s| (*s).to_string()).collect();
    for (_, result) in load_custom(agent_dir, cwd, sources, ColorMode::TrueColor, &mut warnings) {
        if let Ok(theme) = result {
            names.push(theme.name().to_string());
        }
    }
    names.sort();
    names.dedup();
    names.sort_by_key(|n| n != super::system::SYSTEM_THEME_NAME);
    names
}
