//! Config values that may be a literal, the name of an environment variable, or `!command`.

use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

static COMMAND_CACHE: LazyLock<Mutex<HashMap<String, Option<String>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

/// Resolves a value: `!cmd` runs the command (stdout, trimmed; cached for the process),
/// a set environment variable of that name gives its value, anything else is the literal.
pub fn resolve_config_value(value: &str) -> Option<String> {
    if let Some(command) = value.strip_prefix('!') {
        let mut cache = COMMAND_CACHE.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(cached) = cache.get(value) {
            return cached.clone();
        }
        let result = run_command(command);
        cache.insert(value.to_owned(), result.clone());
        return result;
    }
    match std::env::var(value) {
        Ok(env) if !env.is_empty() => Some(env),
        _ => Some(value.to_owned()),
    }
}

/// Runs `sh -c command` with a timeout; stdout trimmed, `None` on failure or empty output.
fn run_command(command: &str) -> Option<String> {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() < COMMAND_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(10))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let output = child.wait_with_output().ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_env_and_command_values() {
        assert_eq!(
            resolve_config_value("sk-literal").as_deref(),
            Some("sk-literal")
        );
        assert_eq!(resolve_config_value("PATH"), std::env::var("PATH").ok());
        assert_eq!(
            resolve_config_value("!echo ' from-cmd '").as_deref(),
            Some("from-cmd")
        );
        assert_eq!(resolve_config_value("!exit 3"), None);
    }
}
