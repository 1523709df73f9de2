//! Which files a stretch of conversation read and changed, carried from summary to summary.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use pi_agent_core::AgentMessage;

/// Paths touched by the `read`, `write` and `edit` tools.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileOperations {
    /// Paths passed to `read`.
    pub read: BTreeSet<String>,
    /// Paths passed to `write`.
    pub written: BTreeSet<String>,
    /// Paths passed to `edit` (and earlier summaries' modified files).
    pub edited: BTreeSet<String>,
}

/// The file lists stored in a compaction's (or branch summary's) `details`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionDetails {
    /// Files only read, sorted.
    pub read_files: Vec<String>,
    /// Files written or edited, sorted.
    pub modified_files: Vec<String>,
}

impl FileOperations {
    /// No operations yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records the `path` of each `read` / `write` / `edit` tool call of an assistant message.
    pub fn extract_from_message(&mut self, message: &AgentMessage) {
        let Some(assistant) = message.as_assistant() else {
            return;
        };
        for call in assistant.tool_calls() {
            let Some(path) = call.arguments.get("path").and_then(Value::as_str) else {
                continue;
            };
            if path.is_empty() {
                continue;
            }
            let set = match call.name.as_str() {
                "read" => &mut self.read,
                "write" => &mut self.written,
                "edit" => &mut self.edited,
                _ => continue,
            };
            set.insert(path.to_owned());
        }
    }

    /// Carries over the lists of an earlier summary's `details` (`readFiles` count as read,
    /// `modifiedFiles` as edited); fields that are not arrays are ignored.
    pub fn add_details(&mut self, details: &Value) {
        let strings = |key: &str| {
            details
                .get(key)
                .and_then(Value::as_array)
                .map(|items| {
                    items
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        };
        self.read.extend(strings("readFiles"));
        self.edited.extend(strings("modifiedFiles"));
    }
}

/// The final lists: modified = written ∪ edited; read-only = read − modified; both sorted.
pub fn compute_file_lists(ops: &FileOperations) -> CompactionDetails {
    let modified: BTreeSet<&String> = ops.edited.iter().chain(&ops.written).collect();
    CompactionDetails {
        read_files: ops
            .read
            .iter()
            .filter(|f| !modified.contains(f))
            .cloned()
            .collect(),
        modified_files: modified.into_iter().cloned().collect(),
    }
}

/// The `<read-files>` / `<modified-files>` sections appended to a summary, each list one
/// path per line, preceded by a blank line; empty when both lists are.
pub fn format_file_operations(read_files: &[String], modified_files: &[String]) -> String {
    let mut sections = Vec::new();
    if !read_files.is_empty() {
        sections.push(format!(
            "<read-files>\n{}\n</read-files>",
            read_files.join("\n")
        ));
    }
    if !modified_files.is_empty() {
        sections.push(format!(
            "<modified-files>\n{}\n</modified-files>",
            modified_files.join("\n")
        ));
    }
    if sections.is_empty() {
        return String::new();
    }
    format!("\n\n{}", sections.join("\n\n"))
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;
    use serde_json::json;

    #[test]
    fn extracts_paths_of_file_tools_only() {
        let mut ops = FileOperations::new();
        ops.extract_from_message(assistant_call("a", "read", "b.rs").message().unwrap());
        ops.extract_from_message(assistant_call("a", "write", "c.rs").message().unwrap());
        ops.extract_from_message(assistant_call("a", "edit", "d.rs").message().unwrap());
        ops.extract_from_message(assistant_call("a", "bash", "e.rs").message().unwrap());
        ops.extract_from_message(assistant_call("a", "read", "").message().unwrap());
        ops.extract_from_message(user("u", "read x.rs").message().unwrap());
        assert_eq!(ops.read.iter().collect::<Vec<_>>(), ["b.rs"]);
        assert_eq!(ops.written.iter().collect::<Vec<_>>(), ["c.rs"]);
        assert_eq!(ops.edited.iter().collect::<Vec<_>>(), ["d.rs"]);
    }

    #[test]
    fn lists_are_sorted_and_read_excludes_modified() {
        let mut ops = FileOperations::new();
        ops.add_details(&json!({"readFiles": ["z.rs", "a.rs", 3], "modifiedFiles": ["m.rs"]}));
        ops.add_details(&json!({"readFiles": "not a list"}));
        ops.read.insert("w.rs".into());
        ops.written.insert("w.rs".into());
        ops.edited.insert("b.rs".into());
        let lists = compute_file_lists(&ops);
        assert_eq!(lists.read_files, ["a.rs", "z.rs"]);
        assert_eq!(lists.modified_files, ["b.rs", "m.rs", "w.rs"]);
        assert_eq!(
            serde_json::to_value(&lists).unwrap(),
            json!({"readFiles": ["a.rs", "z.rs"], "modifiedFiles": ["b.rs", "m.rs", "w.rs"]})
        );
    }

    #[test]
    fn formats_sections() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(format_file_operations(&[], &[]), "");
        assert_eq!(
            format_file_operations(&s(&["a", "b"]), &[]),
            "\n\n<read-files>\na\nb\n</read-files>"
        );
        assert_eq!(
            format_file_operations(&s(&["a"]), &s(&["c"])),
            "\n\n<read-files>\na\n</read-files>\n\n<modified-files>\nc\n</modified-files>"
        );
        assert_eq!(
            format_file_operations(&[], &s(&["c"])),
            "\n\n<modified-files>\nc\n</modified-files>"
        );
    }
}
