//! The session entries as RPC data (pi 1.5's `get_entries` and `get_tree`): every branch,
//! in append order, without the header.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::session::entry::{EntryKind, SessionEntry};

/// `{entries, leafId}`: the entries after `since` (all when `None`); an unknown `since`
/// is an error with pi's text.
pub fn entries_after(
    entries: &[SessionEntry],
    leaf_id: Option<&str>,
    since: Option<&str>,
) -> Result<Value, String> {
    let start = match since {
        None => 0,
        Some(id) => {
            entries
                .iter()
                .position(|e| e.id == id)
                .ok_or_else(|| format!("Entry not found: {id}"))?
                + 1
        }
    };
    let list: Vec<Value> = entries[start..].iter().map(entry_value).collect();
    Ok(json!({ "entries": list, "leafId": leaf_id }))
}

/// `{tree, leafId}`: each node `{entry, children[, label, labelTimestamp]}`, roots being the
/// entries without a parent (or whose parent is missing), children in append order.
pub fn tree(entries: &[SessionEntry], leaf_id: Option<&str>) -> Value {
    let known: std::collections::HashSet<&str> = entries.iter().map(|e| e.id.as_str()).collect();
    let mut labels: HashMap<&str, (&str, &str)> = HashMap::new();
    for entry in entries {
        if let EntryKind::Label { target_id, label } = &entry.kind {
            match label.as_deref() {
                Some(text) => {
                    labels.insert(target_id.as_str(), (text, entry.timestamp.as_str()));
                }
                None => {
                    labels.remove(target_id.as_str());
                }
            }
        }
    }
    // Children always come after their parent, so building from the end finds every
    // child's node ready (no recursion, whatever the depth).
    let mut built: HashMap<&str, Vec<Value>> = HashMap::new();
    let mut roots = Vec::new();
    for entry in entries.iter().rev() {
        let mut children = built.remove(entry.id.as_str()).unwrap_or_default();
        children.reverse();
        let mut node = Map::new();
        node.insert("entry".into(), entry_value(entry));
        node.insert("children".into(), Value::Array(children));
        if let Some((label, at)) = labels.get(entry.id.as_str()) {
            node.insert("label".into(), (*label).into());
            node.insert("labelTimestamp".into(), (*at).into());
        }
        match entry.parent_id.as_deref().filter(|p| known.contains(p)) {
            Some(parent) => built.entry(parent).or_default().push(Value::Object(node)),
            None => roots.push(Value::Object(node)),
        }
    }
    roots.reverse();
    json!({ "tree": roots, "leafId": leaf_id })
}

fn entry_value(entry: &SessionEntry) -> Value {
    entry.to_json().map(Value::Object).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, parent: Option<&str>, kind: EntryKind) -> SessionEntry {
        SessionEntry {
            id: id.into(),
            parent_id: parent.map(Into::into),
            timestamp: format!("t-{id}"),
            kind,
        }
    }

    fn info(name: &str) -> EntryKind {
        EntryKind::SessionInfo {
            name: Some(name.into()),
        }
    }

    #[test]
    fn entries_after_an_id_and_an_unknown_one() {
        let list = [
            entry("a", None, info("x")),
            entry("b", Some("a"), info("y")),
        ];
        let after = entries_after(&list, Some("b"), Some("a")).unwrap();
        assert_eq!(after["entries"].as_array().unwrap().len(), 1);
        assert_eq!(after["entries"][0]["id"], "b");
        assert_eq!(after["leafId"], "b");
        assert_eq!(
            entries_after(&list, None, Some("zz")).unwrap_err(),
            "Entry not found: zz"
        );
    }

    #[test]
    fn tree_keeps_branches_in_order_with_labels() {
        let list = [
            entry("a", None, info("root")),
            entry("b", Some("a"), info("first")),
            entry("c", Some("a"), info("second")),
            entry(
                "l",
                Some("c"),
                EntryKind::Label {
                    target_id: "b".into(),
                    label: Some("keep".into()),
                },
            ),
        ];
        let tree = tree(&list, Some("l"));
        let root = &tree["tree"][0];
        assert_eq!(tree["tree"].as_array().unwrap().len(), 1);
        assert_eq!(root["entry"]["id"], "a");
        assert_eq!(root["children"][0]["entry"]["id"], "b");
        assert_eq!(root["children"][0]["label"], "keep");
        assert_eq!(root["children"][0]["labelTimestamp"], "t-l");
        assert_eq!(root["children"][1]["entry"]["id"], "c");
        assert_eq!(root["children"][1]["children"][0]["entry"]["id"], "l");
        assert_eq!(tree["leafId"], "l");
    }
}
