//! pi-rs's release notes (`CHANGELOG.md`, built into the binary) read as pi reads its own:
//! one entry per `## [x.y.z]` heading, for `/changelog` and the "What's New" shown once
//! after an update.

use std::cmp::Ordering;

/// The release notes shipped with this build.
pub const CHANGELOG: &str = include_str!("../CHANGELOG.md");

/// `major.minor.patch` as numbers.
pub type Version = (u64, u64, u64);

/// One release's notes: its version and its text from the heading on, trimmed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangelogEntry {
    pub version: Version,
    pub content: String,
}

impl ChangelogEntry {
    /// `major.minor.patch`.
    pub fn version_text(&self) -> String {
        let (a, b, c) = self.version;
        format!("{a}.{b}.{c}")
    }
}

/// The leading `major.minor.patch` of `text` after an optional `v` (a prerelease suffix is
/// ignored, as pi ignores it, so its notes are not shown again on every start).
pub fn parse_version(text: &str) -> Option<Version> {
    let text = text.trim();
    let text = text.strip_prefix('v').unwrap_or(text);
    let mut parts = text.splitn(3, '.');
    let number = |part: &str| -> Option<u64> {
        let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok()
    };
    let major = parts.next()?;
    let minor = parts.next()?;
    let patch = parts.next()?;
    // Major and minor must be whole numbers; the patch may be followed by `-pre`.
    if !major.chars().all(|c| c.is_ascii_digit()) || !minor.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    Some((number(major)?, number(minor)?, number(patch)?))
}

/// The version of a `## [x.y.z] …` heading (brackets optional), as pi's
/// `/##\s+\[?(\d+)\.(\d+)\.(\d+)\]?/` finds it.
fn heading_version(line: &str) -> Option<Version> {
    let rest = line.strip_prefix("##")?.trim_start();
    if rest.len() == line.len() - 2 {
        return None;
    }
    let rest = rest.strip_prefix('[').unwrap_or(rest);
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let numbers: Vec<&str> = rest[..end].split('.').collect();
    if numbers.len() < 3 || numbers[..3].iter().any(|n| n.is_empty()) {
        return None;
    }
    Some((
        numbers[0].parse().ok()?,
        numbers[1].parse().ok()?,
        numbers[2].parse().ok()?,
    ))
}

/// The entries of a changelog, in file order (newest first). A `## ` heading without a
/// version ends the entry before it and is skipped with its lines.
pub fn parse(text: &str) -> Vec<ChangelogEntry> {
    let mut entries = Vec::new();
    let mut current: Option<(Version, Vec<&str>)> = None;
    for line in text.split('\n') {
        if line.starts_with("## ") {
            if let Some((version, lines)) = current.take() {
                entries.push(entry(version, &lines));
            }
            current = heading_version(line).map(|v| (v, vec![line]));
        } else if let Some((_, lines)) = current.as_mut() {
            lines.push(line);
        }
    }
    if let Some((version, lines)) = current {
        entries.push(entry(version, &lines));
    }
    entries
}

fn entry(version: Version, lines: &[&str]) -> ChangelogEntry {
    ChangelogEntry {
        version,
        content: lines.join("\n").trim().to_owned(),
    }
}

/// The entries newer than `last` (a saved `lastChangelogVersion`), or `None` when `last`
/// holds no version to compare with.
pub fn new_entries(entries: &[ChangelogEntry], last: &str) -> Option<Vec<ChangelogEntry>> {
    let last = parse_version(last)?;
    Some(
        entries
            .iter()
            .filter(|e| e.version.cmp(&last) == Ordering::Greater)
            .cloned()
            .collect(),
    )
}

/// What `/changelog` shows: every entry, oldest first (the newest sits by the editor).
pub fn full_markdown(entries: &[ChangelogEntry]) -> String {
    if entries.is_empty() {
        return "No changelog entries found.".to_owned();
    }
    entries
        .iter()
        .rev()
        .map(|e| e.content.as_str())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// What the startup notes decide for a fresh session: the notes to show (if any) and
/// whether `lastChangelogVersion` is to be set to this build's version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartupNotes {
    pub markdown: Option<String>,
    pub record_version: bool,
}

/// pi's `getChangelogForDisplay`: nothing on a fresh install (the version is recorded),
/// the entries since `last` after an update, nothing when `last` is unreadable (recorded
/// again so later updates compare).
pub fn startup_notes(entries: &[ChangelogEntry], last: Option<&str>) -> StartupNotes {
    let Some(last) = last else {
        return StartupNotes {
            markdown: None,
            record_version: true,
        };
    };
    match new_entries(entries, last) {
        None => StartupNotes {
            markdown: None,
            record_version: true,
        },
        Some(new) if new.is_empty() => StartupNotes {
            markdown: None,
            record_version: false,
        },
        Some(new) => StartupNotes {
            markdown: Some(
                new.iter()
                    .map(|e| e.content.as_str())
                    .collect::<Vec<_>>()
                    .join("\n\n"),
            ),
            record_version: true,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "# Changelog\n\n## [Unreleased]\n\n- soon\n\n## [0.2.0] - 2026-01-02\n\n### Added\n\n- two\n\n## 0.1.10\n\n- ten\n\n## [0.1.5]\n- five\n";

    #[test]
    fn parses_versioned_headings_only() {
        let entries = parse(SAMPLE);
        let versions: Vec<String> = entries.iter().map(ChangelogEntry::version_text).collect();
        assert_eq!(versions, ["0.2.0", "0.1.10", "0.1.5"]);
        assert_eq!(
            entries[0].content,
            "## [0.2.0] - 2026-01-02\n\n### Added\n\n- two"
        );
        assert_eq!(entries[2].content, "## [0.1.5]\n- five");
    }

    #[test]
    fn new_entries_compare_numerically_and_ignore_prereleases() {
        let entries = parse(SAMPLE);
        let newer = |last| {
            new_entries(&entries, last).map(|v| v.iter().map(|e| e.version).collect::<Vec<_>>())
        };
        assert_eq!(newer("0.1.9"), Some(vec![(0, 2, 0), (0, 1, 10)]));
        assert_eq!(newer("v0.1.10-20261020.7"), Some(vec![(0, 2, 0)]));
        assert_eq!(newer("0.2.0"), Some(vec![]));
        assert_eq!(newer("latest"), None);
    }

    #[test]
    fn full_view_is_oldest_first() {
        let entries = parse(SAMPLE);
        let text = full_markdown(&entries);
        assert!(text.starts_with("## [0.1.5]"));
        assert!(text.ends_with("- two"));
        assert_eq!(full_markdown(&[]), "No changelog entries found.");
    }

    #[test]
    fn startup_notes_follow_the_saved_version() {
        let entries = parse(SAMPLE);
        assert_eq!(
            startup_notes(&entries, None),
            StartupNotes {
                markdown: None,
                record_version: true
            }
        );
        assert!(!startup_notes(&entries, Some("0.2.0")).record_version);
        let update = startup_notes(&entries, Some("0.1.10"));
        assert!(update.record_version);
        assert_eq!(
            update.markdown.as_deref(),
            Some("## [0.2.0] - 2026-01-02\n\n### Added\n\n- two")
        );
        assert!(startup_notes(&entries, Some("garbage")).record_version);
    }

    #[test]
    fn the_shipped_changelog_has_this_version() {
        let entries = parse(CHANGELOG);
        assert_eq!(
            entries.first().map(ChangelogEntry::version_text).as_deref(),
            Some(crate::PI_VERSION)
        );
    }
}
