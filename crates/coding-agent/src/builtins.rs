//! Which of pi 1.6.0's built-in extensions are on (`builtin:mcp`, `builtin:llama.cpp`).
//! They are on by default; the user's settings `extensions` turn one off with
//! `-builtin:<name>` (or a `!` pattern), a `+`, `-` or `!` entry of the project's settings
//! overrides that, `--no-extensions` turns them all off and `-e builtin:<name>` on again.

use std::path::Path;

/// The prefix of a built-in extension's path.
pub const PREFIX: &str = "builtin:";

/// The settings and command line that decide.
#[derive(Debug, Clone, Default)]
pub struct BuiltinSettings {
    /// `extensions` of the user's settings.
    pub user: Vec<String>,
    /// `extensions` of the project's settings (empty when the project is not trusted).
    pub project: Vec<String>,
    /// `-e` values.
    pub cli: Vec<String>,
    /// `--no-extensions`.
    pub no_extensions: bool,
}

/// Whether a settings or `-e` entry names a built-in extension (then it is no path).
pub fn is_builtin_entry(entry: &str) -> bool {
    entry
        .trim_start_matches(['+', '-', '!'])
        .starts_with(PREFIX)
}

/// Whether `pattern` (without its sign) matches `path`: exactly, or as a glob for `!`.
fn matches(path: &str, pattern: &str, glob: bool) -> bool {
    if pattern == path {
        return true;
    }
    glob && globset::Glob::new(pattern).is_ok_and(|g| g.compile_matcher().is_match(path))
}

/// The user's setting: on unless excluded by `!pattern`; `+path` turns it on again, and
/// `-path` off whatever else says.
fn user_enabled(path: &str, entries: &[String]) -> bool {
    let signed = |sign: char| {
        entries
            .iter()
            .filter_map(move |e| e.strip_prefix(sign))
            .collect::<Vec<_>>()
    };
    let mut enabled = !signed('!').iter().any(|p| matches(path, p, true));
    if signed('+').iter().any(|p| matches(path, p, false)) {
        enabled = true;
    }
    if signed('-').iter().any(|p| matches(path, p, false)) {
        enabled = false;
    }
    enabled
}

/// The project's setting, if one of its entries speaks of `path`: the last one that does.
fn project_override(path: &str, entries: &[String]) -> Option<bool> {
    entries.iter().rev().find_map(|entry| {
        let (sign, pattern) = entry.split_at(entry.chars().next()?.len_utf8());
        match sign {
            "+" if matches(path, pattern, false) => Some(true),
            "-" if matches(path, pattern, false) => Some(false),
            "!" if matches(path, pattern, true) => Some(false),
            _ => None,
        }
    })
}

impl BuiltinSettings {
    /// Reads the `extensions` lists of both settings files; the project's only when
    /// `project_trusted`.
    pub fn load(
        user_settings: &Path,
        project_settings: &Path,
        project_trusted: bool,
        cli: &[String],
        no_extensions: bool,
    ) -> Self {
        let read = |path: &Path| -> Vec<String> {
            crate::text_file::read_text(path)
                .ok()
                .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                .and_then(|v| v.get("extensions")?.as_array().cloned())
                .map(|list| {
                    list.iter()
                        .filter_map(|e| e.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default()
        };
        BuiltinSettings {
            user: read(user_settings),
            project: if project_trusted {
                read(project_settings)
            } else {
                Vec::new()
            },
            cli: cli.to_vec(),
            no_extensions,
        }
    }

    /// Whether the built-in extension `name` is on.
    pub fn enabled(&self, name: &str) -> bool {
        let path = format!("{PREFIX}{name}");
        if self.cli.contains(&path) {
            return true;
        }
        if self.no_extensions {
            return false;
        }
        project_override(&path, &self.project).unwrap_or_else(|| user_enabled(&path, &self.user))
    }

    /// Whether the built-in MCP extension runs: on in the settings, and not replaced by an
    /// extension that registers `/mcp` itself (pi 0.99.0), which is warned about on stderr.
    pub fn mcp_enabled(&self, extensions: &[crate::extensions::LoadedExtension]) -> bool {
        if !self.enabled("mcp") {
            return false;
        }
        let replacement = extensions
            .iter()
            .find(|e| e.commands.iter().any(|c| c.name == "mcp"));
        if let Some(extension) = replacement {
            eprintln!(
                "Warning: Extension package \"builtin:mcp\": Extension {} registers command `/mcp`, so built-in extension `mcp` was not loaded. To use `mcp`, run `pi config` and make sure it is enabled under Built-in extensions, then disable or remove the existing extension. We recommend only having one or the other loaded at a time.",
                extension.path
            );
        }
        replacement.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(user: &[&str], project: &[&str], cli: &[&str], no: bool) -> BuiltinSettings {
        let list = |l: &[&str]| l.iter().map(|s| (*s).to_owned()).collect();
        BuiltinSettings {
            user: list(user),
            project: list(project),
            cli: list(cli),
            no_extensions: no,
        }
    }

    #[test]
    fn on_by_default_and_off_by_setting() {
        assert!(settings(&[], &[], &[], false).enabled("llama.cpp"));
        let off = settings(&["-builtin:llama.cpp"], &[], &[], false);
        assert!(!off.enabled("llama.cpp"));
        assert!(off.enabled("mcp"));
        assert!(!settings(&["!builtin:*"], &[], &[], false).enabled("mcp"));
        assert!(settings(&["!builtin:*", "+builtin:mcp"], &[], &[], false).enabled("mcp"));
    }

    #[test]
    fn the_project_overrides_the_user() {
        let s = settings(&["-builtin:llama.cpp"], &["+builtin:llama.cpp"], &[], false);
        assert!(s.enabled("llama.cpp"));
        let s = settings(&[], &["-builtin:mcp", "./ext.ts"], &[], false);
        assert!(!s.enabled("mcp"));
        assert!(s.enabled("llama.cpp"));
    }

    #[test]
    fn no_extensions_and_explicit_ones() {
        assert!(!settings(&[], &[], &[], true).enabled("mcp"));
        assert!(settings(&[], &[], &["builtin:mcp"], true).enabled("mcp"));
        assert!(!settings(&[], &[], &["builtin:mcp"], true).enabled("llama.cpp"));
    }

    #[test]
    fn builtin_entries_are_no_paths() {
        assert!(is_builtin_entry("-builtin:llama.cpp"));
        assert!(is_builtin_entry("builtin:mcp"));
        assert!(is_builtin_entry("!builtin:*"));
        assert!(!is_builtin_entry("./builtin.ts"));
    }
}
