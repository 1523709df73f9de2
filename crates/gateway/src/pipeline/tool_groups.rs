//! Names in tool policies: `group:<name>` groups, the built-in profiles, and the entry
//! patterns (`*`, `session_*`, exact names) with OpenClaw's matching rules.

use std::collections::BTreeMap;

/// The static groups: each `group:<name>` expands to these tool names.
pub const TOOL_GROUPS: &[(&str, &[&str])] = &[
    ("group:fs", &["read", "write", "edit", "find", "grep", "ls"]),
    ("group:read", &["read", "find", "grep", "ls"]),
    ("group:runtime", &["bash", "exec"]),
    ("group:sessions", &["session_branch", "session_navigate"]),
    ("group:gateway", &["gateway_reload", "agent_interrupt"]),
    (
        "group:pi",
        &["read", "bash", "edit", "write", "grep", "find", "ls"],
    ),
];

/// Dynamic group: every tool injected by the channel binding (layer 4).
pub const CHANNEL_GROUP: &str = "group:channel";
/// Dynamic group: every custom tool given by the embedding code (layer 1).
pub const CUSTOM_GROUP: &str = "group:custom";

/// The built-in profiles (step 1 and 2 of the cascade): named allowlists.
///
/// Mirrors OpenClaw's profiles with pi's tool names: `minimal` keeps only the harmless
/// self-control tool (OpenClaw keeps `session_status`), `coding` the file, shell and session
/// tools, `messaging` the channel and session tools, `full` everything.
pub const TOOL_PROFILES: &[(&str, &[&str])] = &[
    ("minimal", &["agent_interrupt"]),
    (
        "coding",
        &[
            "group:fs",
            "group:runtime",
            "group:sessions",
            "agent_interrupt",
        ],
    ),
    (
        "messaging",
        &["group:channel", "group:sessions", "agent_interrupt"],
    ),
    ("full", &["*"]),
];

/// The allowlist of a built-in profile; `None` for an unknown name.
pub fn profile_allowlist(name: &str) -> Option<Vec<String>> {
    let name = normalize_tool_name(name);
    TOOL_PROFILES
        .iter()
        .find(|(profile, _)| *profile == name)
        .map(|(_, entries)| entries.iter().map(|e| (*e).to_owned()).collect())
}

/// The names of the built-in profiles, for messages.
pub fn profile_names() -> Vec<&'static str> {
    TOOL_PROFILES.iter().map(|(name, _)| *name).collect()
}

/// How policy entries and tool names are compared: trimmed and lowercased.
pub fn normalize_tool_name(name: &str) -> String {
    name.trim().to_lowercase()
}

/// The groups a policy may name: the static table plus the dynamic groups of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolGroups {
    groups: BTreeMap<String, Vec<String>>,
}

impl Default for ToolGroups {
    fn default() -> Self {
        Self::builtin()
    }
}

impl ToolGroups {
    /// The static groups of [`TOOL_GROUPS`].
    pub fn builtin() -> Self {
        let groups = TOOL_GROUPS
            .iter()
            .map(|(name, members)| {
                (
                    (*name).to_owned(),
                    members.iter().map(|m| (*m).to_owned()).collect(),
                )
            })
            .collect();
        Self { groups }
    }

    /// Adds (or replaces) a group; `name` should start with `group:`.
    pub fn with_group(mut self, name: &str, members: impl IntoIterator<Item = String>) -> Self {
        let members = members
            .into_iter()
            .map(|m| normalize_tool_name(&m))
            .collect();
        self.groups.insert(normalize_tool_name(name), members);
        self
    }

    /// The members of a group; `None` when no group has this name.
    pub fn members(&self, name: &str) -> Option<&[String]> {
        self.groups.get(name).map(Vec::as_slice)
    }

    /// Entries with every known group replaced by its members, normalized, deduplicated,
    /// in first-seen order. Unknown groups stay as they are (they match no tool).
    pub fn expand(&self, entries: &[String]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for entry in entries {
            let entry = normalize_tool_name(entry);
            if entry.is_empty() {
                continue;
            }
            match self.members(&entry) {
                Some(members) => out.extend(members.iter().cloned()),
                None => out.push(entry),
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        out.retain(|e| seen.insert(e.clone()));
        out
    }
}

/// One compiled policy entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pattern {
    /// `*`: every tool.
    All,
    /// A plain name.
    Exact(String),
    /// A name with `*` wildcards, each matching any run of characters.
    Glob(String),
}

impl Pattern {
    /// Compiles one (already expanded) entry.
    pub fn compile(entry: &str) -> Self {
        let entry = normalize_tool_name(entry);
        if entry == "*" {
            Pattern::All
        } else if entry.contains('*') {
            Pattern::Glob(entry)
        } else {
            Pattern::Exact(entry)
        }
    }

