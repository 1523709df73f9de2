//! Paths as tools receive them: relative to the session cwd, `~` expanded, an `@` prefix
//! dropped, Unicode spaces normalized.

use std::path::{Path, PathBuf};

use unicode_normalization::UnicodeNormalization;

const UNICODE_SPACES: &[char] = &[
    '\u{00A0}', '\u{2000}', '\u{2001}', '\u{2002}', '\u{2003}', '\u{2004}', '\u{2005}', '\u{2006}',
    '\u{2007}', '\u{2008}', '\u{2009}', '\u{200A}', '\u{202F}', '\u{205F}', '\u{3000}',
];

/// Drops a leading `@`, normalizes Unicode spaces and expands `~`.
pub fn expand_path(input: &str) -> PathBuf {
    let trimmed = input.strip_prefix('@').unwrap_or(input);
    let normalized: String = trimmed
        .chars()
        .map(|c| if UNICODE_SPACES.contains(&c) { ' ' } else { c })
        .collect();
    crate::config::paths::expand_tilde(&normalized)
}

/// The absolute path a tool argument names.
pub fn resolve_to_cwd(input: &str, cwd: &Path) -> PathBuf {
    let expanded = expand_path(input);
    if expanded.is_absolute() {
        expanded
    } else {
        cwd.join(expanded)
    }
}

/// Like [`resolve_to_cwd`], then tries the spellings macOS and editors produce when the
/// path does not exist: narrow no-break space before AM/PM, NFD, curly apostrophes.
pub fn resolve_read_path(input: &str, cwd: &Path) -> PathBuf {
    let resolved = resolve_to_cwd(input, cwd);
    if resolved.exists() {
        return resolved;
    }
    let text = resolved.to_string_lossy().into_owned();
    let am_pm = text
        .replace(" AM.", "\u{202F}AM.")
        .replace(" PM.", "\u{202F}PM.");
    let nfd: String = text.nfd().collect();
    let curly = text.replace('\'', "\u{2019}");
    let nfd_curly = nfd.replace('\'', "\u{2019}");
    [am_pm, nfd, curly, nfd_curly]
        .into_iter()
        .map(PathBuf::from)
        .find(|candidate| candidate != &resolved && candidate.exists())
        .unwrap_or(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_resolve_against_the_cwd() {
        let cwd = Path::new("/work/project");
        assert_eq!(
            resolve_to_cwd("src/main.rs", cwd),
            PathBuf::from("/work/project/src/main.rs")
        );
        assert_eq!(
            resolve_to_cwd("@src/main.rs", cwd),
            PathBuf::from("/work/project/src/main.rs")
        );
        assert_eq!(
            resolve_to_cwd("/etc/hosts", cwd),
            PathBuf::from("/etc/hosts")
        );
        assert_eq!(
            resolve_to_cwd("a\u{00A0}b.txt", cwd),
            PathBuf::from("/work/project/a b.txt")
        );
    }
}
