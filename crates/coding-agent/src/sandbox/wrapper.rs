//! The wrapper scripts that stand in for the bash tool's shell: `#!/bin/sh` + `exec
//! pi-sandbox …`, written into a private (0700) directory that lives as long as the tool.

use std::ffi::OsString;
use std::fs::{DirBuilder, OpenOptions};
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::SandboxError;

/// `'…'` quoting for `/bin/sh`.
fn shell_quote(word: &[u8]) -> Vec<u8> {
    let mut quoted = vec![b'\''];
    for &byte in word {
        if byte == b'\'' {
            quoted.extend_from_slice(b"'\\''");
        } else {
            quoted.push(byte);
        }
    }
    quoted.push(b'\'');
    quoted
}

/// `#!/bin/sh` + `exec <launcher> <args>` (quoted, no trailing newline).
pub(super) fn wrapper_script(launcher: &Path, args: &[OsString]) -> Vec<u8> {
    let mut script = b"#!/bin/sh\nexec ".to_vec();
    script.extend(shell_quote(launcher.as_os_str().as_bytes()));
    for arg in args {
        script.push(b' ');
        script.extend(shell_quote(arg.as_bytes()));
    }
    script
}

/// A private (0700) directory holding the wrapper scripts; removed when dropped.
pub(super) struct WrapperDir {
    path: PathBuf,
}

impl WrapperDir {
    pub(super) fn create(base: Option<&Path>) -> Result<Self, SandboxError> {
        let base = base.map_or_else(std::env::temp_dir, Path::to_path_buf);
        let setup = |what: &str, path: &Path, e: std::io::Error| {
            SandboxError::Setup(format!("{what} {}: {e}", path.display()))
        };
        std::fs::create_dir_all(&base).map_err(|e| setup("cannot create", &base, e))?;
        let path = base.join(format!("pi-sandbox-{}", uuid::Uuid::new_v4().simple()));
        DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .map_err(|e| setup("cannot create", &path, e))?;
        Ok(Self { path })
    }

    pub(super) fn write_script(&self, name: &str, script: &[u8]) -> Result<PathBuf, SandboxError> {
        let path = self.path.join(name);
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o700)
            .open(&path)
            .and_then(|mut file| file.write_all(script))
            .map_err(|e| SandboxError::Setup(format!("cannot write {}: {e}", path.display())))?;
        Ok(path)
    }
}

impl Drop for WrapperDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_for_sh() {
        assert_eq!(shell_quote(b"a b"), b"'a b'");
        assert_eq!(shell_quote(b"it's"), b"'it'\\''s'");
        assert_eq!(shell_quote(b""), b"''");
    }

    #[test]
    fn wrapper_script_execs_the_launcher() {
        let args: Vec<OsString> = vec!["--write".into(), "/w x".into(), "--".into()];
        let script = wrapper_script(Path::new("/opt/pi-sandbox"), &args);
        assert_eq!(
            String::from_utf8(script).unwrap(),
            "#!/bin/sh\nexec '/opt/pi-sandbox' '--write' '/w x' '--'"
        );
    }

    #[test]
    fn wrapper_dir_is_private_and_removed() {
        use std::os::unix::fs::PermissionsExt;
        let base = tempfile::tempdir().unwrap();
        let dir = WrapperDir::create(Some(base.path())).unwrap();
        let script = dir.write_script("bash", b"#!/bin/sh\n").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir.path), 0o700);
        assert_eq!(mode(&script) & 0o077, 0);
        let path = dir.path.clone();
        drop(dir);
        assert!(!path.exists());
    }
}
