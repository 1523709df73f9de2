//! Path helpers with Node's semantics (`path.resolve`, `path.relative`, `~` expansion) and
//! directory listings sorted as Node lists them.

use std::path::{Component, Path, PathBuf};

/// Resolves `.` and `..` without touching the filesystem (as Node's `path.resolve`).
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// `~`, `~/x` and (as the TypeScript pi) `~x` expand to the home directory.
pub(crate) fn expand_home(input: &str, home: &Path) -> PathBuf {
    let trimmed = input.trim();
    if trimmed == "~" {
        home.to_path_buf()
    } else if let Some(rest) = trimmed.strip_prefix("~/") {
        home.join(rest)
    } else if let Some(rest) = trimmed.strip_prefix('~') {
        home.join(rest)
    } else {
        PathBuf::from(trimmed)
    }
}

/// A settings or command-line path, absolute: `~` expanded, relative to `base` otherwise.
pub(crate) fn resolve_from(input: &str, base: &Path, home: &Path) -> PathBuf {
    let expanded = expand_home(input, home);
    if expanded.is_absolute() {
        normalize(&expanded)
    } else {
        normalize(&base.join(expanded))
    }
}

/// Whether `target` is `root` or inside it (lexically).
pub(crate) fn is_under(target: &Path, root: &Path) -> bool {
    normalize(target).starts_with(normalize(root))
}

/// The path of `to` relative to `from` with `/` separators (Node's `path.relative`).
pub(crate) fn relative(from: &Path, to: &Path) -> String {
    let from = normalize(from);
    let to = normalize(to);
    let from_parts: Vec<_> = from.components().collect();
    let to_parts: Vec<_> = to.components().collect();
    let common = from_parts
        .iter()
        .zip(&to_parts)
        .take_while(|(a, b)| a == b)
        .count();
    let mut parts: Vec<String> = vec!["..".to_owned(); from_parts.len() - common];
    parts.extend(
        to_parts[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    parts.join("/")
}

/// The real path of `path`, or `path` itself when it cannot be resolved.
pub(crate) fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

pub(super) fn posix(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}

/// A directory entry with symlinks followed (broken links are left out).
pub(crate) struct Entry {
    pub name: String,
    pub path: PathBuf,
    pub is_dir: bool,
    pub is_file: bool,
}

/// The entries of `dir` sorted by name (as Node lists them); `None` when it can't be read.
pub(crate) fn read_dir_sorted(dir: &Path) -> Option<Vec<Entry>> {
    let mut entries: Vec<Entry> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let path = e.path();
            let file_type = e.file_type().ok()?;
            let (is_dir, is_file) = if file_type.is_symlink() {
                let meta = std::fs::metadata(&path).ok()?;
                (meta.is_dir(), meta.is_file())
            } else {
                (file_type.is_dir(), file_type.is_file())
            };
            Some(Entry {
                name: e.file_name().to_string_lossy().into_owned(),
                path,
                is_dir,
                is_file,
            })
        })
        .collect();
    entries.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    Some(entries)
}

/// Whether a string names a local path rather than a package source or URL.
pub(crate) fn is_local_path(value: &str) -> bool {
    let t = value.trim();
    !["npm:", "git:", "github:", "http:", "https:", "ssh:"]
        .iter()
        .any(|p| t.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_resolve_like_node() {
        let home = Path::new("/home/u");
        assert_eq!(
            resolve_from("~", Path::new("/b"), home),
            PathBuf::from("/home/u")
        );
        assert_eq!(
            resolve_from("~/x", Path::new("/b"), home),
            PathBuf::from("/home/u/x")
        );
        assert_eq!(
            resolve_from("~x", Path::new("/b"), home),
            PathBuf::from("/home/u/x")
        );
        assert_eq!(
            resolve_from(" ../c/./d ", Path::new("/a/b"), home),
            PathBuf::from("/a/c/d")
        );
        assert_eq!(
            resolve_from("/abs", Path::new("/a"), home),
            PathBuf::from("/abs")
        );
        assert_eq!(relative(Path::new("/a/b"), Path::new("/a/c/d")), "../c/d");
        assert_eq!(relative(Path::new("/a"), Path::new("/a")), "");
        assert!(is_under(Path::new("/a/b/c"), Path::new("/a/b")));
        assert!(!is_under(Path::new("/a/bc"), Path::new("/a/b")));
        assert!(is_local_path("./x") && !is_local_path("npm:foo"));
    }
}
