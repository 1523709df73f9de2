//! The loaded-resources listing under the startup header (pi 1.6's
//! `showLoadedResources`): `[Context]`, `[Skills]`, `[Prompts]` and `[Extensions]`, each a
//! compact line of names that Ctrl+O expands to paths grouped by scope. Shown only with
//! `quietStartup: false` (the default).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::App;
use crate::modes::interactive::components::shorten_path;
use crate::modes::interactive::theme::{Theme, ThemeColor};
use crate::modes::system_prompt::discover_prompt_file;
use crate::resources::{SourceInfo, SourceScope};

/// One resource: its file and where it came from.
struct Entry {
    path: PathBuf,
    source: String,
    scope: Option<SourceScope>,
}

impl Entry {
    fn of(path: &Path, info: &SourceInfo) -> Self {
        Entry {
            path: path.to_path_buf(),
            source: info.source.clone(),
            scope: Some(info.scope),
        }
    }

    fn is_package(&self) -> bool {
        self.source.starts_with("npm:") || self.source.starts_with("git:")
    }

    /// `user`, `project` or `path` (command-line and temporary resources).
    fn group(&self) -> &'static str {
        match (self.source.as_str(), self.scope) {
            ("cli", _) | (_, Some(SourceScope::Temporary)) => "path",
            (_, Some(SourceScope::User)) => "user",
            _ => "project",
        }
    }
}

/// A section: its compact and its expanded body.
struct Section {
    name: &'static str,
    compact: String,
    expanded: Vec<String>,
}

/// The names on one dim line, two spaces in (sorted unless `keep_order`).
fn compact_list(theme: &Theme, mut labels: Vec<String>, keep_order: bool) -> String {
    labels.retain(|l| !l.trim().is_empty());
    if !keep_order {
        labels.sort();
    }
    theme
        .fg(ThemeColor::Dim)
        .paint(&format!("  {}", labels.join(", ")))
}

/// Paths grouped by scope (project, user, path), packages under their source.
fn scope_groups(theme: &Theme, entries: &[Entry], label: &dyn Fn(&Entry) -> String) -> Vec<String> {
    let mut lines = Vec::new();
    for group in ["project", "user", "path"] {
        let members: Vec<&Entry> = entries.iter().filter(|e| e.group() == group).collect();
        if members.is_empty() {
            continue;
        }
        lines.push(format!("  {}", theme.fg(ThemeColor::Accent).paint(group)));
        let mut paths: Vec<&&Entry> = members.iter().filter(|e| !e.is_package()).collect();
        paths.sort_by(|a, b| a.path.cmp(&b.path));
        for entry in paths {
            lines.push(
                theme
                    .fg(ThemeColor::Dim)
                    .paint(&format!("    {}", label(entry))),
            );
        }
        let mut packages: BTreeMap<&str, Vec<&Entry>> = BTreeMap::new();
        for entry in members.iter().filter(|e| e.is_package()) {
            packages
                .entry(entry.source.as_str())
                .or_default()
                .push(entry);
        }
        for (source, mut items) in packages {
            lines.push(format!(
                "    {}",
                theme.fg(ThemeColor::MdLink).paint(source)
            ));
            items.sort_by(|a, b| a.path.cmp(&b.path));
            for entry in items {
                lines.push(
                    theme
                        .fg(ThemeColor::Dim)
                        .paint(&format!("      {}", label(entry))),
                );
            }
        }
    }
    lines
}

/// A context file as the compact list names it: relative to the cwd when inside it.
fn context_label(path: &Path, cwd: &Path) -> String {
    match path.strip_prefix(cwd) {
        Ok(relative) if !relative.as_os_str().is_empty() => relative.display().to_string(),
        _ => shorten_path(&path.display().to_string()),
    }
}

/// Path segments as shown (home as `~`, which is left out), without a trailing
/// `index.ts`/`index.js`.
fn display_segments(path: &str) -> Vec<String> {
    let mut segments: Vec<String> = shorten_path(path)
        .split('/')
        .filter(|s| !s.is_empty() && *s != "~")
        .map(str::to_owned)
        .collect();
    if segments.len() > 1
        && segments
            .last()
            .is_some_and(|s| s == "index.ts" || s == "index.js")
    {
        segments.pop();
    }
    segments
}

/// An extension's compact label: the shortest tail of its path that no other extension
/// shares (a package's: its source, with the file inside it unless it is `index`).
fn extension_labels(entries: &[Entry]) -> Vec<String> {
    let segments: Vec<Vec<String>> = entries
        .iter()
        .map(|e| display_segments(&e.path.display().to_string()))
        .collect();
    entries
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            if entry.is_package() {
                let source = entry
                    .source
                    .strip_prefix("npm:")
                    .unwrap_or(&entry.source)
                    .to_owned();
                return source;
            }
            let own = &segments[i];
            for count in 1..=own.len() {
                let tail = own[own.len() - count..].join("/");
                let unique = entries.iter().enumerate().all(|(j, other)| {
                    j == i
                        || other.is_package()
                        || segments[j][segments[j].len().saturating_sub(count)..].join("/") != tail
                });
                if unique {
                    return tail;
                }
            }
            own.join("/")
        })
        .collect()
}

