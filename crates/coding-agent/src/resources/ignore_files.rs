//! `.gitignore`, `.ignore` and `.fdignore` files met while walking resource directories,
//! each directory's rules prefixed with its path relative to the walk's root.

use std::path::{Path, PathBuf};

use super::paths::relative;

const IGNORE_FILE_NAMES: [&str; 3] = [".gitignore", ".ignore", ".fdignore"];

/// The ignore rules met while walking down from a root: each directory's rules are added
/// with that directory's path (relative to the root) as a prefix.
pub(crate) struct IgnoreRules {
    root: PathBuf,
    lines: Vec<String>,
    matcher: Option<ignore::gitignore::Gitignore>,
}

fn prefix_ignore_pattern(line: &str, prefix: &str) -> Option<String> {
    let trimmed = line.trim();
    if trimmed.is_empty() || (trimmed.starts_with('#') && !trimmed.starts_with("\\#")) {
        return None;
    }
    let mut pattern = line;
    let mut negated = false;
    if let Some(rest) = pattern.strip_prefix('!') {
        negated = true;
        pattern = rest;
    } else if pattern.starts_with("\\!") {
        pattern = &pattern[1..];
    }
    let pattern = pattern.strip_prefix('/').unwrap_or(pattern);
    let prefixed = format!("{prefix}{pattern}");
    Some(if negated {
        format!("!{prefixed}")
    } else {
        prefixed
    })
}

impl IgnoreRules {
    pub(crate) fn new(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
            lines: Vec::new(),
            matcher: None,
        }
    }

    /// Adds the ignore files of `dir`.
    pub(crate) fn add_dir(&mut self, dir: &Path) {
        let rel = relative(&self.root, dir);
        let prefix = if rel.is_empty() {
            String::new()
        } else {
            format!("{rel}/")
        };
        let before = self.lines.len();
        for name in IGNORE_FILE_NAMES {
            let Ok(content) = std::fs::read_to_string(dir.join(name)) else {
                continue;
            };
            for line in content.split('\n') {
                let line = line.strip_suffix('\r').unwrap_or(line);
                if let Some(pattern) = prefix_ignore_pattern(line, &prefix) {
                    self.lines.push(pattern);
                }
            }
        }
        if self.lines.len() != before {
            let mut builder = ignore::gitignore::GitignoreBuilder::new(".");
            for line in &self.lines {
                // A line that is not a valid glob is skipped, not fatal.
                let _ = builder.add_line(None, line);
            }
            self.matcher = builder.build().ok();
        }
    }

    /// Whether `path` (under the root) or one of its parent directories is ignored.
    pub(crate) fn ignores(&self, path: &Path, is_dir: bool) -> bool {
        let Some(matcher) = &self.matcher else {
            return false;
        };
        let rel = PathBuf::from(relative(&self.root, path));
        let mut current: &Path = &rel;
        let mut dir = is_dir;
        loop {
            match matcher.matched(current, dir) {
                ignore::Match::Ignore(_) => return true,
                ignore::Match::Whitelist(_) => return false,
                ignore::Match::None => {}
            }
            match current.parent() {
                Some(parent) if !parent.as_os_str().is_empty() => {
                    current = parent;
                    dir = true;
                }
                _ => return false,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ignore_patterns_are_prefixed_per_directory() {
        assert_eq!(
            prefix_ignore_pattern("/foo", "sub/"),
            Some("sub/foo".into())
        );
        assert_eq!(
            prefix_ignore_pattern("!bar", "sub/"),
            Some("!sub/bar".into())
        );
        assert_eq!(prefix_ignore_pattern("\\!baz", ""), Some("!baz".into()));
        assert_eq!(prefix_ignore_pattern("# c", ""), None);
        assert_eq!(prefix_ignore_pattern("   ", ""), None);

        let root = tempfile::tempdir().unwrap();
        let sub = root.path().join("sub");
        std::fs::create_dir_all(sub.join("drafts")).unwrap();
        std::fs::write(root.path().join(".gitignore"), "*.tmp\n").unwrap();
        std::fs::write(sub.join(".ignore"), "drafts/\n").unwrap();
        let mut rules = IgnoreRules::new(root.path());
        rules.add_dir(root.path());
        rules.add_dir(&sub);
        assert!(rules.ignores(&sub.join("x.tmp"), false));
        assert!(rules.ignores(&sub.join("drafts"), true));
        assert!(rules.ignores(&sub.join("drafts/a.md"), false));
        assert!(!rules.ignores(&sub.join("keep.md"), false));
    }
}
