//! pi 1.6's check of tmux's keyboard setup: without `extended-keys`, tmux drops the
//! modifiers of Enter (Shift+Enter, Alt+Enter), so a warning says how to turn it on.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `tmux show -gv <option>`, or `None` when tmux does not answer within two seconds.
fn show(option: &str) -> Option<String> {
    let mut child = Command::new("tmux")
        .args(["show", "-gv", option])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => break,
            Ok(Some(_)) | Err(_) => return None,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take()?, &mut out).ok()?;
    Some(out.trim().to_owned())
}

/// The warning to show inside tmux, if its keyboard setup needs a change (pi 1.6's words).
pub fn warning() -> Option<String> {
    std::env::var_os("TMUX")?;
    let extended = show("extended-keys")?;
    if extended != "on" && extended != "always" {
        return Some("tmux extended-keys is off. Modified Enter keys may not work. Add `set -g extended-keys on` to ~/.tmux.conf and restart tmux.".to_owned());
    }
    (show("extended-keys-format").as_deref() == Some("xterm")).then(|| {
        "tmux extended-keys-format is xterm. Pi works best with csi-u. Add `set -g extended-keys-format csi-u` to ~/.tmux.conf and restart tmux.".to_owned()
    })
}