impl App {
    /// The listing's compact and expanded lines (empty when nothing is loaded).
    pub(super) fn loaded_resources_lines(&self) -> (Vec<String>, Vec<String>) {
        let theme = &self.theme;
        let cwd = self.session.cwd().to_path_buf();
        let mut sections = Vec::new();

        let mut context: Vec<PathBuf> = Vec::new();
        let trusted = self.project_trusted;
        for name in ["SYSTEM.md", "APPEND_SYSTEM.md"] {
            if let Some(path) = discover_prompt_file(&self.agent_dir, &cwd, name, trusted) {
                context.push(path);
            }
        }
        context.extend(self.session.context_file_paths());
        if !context.is_empty() {
            sections.push(Section {
                name: "Context",
                compact: compact_list(
                    theme,
                    context.iter().map(|p| context_label(p, &cwd)).collect(),
                    true,
                ),
                expanded: context
                    .iter()
                    .map(|p| {
                        theme
                            .fg(ThemeColor::Dim)
                            .paint(&format!("  {}", shorten_path(&p.display().to_string())))
                    })
                    .collect(),
            });
        }

        let skills = self.session.skills();
        if !skills.is_empty() {
            let entries: Vec<Entry> = skills
                .iter()
                .map(|s| Entry::of(&s.file_path, &s.source_info))
                .collect();
            sections.push(Section {
                name: "Skills",
                compact: compact_list(
                    theme,
                    skills.iter().map(|s| s.name.clone()).collect(),
                    false,
                ),
                expanded: scope_groups(theme, &entries, &|e| {
                    shorten_path(&e.path.display().to_string())
                }),
            });
        }

        let templates = self.session.prompt_templates();
        if !templates.is_empty() {
            let entries: Vec<Entry> = templates
                .iter()
                .map(|t| Entry::of(&t.file_path, &t.source_info))
                .collect();
            let by_path: BTreeMap<PathBuf, String> = templates
                .iter()
                .map(|t| (t.file_path.clone(), format!("/{}", t.name)))
                .collect();
            sections.push(Section {
                name: "Prompts",
                compact: compact_list(
                    theme,
                    templates.iter().map(|t| format!("/{}", t.name)).collect(),
                    false,
                ),
                expanded: scope_groups(theme, &entries, &|e| {
                    by_path
                        .get(&e.path)
                        .cloned()
                        .unwrap_or_else(|| shorten_path(&e.path.display().to_string()))
                }),
            });
        }

        let extensions: Vec<Entry> = self
            .session
            .extension_runtime()
            .extensions()
            .iter()
            .filter(|e| !e.source_info["hidden"].as_bool().unwrap_or(false))
            .filter(|e| !e.path.starts_with("builtin:") && !e.path.starts_with('<'))
            .map(|e| Entry {
                path: PathBuf::from(&e.path),
                source: e.source_info["source"]
                    .as_str()
                    .unwrap_or("local")
                    .to_owned(),
                scope: match e.source_info["scope"].as_str() {
                    Some("user") => Some(SourceScope::User),
                    Some("temporary") => Some(SourceScope::Temporary),
                    Some("project") => Some(SourceScope::Project),
                    _ => None,
                },
            })
            .collect();
        if !extensions.is_empty() {
            sections.push(Section {
                name: "Extensions",
                compact: compact_list(theme, extension_labels(&extensions), false),
                expanded: scope_groups(theme, &extensions, &|e| {
                    let shown = shorten_path(&e.path.display().to_string());
                    shown
                        .strip_suffix("/index.ts")
                        .or_else(|| shown.strip_suffix("/index.js"))
                        .unwrap_or(&shown)
                        .to_owned()
                }),
            });
        }

        if sections.is_empty() {
            return (Vec::new(), Vec::new());
        }
        let build = |expanded: bool| {
            let mut lines = Vec::new();
            for section in &sections {
                if section.name == "Context" {
                    lines.push(String::new());
                }
                lines.push(
                    theme
                        .fg(ThemeColor::MdHeading)
                        .paint(&format!("[{}]", section.name)),
                );
                if expanded {
                    lines.extend(section.expanded.iter().cloned());
                } else {
                    lines.push(section.compact.clone());
                }
                lines.push(String::new());
            }
            lines
        };
        (build(false), build(true))
    }

    /// Adds the listing under the header when startup details are shown.
    pub(super) fn show_loaded_resources(&mut self, details: bool) {
        if !details {
            return;
        }
        let (compact, expanded) = self.loaded_resources_lines();
        if compact.is_empty() {
            return;
        }
        self.chat.add_resources(compact, expanded);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(path: &str, source: &str) -> Entry {
        Entry {
            path: PathBuf::from(path),
            source: source.to_owned(),
            scope: Some(SourceScope::Project),
        }
    }

    #[test]
    fn extension_labels_are_the_shortest_unique_tails() {
        let entries = [
            entry("/p/a/tools/index.ts", "local"),
            entry("/p/b/tools/index.ts", "local"),
            entry("/p/c/greet.ts", "local"),
            entry("/n/node_modules/pkg/index.ts", "npm:pkg"),
        ];
        assert_eq!(
            extension_labels(&entries),
            ["a/tools", "b/tools", "greet.ts", "pkg"]
        );
    }

    #[test]
    fn context_files_inside_the_cwd_are_relative() {
        let cwd = Path::new("/w/proj");
        assert_eq!(
            context_label(Path::new("/w/proj/AGENTS.md"), cwd),
            "AGENTS.md"
        );
        assert_eq!(
            context_label(Path::new("/w/AGENTS.md"), cwd),
            "/w/AGENTS.md"
        );
    }
}
