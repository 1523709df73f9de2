//! Settings patterns that switch discovered files off and on: `!glob` excludes, `+path`
//! forces in, `-path` forces out, and a plain glob keeps only the files it matches.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::paths::{posix, relative};

pub(super) fn is_pattern(s: &str) -> bool {
    s.starts_with('!')
        || s.starts_with('+')
        || s.starts_with('-')
        || s.contains('*')
        || s.contains('?')
}

fn glob_match(pattern: &str, candidate: &str) -> bool {
    globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher().is_match(candidate))
        .unwrap_or(false)
}

/// The forms of a file a pattern is matched against: relative to `base`, its name, its
/// absolute path, and for a `SKILL.md` the same three of its directory.
fn match_forms(file: &Path, base: &Path) -> Vec<String> {
    let mut forms = vec![
        relative(base, file),
        file.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        posix(file),
    ];
    if file.file_name().is_some_and(|n| n == "SKILL.md")
        && let Some(parent) = file.parent()
    {
        forms.push(relative(base, parent));
        forms.push(
            parent
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        );
        forms.push(posix(parent));
    }
    forms
}

fn matches_any_pattern(file: &Path, patterns: &[&str], base: &Path) -> bool {
    let forms = match_forms(file, base);
    patterns.iter().any(|p| {
        let p = p.replace('\\', "/");
        forms.iter().any(|f| glob_match(&p, f))
    })
}

fn matches_any_exact_pattern(file: &Path, patterns: &[&str], base: &Path) -> bool {
    if patterns.is_empty() {
        return false;
    }
    let forms = match_forms(file, base);
    // The file name alone does not count for exact matches.
    let exact: Vec<&String> = forms
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 1 && *i != 4)
        .map(|(_, f)| f)
        .collect();
    patterns.iter().any(|p| {
        let p = p
            .strip_prefix("./")
            .or_else(|| p.strip_prefix(".\\"))
            .unwrap_or(p)
            .replace('\\', "/");
        exact.iter().any(|f| **f == p)
    })
}

/// A pattern with a leading `~` made the home directory (pi 1.2: `!~/x`, `+~/x`, `-~/x`).
fn with_home(pattern: &str) -> String {
    if !pattern.trim_start().starts_with('~') {
        return pattern.to_owned();
    }
    match std::env::var_os("HOME") {
        Some(home) => posix(&super::paths::expand_home(pattern, Path::new(&home))),
        None => pattern.to_owned(),
    }
}

/// The patterns after `prefix`, in `entries`, their `~` expanded.
fn prefixed(entries: &[&str], prefix: char) -> Vec<String> {
    entries
        .iter()
        .filter_map(|e| e.strip_prefix(prefix))
        .map(with_home)
        .collect()
}

fn refs(patterns: &[String]) -> Vec<&str> {
    patterns.iter().map(String::as_str).collect()
}

/// The files of `all` that settings `patterns` leave enabled.
pub(crate) fn apply_patterns(all: &[PathBuf], patterns: &[&str], base: &Path) -> HashSet<PathBuf> {
    let includes: Vec<&str> = patterns
        .iter()
        .copied()
        .filter(|p| !p.starts_with(['+', '-', '!']))
        .collect();
    let (excludes, force_in, force_out) = (
        prefixed(patterns, '!'),
        prefixed(patterns, '+'),
        prefixed(patterns, '-'),
    );
    let (excludes, force_in, force_out) = (refs(&excludes), refs(&force_in), refs(&force_out));
    let mut result: Vec<&PathBuf> = if includes.is_empty() {
        all.iter().collect()
    } else {
        all.iter()
            .filter(|f| matches_any_pattern(f, &includes, base))
            .collect()
    };
    if !excludes.is_empty() {
        result.retain(|f| !matches_any_pattern(f, &excludes, base));
    }
    for f in all {
        if !force_in.is_empty()
            && !result.contains(&f)
            && matches_any_exact_pattern(f, &force_in, base)
        {
            result.push(f);
        }
    }
    if !force_out.is_empty() {
        result.retain(|f| !matches_any_exact_pattern(f, &force_out, base));
    }
    result.into_iter().cloned().collect()
}

/// Whether the override patterns (`!`, `+`, `-`) among settings `entries` leave an
/// auto-discovered `file` enabled.
pub(super) fn is_enabled_by_overrides(file: &Path, entries: &[String], base: &Path) -> bool {
    let entries: Vec<&str> = entries.iter().map(String::as_str).collect();
    let (excludes, force_in, force_out) = (
        prefixed(&entries, '!'),
        prefixed(&entries, '+'),
        prefixed(&entries, '-'),
    );
    let (excludes, force_in, force_out) = (refs(&excludes), refs(&force_in), refs(&force_out));
    let mut enabled = true;
    if !excludes.is_empty() && matches_any_pattern(file, &excludes, base) {
        enabled = false;
    }
    if matches_any_exact_pattern(file, &force_in, base) {
        enabled = true;
    }
    if matches_any_exact_pattern(file, &force_out, base) {
        enabled = false;
    }
    enabled
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_patterns() {
        let base = Path::new("/p/.pi");
        let files = vec![
            PathBuf::from("/p/.pi/skills/a/SKILL.md"),
            PathBuf::from("/p/.pi/skills/b/SKILL.md"),
            PathBuf::from("/p/.pi/skills/c.md"),
        ];
        let on = apply_patterns(&files, &["skills/*/SKILL.md"], base);
        assert_eq!(on.len(), 2);
        let on = apply_patterns(&files, &["!a", "+skills/a"], base);
        assert_eq!(on.len(), 3);
        let on = apply_patterns(&files, &["!c.md", "-skills/b"], base);
        assert_eq!(on.len(), 1);
        assert!(on.contains(Path::new("/p/.pi/skills/a/SKILL.md")));
        assert!(!is_enabled_by_overrides(&files[0], &["!a".into()], base));
        assert!(is_enabled_by_overrides(
            &files[0],
            &["!a".into(), "+skills/a".into()],
            base
        ));
        assert!(is_enabled_by_overrides(&files[0], &["a*".into()], base));
        assert!(apply_patterns(&files, &["!*.md"], base).is_empty());
    }
}
