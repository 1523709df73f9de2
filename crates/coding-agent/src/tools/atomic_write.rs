//! Replacing a file's content so that no reader ever sees it half-written: the new content
//! goes to a temporary file beside it, which is then renamed over it (issue 36: an ACP
//! client once read an edited file empty). A symlink is followed and stays a link; the
//! file keeps its permissions. A file with other hard links, or in a folder where no new
//! file can be made, is written in place as pi does, since a rename would cut the links or
//! cannot happen.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `bytes` as the whole content of `path` (created when missing).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let target = follow_links(path);
    let existing = std::fs::metadata(&target).ok();
    if existing.as_ref().is_some_and(has_other_links) {
        return std::fs::write(&target, bytes);
    }
    let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty()) else {
        return std::fs::write(&target, bytes);
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut temp = match tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".pi-write")
        .tempfile_in(dir)
    {
        Ok(temp) => temp,
        // No new file can be made there (a read-only folder holding a writable file, or
        // a missing folder): write in place, which reports the error a user expects.
        Err(_) => return std::fs::write(&target, bytes),
    };
    if let Some(metadata) = &existing {
        // A file the user cannot read back must not become readable by others meanwhile.
        std::fs::set_permissions(temp.path(), metadata.permissions())?;
    } else {
        set_default_mode(temp.path())?;
    }
    temp.write_all(bytes)?;
    temp.as_file().sync_data()?;
    temp.persist(&target).map_err(|e| e.error)?;
    Ok(())
}

/// The file a symlink (chain) points at, or `path` itself; a dangling link's target path.
fn follow_links(path: &Path) -> PathBuf {
    let mut current = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::read_link(&current) {
            Ok(next) => {
                current = match current.parent() {
                    Some(dir) if next.is_relative() => dir.join(next),
                    _ => next,
                };
            }
            Err(_) => return current,
        }
    }
    current
}

#[cfg(unix)]
fn has_other_links(metadata: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    metadata.nlink() > 1
}

#[cfg(not(unix))]
fn has_other_links(_metadata: &std::fs::Metadata) -> bool {
    false
}

/// A new file gets the mode `open(…, 0o666)` would give it under the process umask, as
/// pi's `writeFile` does (a temporary file starts at 0o600).
#[cfg(unix)]
fn set_default_mode(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = 0o666 & !process_umask();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// The umask, read without changing it (setting it to read it races with other threads).
#[cfg(unix)]
fn process_umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("Umask:"))
                .and_then(|value| u32::from_str_radix(value.trim(), 8).ok())
        })
        .unwrap_or(0o022)
}

#[cfg(not(unix))]
fn set_default_mode(_path: &Path) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn replaces_content_and_keeps_mode_links_and_hard_links() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "old").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomically(&file, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new");
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);

        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink("a.txt", &link).unwrap();
        write_atomically(&link, b"through the link").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "through the link");

        let hard = dir.path().join("hard.txt");
        std::fs::hard_link(&file, &hard).unwrap();
        write_atomically(&file, b"both names").unwrap();
        assert_eq!(std::fs::read_to_string(&hard).unwrap(), "both names");

        let fresh = dir.path().join("fresh.txt");
        write_atomically(&fresh, b"x").unwrap();
        assert_eq!(std::fs::read_to_string(&fresh).unwrap(), "x");
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".pi-write"))
            .collect();
        assert!(leftovers.is_empty());
    }
}
