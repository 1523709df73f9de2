//! Which tools a run starts with, from `--tools`, `--exclude-tools`, `--no-tools` and
//! `--no-builtin-tools` as pi 1.5 reads them: a plain `--tools` list is an allowlist of
//! names or `*` patterns; a list made only of `+name` / `-name` entries edits the default
//! set; `--exclude-tools` patterns remove tools last.

/// The parsed `--tools` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolsFlag {
    /// Only these names or patterns.
    Allow(Vec<String>),
    /// The defaults plus `add`, minus `remove`.
    Edit {
        add: Vec<String>,
        remove: Vec<String>,
    },
}

impl ToolsFlag {
    /// Parses a comma-separated `--tools` list; mixing plain names with `+`/`-` entries is
    /// pi's error.
    pub fn parse(list: &str) -> Result<Self, String> {
        let entries: Vec<&str> = list
            .split(',')
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .collect();
        let edits = entries
            .iter()
            .filter(|e| e.starts_with('+') || e.starts_with('-'))
            .count();
        if edits == 0 {
            return Ok(Self::Allow(
                entries.iter().map(|e| (*e).to_owned()).collect(),
            ));
        }
        if edits != entries.len() {
            return Err("--tools: tool names cannot be mixed with +name or -name entries".into());
        }
        let mut add = Vec::new();
        let mut remove = Vec::new();
        for entry in entries {
            match entry.split_at(1) {
                ("+", name) => add.push(name.to_owned()),
                (_, name) => remove.push(name.to_owned()),
            }
        }
        Ok(Self::Edit { add, remove })
    }
}

/// What the command line asked for.
#[derive(Debug, Clone, Default)]
pub struct ToolRequest {
    pub tools: Option<ToolsFlag>,
    pub exclude: Vec<String>,
    pub no_tools: bool,
    pub no_builtin_tools: bool,
}

impl ToolRequest {
    /// `+name`/`-name` edits of the default tools when the tools follow the defaults (no
    /// plain `--tools` list, no `--no-tools`); a resumed session's recorded tools then take
    /// the defaults' place (pi 1.6.0).
    pub fn default_edits(&self) -> Option<ToolEdits> {
        match (&self.tools, self.no_tools) {
            (_, true) | (Some(ToolsFlag::Allow(_)), _) => None,
            (None, false) => Some(ToolEdits::default()),
            (Some(ToolsFlag::Edit { add, remove }), false) => Some(ToolEdits {
                add: add.clone(),
                remove: remove.clone(),
            }),
        }
    }
}

/// `+name`/`-name` entries: exact tool names added to or removed from a tool list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolEdits {
    pub add: Vec<String>,
    pub remove: Vec<String>,
}

impl ToolEdits {
    /// `names` with the additions appended and the removals taken out.
    pub fn apply(&self, names: &[String]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for name in names.iter().chain(&self.add) {
            push_unique(&mut out, name);
        }
        out.retain(|name| !self.remove.contains(name));
        out
    }
}

/// The names of the active tools, in order. `builtin` are the built-in tools pi knows,
/// `defaults` the built-ins active by default, `extension` the extension tools (active by
/// default unless `inactive` names them: `defaultActive: false`). A plain name matching no
/// tool is kept, so building it reports it as unknown.
pub fn select(
    request: &ToolRequest,
    builtin: &[&str],
    defaults: &[&str],
    extension: &[String],
    inactive: &[String],
) -> Vec<String> {
    let mut all: Vec<String> = builtin.iter().map(|t| (*t).to_owned()).collect();
    for name in extension {
        if !all.contains(name) {
            all.push(name.clone());
        }
    }
    let mut default_set: Vec<String> = Vec::new();
    if !request.no_builtin_tools {
        default_set.extend(defaults.iter().map(|t| (*t).to_owned()));
    }
    for name in extension {
        if !default_set.contains(name) && !inactive.contains(name) {
            default_set.push(name.clone());
        }
    }
    let mut chosen: Vec<String> = match (&request.tools, request.no_tools) {
        (_, true) => Vec::new(),
        (None, false) => default_set,
        (Some(ToolsFlag::Allow(entries)), false) => {
            let mut out: Vec<String> = Vec::new();
            for entry in entries {
                let matched: Vec<&String> = all.iter().filter(|n| matches(entry, n)).collect();
                if matched.is_empty() && !entry.contains('*') {
                    push_unique(&mut out, entry);
                }
                for name in matched {
                    push_unique(&mut out, name);
                }
            }
            out
        }
        (Some(ToolsFlag::Edit { add, remove }), false) => {
            let mut out = default_set;
            for entry in add {
                let matched: Vec<&String> = all.iter().filter(|n| matches(entry, n)).collect();
                if matched.is_empty() && !entry.contains('*') {
                    push_unique(&mut out, entry);
                }
                for name in matched {
                    push_unique(&mut out, name);
                }
            }
            out.retain(|name| !remove.iter().any(|p| matches(p, name)));
            out
        }
    };
    chosen.retain(|name| !request.exclude.iter().any(|p| matches(p, name)));
    chosen
}

fn push_unique(list: &mut Vec<String>, name: &str) {
    if !list.iter().any(|n| n == name) {
        list.push(name.to_owned());
    }
}

/// A name against a pattern where `*` stands for any run of characters.
pub use pi_mcp::naming::matches;

