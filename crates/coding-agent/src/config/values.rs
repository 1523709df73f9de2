//! Config values (API keys, header values) as pi 1.5 reads them: `!command` runs the
//! command (stdout, trimmed, cached for the process); anything else is a template where
//! `$NAME` and `${NAME}` are environment variables, `$$` is `$` and `$!` is `!`, and the
//! rest is literal. A bare name (0.73's way to name a variable) is now a literal: when such
//! a variable is set, pi warns once.

use std::collections::{HashMap, HashSet};
use std::process::{Command, Stdio};
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

static COMMAND_CACHE: LazyLock<Mutex<HashMap<String, Option<String>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));
static WARNED: LazyLock<Mutex<HashSet<String>>> = LazyLock::new(|| Mutex::new(HashSet::new()));

const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

/// One piece of a template value.
#[derive(Debug, PartialEq, Eq)]
enum Part {
    Literal(String),
    Env(String),
}

fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The length of the variable name at the start of `text` (0 when there is none).
fn env_name_prefix(text: &str) -> usize {
    let bytes = text.as_bytes();
    if !bytes
        .first()
        .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
    {
        return 0;
    }
    bytes
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
        .count()
}

fn push_literal(parts: &mut Vec<Part>, text: &str) {
    if text.is_empty() {
        return;
    }
    if let Some(Part::Literal(last)) = parts.last_mut() {
        last.push_str(text);
    } else {
        parts.push(Part::Literal(text.to_owned()));
    }
}

/// Splits a template into literal text and variable references, as pi 1.5 does.
fn parse_template(value: &str) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        push_literal(&mut parts, &rest[..at]);
        let after = &rest[at + 1..];
        match after.chars().next() {
            Some(c @ ('$' | '!')) => {
                push_literal(&mut parts, &c.to_string());
                rest = &after[1..];
            }
            Some('{') => match after.find('}') {
                Some(end) => {
                    let name = &after[1..end];
                    if is_env_name(name) {
                        parts.push(Part::Env(name.to_owned()));
                    } else {
                        push_literal(&mut parts, &rest[at..at + 1 + end + 1]);
                    }
                    rest = &after[end + 1..];
                }
                None => {
                    push_literal(&mut parts, "$");
                    rest = after;
                }
            },
            _ => {
                let len = env_name_prefix(after);
                if len > 0 {
                    parts.push(Part::Env(after[..len].to_owned()));
                } else {
                    push_literal(&mut parts, "$");
                }
                rest = &after[len..];
            }
        }
    }
    push_literal(&mut parts, rest);
    parts
}

/// A variable from `env` (an auth.json entry's own), else the process environment; empty
/// counts as unset.
fn env_value(name: &str, env: Option<&HashMap<String, String>>) -> Option<String> {
    env.and_then(|e| e.get(name))
        .filter(|v| !v.is_empty())
        .cloned()
        .or_else(|| std::env::var(name).ok().filter(|v| !v.is_empty()))
}

/// Resolves a value (see the module doc); `None` when a command fails or a referenced
/// variable is unset.
pub fn resolve_config_value(value: &str) -> Option<String> {
    resolve_config_value_with(value, None)
}

/// [`resolve_config_value`] with an entry's own environment taking precedence.
pub fn resolve_config_value_with(
    value: &str,
    env: Option<&HashMap<String, String>>,
) -> Option<String> {
    if let Some(command) = value.strip_prefix('!') {
        let mut cache = COMMAND_CACHE.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(cached) = cache.get(value) {
            return cached.clone();
        }
        let result = run_command(command);
        cache.insert(value.to_owned(), result.clone());
        return result;
    }
    warn_if_bare_variable(value, env);
    let mut resolved = String::new();
    for part in parse_template(value) {
        match part {
            Part::Literal(text) => resolved.push_str(&text),
            Part::Env(name) => resolved.push_str(&env_value(&name, env)?),
        }
    }
    Some(resolved)
}

/// The variables a value reads (for messages naming what is missing).
pub fn referenced_variables(value: &str) -> Vec<String> {
    if value.starts_with('!') {
        return Vec::new();
    }
    let mut names = Vec::new();
    for part in parse_template(value) {
        if let Part::Env(name) = part
            && !names.contains(&name)
        {
            names.push(name);
        }
    }
    names
}

/// Whether a configured key counts as configured, as pi 1.6's `configuredRequestAuthStatus`
/// and composed `check` decide it: a `!command` does (it runs only when used); a template
/// does when every variable it reads is set (non-empty).
pub fn is_config_value_configured(value: &str) -> bool {
    value.starts_with('!')
        || referenced_variables(value)
            .iter()
            .all(|name| env_value(name, None).is_some())
}

/// 0.73 read a bare `NAME` as that variable; 1.5 sends it as written. Where the variable is
/// set (so the meaning changed), say so once per value.
fn warn_if_bare_variable(value: &str, env: Option<&HashMap<String, String>>) {
    if !is_env_name(value) || env_value(value, env).is_none() {
        return;
    }
    let mut warned = WARNED.lock().unwrap_or_else(|p| p.into_inner());
    if warned.insert(value.to_owned()) {
        eprintln!(
            "Warning: the config value \"{value}\" is used as written; to read the environment variable {value}, write \"${value}\" (pi 1.5 changed bare names to literals)"
        );
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
        // A bare name is a literal now, even when the variable is set.
        assert_eq!(resolve_config_value("PATH").as_deref(), Some("PATH"));
        assert_eq!(resolve_config_value("$PATH"), std::env::var("PATH").ok());
        assert_eq!(resolve_config_value("${PATH}"), std::env::var("PATH").ok());
        assert_eq!(
            resolve_config_value("Bearer ${PATH}!"),
            std::env::var("PATH").ok().map(|p| format!("Bearer {p}!"))
        );
        assert_eq!(resolve_config_value("$PI_SURELY_UNSET_VAR_X"), None);
        assert_eq!(
            resolve_config_value("$$literal").as_deref(),
            Some("$literal")
        );
        assert_eq!(resolve_config_value("$!bang").as_deref(), Some("!bang"));
        assert_eq!(resolve_config_value("a$").as_deref(), Some("a$"));
        assert_eq!(
            resolve_config_value("${not a name}").as_deref(),
            Some("${not a name}")
        );
        assert_eq!(resolve_config_value("${open").as_deref(), Some("${open"));
        assert_eq!(resolve_config_value("$1x").as_deref(), Some("$1x"));
        let own: HashMap<String, String> = [("PATH".to_owned(), "mine".to_owned())].into();
        assert_eq!(
            resolve_config_value_with("$PATH", Some(&own)).as_deref(),
            Some("mine")
        );
        assert_eq!(referenced_variables("$A-${B}-$A"), ["A", "B"]);
        assert!(is_config_value_configured("literal-key"));
        assert!(is_config_value_configured("!exit 3"));
        assert!(is_config_value_configured("$PATH"));
        assert!(!is_config_value_configured(
            "$PI_TEST_SURELY_UNSET_VARIABLE"
        ));
        assert!(!is_config_value_configured(
            "x-${PATH}-$PI_TEST_SURELY_UNSET_VARIABLE"
        ));
        assert_eq!(
            resolve_config_value("!echo ' from-cmd '").as_deref(),
            Some("from-cmd")
        );
        assert_eq!(resolve_config_value("!exit 3"), None);
    }
}