    /// Whether the (normalized) tool name matches.
    pub fn matches(&self, name: &str) -> bool {
        match self {
            Pattern::All => true,
            Pattern::Exact(exact) => exact == name,
            Pattern::Glob(glob) => glob_matches(glob, name),
        }
    }
}

/// A compiled allow or deny list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PatternList(Vec<Pattern>);

impl PatternList {
    /// Expands groups and compiles every entry.
    pub fn compile(entries: &[String], groups: &ToolGroups) -> Self {
        Self(
            groups
                .expand(entries)
                .iter()
                .map(|e| Pattern::compile(e))
                .collect(),
        )
    }

    /// Whether no entry is left (an empty allowlist allows everything).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether any entry matches the tool name (normalized here).
    pub fn matches(&self, name: &str) -> bool {
        let name = normalize_tool_name(name);
        self.0.iter().any(|p| p.matches(&name))
    }
}

/// Whether one entry (a name, a pattern or a group) matches at least one of `names`.
pub fn entry_matches_any(entry: &str, names: &[String], groups: &ToolGroups) -> bool {
    let list = PatternList::compile(std::slice::from_ref(&entry.to_owned()), groups);
    names.iter().any(|n| list.matches(n))
}

/// `*` matches any run of characters (also none); everything else matches itself.
fn glob_matches(glob: &str, name: &str) -> bool {
    let mut parts = glob.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let middle_and_last: Vec<&str> = parts.collect();
    let Some((last, middle)) = middle_and_last.split_last() else {
        return rest.is_empty();
    };
    for piece in middle {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(items: &[&str]) -> Vec<String> {
        items.iter().map(|i| (*i).to_owned()).collect()
    }

    #[test]
    fn globs_match_like_openclaw() {
        assert!(glob_matches("session_*", "session_branch"));
        assert!(glob_matches("session_*", "session_"));
        assert!(!glob_matches("session_*", "sessions"));
        assert!(glob_matches("*_reload", "gateway_reload"));
        assert!(glob_matches("a*b*c", "axxbyyc"));
        assert!(!glob_matches("a*b*c", "axxcyyb"));
        assert!(!glob_matches("ab*ba", "aba"));
        assert!(glob_matches("*", ""));
    }

    #[test]
    fn patterns_normalize_case_and_space() {
        assert!(Pattern::compile(" Read ").matches("read"));
        assert_eq!(Pattern::compile("*"), Pattern::All);
        let list = PatternList::compile(&s(&["BASH"]), &ToolGroups::builtin());
        assert!(list.matches("Bash"));
    }

    #[test]
    fn groups_expand_and_dedupe() {
        let groups = ToolGroups::builtin().with_group(CHANNEL_GROUP, s(&["discord_reply"]));
        assert_eq!(
            groups.expand(&s(&[
                "group:runtime",
                "bash",
                "group:channel",
                "group:nope"
            ])),
            s(&["bash", "exec", "discord_reply", "group:nope"])
        );
    }

    #[test]
    fn profiles_resolve() {
        assert_eq!(profile_allowlist("full"), Some(s(&["*"])));
        assert_eq!(profile_allowlist("Minimal"), Some(s(&["agent_interrupt"])));
        assert_eq!(profile_allowlist("nope"), None);
        assert_eq!(
            profile_names(),
            vec!["minimal", "coding", "messaging", "full"]
        );
    }

    #[test]
    fn entries_are_known_when_they_match_a_tool() {
        let names = s(&["read", "bash"]);
        let groups = ToolGroups::builtin();
        assert!(entry_matches_any("group:fs", &names, &groups));
        assert!(entry_matches_any("ba*", &names, &groups));
        assert!(entry_matches_any("*", &names, &groups));
        assert!(!entry_matches_any("group:sessions", &names, &groups));
        assert!(!entry_matches_any("nope", &names, &groups));
    }
}