/// The default tool set from the merged `defaultTools` setting, as pi 1.6.0 resolves it:
/// its plain names (if any) replace the built-in `defaults`, then its `+name`/`-name`
/// entries add or remove a tool in list order (a project's edits follow the user's).
pub fn default_tools(setting: Option<&[String]>, defaults: &[&str]) -> Vec<String> {
    let Some(setting) = setting else {
        return defaults.iter().map(|t| (*t).to_owned()).collect();
    };
    let is_edit = |entry: &&String| entry.starts_with(['+', '-']);
    let plain: Vec<String> = setting.iter().filter(|e| !is_edit(e)).cloned().collect();
    let mut out = if plain.is_empty() && !setting.is_empty() {
        defaults.iter().map(|t| (*t).to_owned()).collect()
    } else {
        plain
    };
    for entry in setting.iter().filter(is_edit) {
        let name = &entry[1..];
        let at = out.iter().position(|n| n == name);
        match (entry.starts_with('+'), at) {
            (true, None) if !name.is_empty() => out.push(name.to_owned()),
            (false, Some(at)) => {
                out.remove(at);
            }
            _ => {}
        }
    }
    out
}

/// Splits a comma-separated `--exclude-tools` list.
pub fn parse_list(list: &str) -> Vec<String> {
    list.split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUILTIN: [&str; 7] = ["read", "bash", "edit", "write", "grep", "find", "ls"];
    const DEFAULTS: [&str; 4] = ["read", "bash", "edit", "write"];

    fn run(tools: Option<&str>, exclude: &str, extension: &[&str]) -> Result<Vec<String>, String> {
        let request = ToolRequest {
            tools: tools.map(ToolsFlag::parse).transpose()?,
            exclude: parse_list(exclude),
            ..ToolRequest::default()
        };
        let extension: Vec<String> = extension.iter().map(|t| (*t).to_owned()).collect();
        Ok(select(&request, &BUILTIN, &DEFAULTS, &extension, &[]))
    }

    #[test]
    fn patterns_edits_and_exclusions_as_pi_15() {
        assert_eq!(
            run(None, "", &["hello"]).unwrap(),
            ["read", "bash", "edit", "write", "hello"]
        );
        assert_eq!(
            run(Some("read,g*"), "", &["greet"]).unwrap(),
            ["read", "grep", "greet"]
        );
        assert_eq!(
            run(Some("+grep,-write"), "", &[]).unwrap(),
            ["read", "bash", "edit", "grep"]
        );
        // pi 1.5's own example: -xt 'b*,e*' leaves read and write.
        assert_eq!(run(None, "b*,e*", &[]).unwrap(), ["read", "write"]);
        assert_eq!(run(Some("nosuch"), "", &[]).unwrap(), ["nosuch"]);
        assert_eq!(
            run(Some("read,+grep"), "", &[]).unwrap_err(),
            "--tools: tool names cannot be mixed with +name or -name entries"
        );
    }

    #[test]
    fn inactive_extension_tools_wait_to_be_named() {
        let request = ToolRequest::default();
        let extension = vec!["shy".to_owned(), "eager".to_owned()];
        let inactive = vec!["shy".to_owned()];
        assert_eq!(
            select(&request, &BUILTIN, &DEFAULTS, &extension, &inactive),
            ["read", "bash", "edit", "write", "eager"]
        );
        let named = ToolRequest {
            tools: Some(ToolsFlag::parse("read,shy").unwrap()),
            ..ToolRequest::default()
        };
        assert_eq!(
            select(&named, &BUILTIN, &DEFAULTS, &extension, &inactive),
            ["read", "shy"]
        );
    }

    #[test]
    fn edits_apply_to_a_restored_list() {
        let request = ToolRequest {
            tools: Some(ToolsFlag::parse("+grep,-bash").unwrap()),
            ..ToolRequest::default()
        };
        let edits = request.default_edits().unwrap();
        let recorded: Vec<String> = ["read", "bash", "ls"].map(String::from).to_vec();
        assert_eq!(edits.apply(&recorded), ["read", "ls", "grep"]);
        let allow = ToolRequest {
            tools: Some(ToolsFlag::parse("read").unwrap()),
            ..ToolRequest::default()
        };
        assert_eq!(allow.default_edits(), None);
        let none = ToolRequest {
            no_tools: true,
            ..ToolRequest::default()
        };
        assert_eq!(none.default_edits(), None);
        assert_eq!(
            ToolRequest::default().default_edits(),
            Some(ToolEdits::default())
        );
    }

    #[test]
    fn default_tools_replace_or_edit_the_built_in_set() {
        let listed = vec!["read".to_owned(), "grep".to_owned()];
        assert_eq!(default_tools(Some(&listed), &DEFAULTS), ["read", "grep"]);
        let edits = vec!["+ls".to_owned(), "-bash".to_owned()];
        assert_eq!(
            default_tools(Some(&edits), &DEFAULTS),
            ["read", "edit", "write", "ls"]
        );
        assert_eq!(default_tools(None, &DEFAULTS), DEFAULTS);
    }

    #[test]
    fn star_matches_any_run() {
        assert!(matches("*", "anything"));
        assert!(matches("mcp__*__read", "mcp__fs__read"));
        assert!(!matches("mcp__*__read", "mcp__fs__write"));
        assert!(matches("*sonnet*", "claude-sonnet-4"));
        assert!(!matches("ab*ba", "aba"));
    }
}
