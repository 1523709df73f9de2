//! OpenClaw session keys: `agent:<agentId>:<name>`; a bare name belongs to agent `main`.

/// The agent every key without one belongs to.
pub const DEFAULT_AGENT: &str = "main";

/// `main` → `agent:main:main`; `agent:x:y` stays as it is (lower-cased agent). A canonical
/// key stays the same when made canonical again (clients send back the keys they were
/// given), so an agent id holding `:` is not used and `agent:` alone is the main session.
pub fn canonical(key: Option<&str>, agent_id: Option<&str>) -> String {
    let agent = agent_id
        .map(|a| a.trim().to_ascii_lowercase())
        .filter(|a| !a.is_empty() && !a.contains(':'))
        .unwrap_or_else(|| DEFAULT_AGENT.to_owned());
    let Some(key) = key.map(str::trim).filter(|k| !k.is_empty()) else {
        return format!("agent:{agent}:main");
    };
    if let Some(rest) = key.strip_prefix("agent:") {
        return match rest.split_once(':') {
            Some((agent, name)) if !agent.is_empty() && !name.is_empty() => {
                format!("agent:{}:{name}", agent.to_ascii_lowercase())
            }
            _ if rest.is_empty() => format!("agent:{agent}:main"),
            _ => format!("agent:{agent}:{rest}"),
        };
    }
    format!("agent:{agent}:{key}")
}

/// The agent of a canonical key.
pub fn agent_of(key: &str) -> &str {
    key.strip_prefix("agent:")
        .and_then(|rest| rest.split(':').next())
        .filter(|a| !a.is_empty())
        .unwrap_or(DEFAULT_AGENT)
}

/// The key a session without one is known by: `agent:main:<session id>`.
pub fn for_session(id: &str) -> String {
    format!("agent:{DEFAULT_AGENT}:{id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_canonical() {
        assert_eq!(canonical(None, None), "agent:main:main");
        assert_eq!(canonical(Some("main"), None), "agent:main:main");
        assert_eq!(canonical(Some("t2"), Some("Ops")), "agent:ops:t2");
        assert_eq!(canonical(Some("agent:Main:x"), None), "agent:main:x");
        assert_eq!(agent_of("agent:ops:t2"), "ops");
    }

    /// Found by the openclaw_frame fuzz target: `agent:` became `agent:main:`, which made
    /// canonical again is `agent:main:main:` (another session); an agent id with `:` broke
    /// the key's shape the same way.
    #[test]
    fn canonical_keys_stay_canonical() {
        for (key, agent) in [
            ("agent:", None),
            ("agent:", Some(":")),
            ("k", Some(":")),
            ("agent::x", Some("a:b")),
            ("agent:X:", None),
            ("agent: A :x", Some("Ops")),
        ] {
            let once = canonical(Some(key), agent);
            assert_eq!(canonical(Some(&once), agent), once, "{key:?} {agent:?}");
        }
        assert_eq!(canonical(Some("agent:"), None), "agent:main:main");
        assert_eq!(canonical(Some("k"), Some("a:b")), "agent:main:k");
    }
}
