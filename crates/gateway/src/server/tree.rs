//! The session tree (§9.7): one node per gateway session, persisted as
//! `<agent dir>/gateway/nodes/<id>.json` so ownership and lineage survive restarts.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::events::TerminationReason;

/// A session of the tree, with what the gateway needs to reopen it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionNode {
    pub id: String,
    /// The parent: the session branched from, or the one that started this sub-agent.
    pub parent_id: Option<String>,
    /// The message branched from (`None` for roots and sub-agents).
    pub branch_point: Option<String>,
    /// Unix milliseconds.
    pub created_at: i64,
    pub last_active_at: i64,
    /// The principal the session belongs to.
    pub owner: String,
    pub cwd: String,
    #[serde(default)]
    pub file: Option<String>,
    #[serde(default)]
    pub model: String,
    #[serde(default)]
    pub thinking_level: String,
    #[serde(default)]
    pub tools: Vec<String>,
    #[serde(default)]
    pub last_termination: Option<TerminationReason>,
    /// The OpenClaw session key (`agent:<id>:<name>`) that names it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// In a cluster: the node whose disk holds the session's working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_node: Option<String>,
}

impl SessionNode {
    /// The node as clients see it (without the owner and file).
    pub fn to_json(&self, running: bool) -> Value {
        json!({
            "id": self.id,
            "parentId": self.parent_id,
            "branchPoint": self.branch_point,
            "createdAt": self.created_at,
            "lastActiveAt": self.last_active_at,
            "cwd": self.cwd,
            "model": self.model,
            "running": running,
            "lastTermination": self.last_termination,
            "key": self.key,
        })
    }
}

/// Where the nodes are kept.
#[derive(Debug, Clone)]
pub struct NodeStore {
    dir: PathBuf,
}

impl NodeStore {
    pub fn new(agent_dir: &Path) -> Self {
        Self {
            dir: agent_dir.join("gateway").join("nodes"),
        }
    }

    /// Every readable node.
    pub fn load_all(&self) -> HashMap<String, SessionNode> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return HashMap::new();
        };
        entries
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .filter_map(|e| std::fs::read_to_string(e.path()).ok())
            .filter_map(|text| serde_json::from_str::<SessionNode>(&text).ok())
            .map(|node| (node.id.clone(), node))
            .collect()
    }

    /// Writes a node (through a temporary file, so readers never see half of it).
    pub fn save(&self, node: &SessionNode) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let text = serde_json::to_string_pretty(node).map_err(std::io::Error::other)?;
        let path = self.dir.join(format!("{}.json", node.id));
        let tmp = self.dir.join(format!(".{}.json.tmp", node.id));
        std::fs::write(&tmp, text)?;
        std::fs::rename(tmp, path)
    }
}

/// The nodes as a forest: a node whose parent is not among them is a root.
pub fn forest(nodes: &[SessionNode], running: &dyn Fn(&str) -> bool) -> Vec<Value> {
    let ids: HashSet<&str> = nodes.iter().map(|n| n.id.as_str()).collect();
    let mut children: HashMap<&str, Vec<&SessionNode>> = HashMap::new();
    let mut roots: Vec<&SessionNode> = Vec::new();
    for node in nodes {
        match node.parent_id.as_deref().filter(|p| ids.contains(p)) {
            Some(parent) => children.entry(parent).or_default().push(node),
            None => roots.push(node),
        }
    }
    roots.sort_by_key(|n| (n.created_at, n.id.clone()));
    fn build(
        node: &SessionNode,
        children: &HashMap<&str, Vec<&SessionNode>>,
        running: &dyn Fn(&str) -> bool,
        depth: usize,
    ) -> Value {
        let mut value = node.to_json(running(&node.id));
        let mut kids: Vec<&SessionNode> =
            children.get(node.id.as_str()).cloned().unwrap_or_default();
        kids.sort_by_key(|n| (n.created_at, n.id.clone()));
        // Nodes come from files; a cycle must not recurse forever.
        let nested: Vec<Value> = if depth > 256 {
            Vec::new()
        } else {
            kids.iter()
                .map(|k| build(k, children, running, depth + 1))
                .collect()
        };
        value["children"] = Value::Array(nested);
        value
    }
    roots
        .iter()
        .map(|r| build(r, &children, running, 0))
        .collect()
}

/// Renders a forest from `sessions.tree` as indented text.
pub fn render(roots: &[Value]) -> String {
    fn walk(node: &Value, depth: usize, out: &mut String) {
        let id = node["id"].as_str().unwrap_or("?");
        let mut line = format!("{}{id}", "  ".repeat(depth));
        if let Some(point) = node["branchPoint"].as_str() {
            line.push_str(&format!(" (branched at {point})"));
        } else if depth > 0 {
            line.push_str(" (sub-agent)");
        }
        if node["running"].as_bool() == Some(true) {
            line.push_str(" [running]");
        } else if let Some(reason) = node["lastTermination"].as_str() {
            line.push_str(&format!(" [{reason}]"));
        }
        out.push_str(&line);
        out.push('\n');
        for child in node["children"].as_array().into_iter().flatten() {
            walk(child, depth + 1, out);
        }
    }
    let mut out = String::new();
    for root in roots {
        walk(root, 0, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: &str, parent: Option<&str>, at: i64) -> SessionNode {
        SessionNode {
            id: id.into(),
            parent_id: parent.map(Into::into),
            branch_point: None,
            created_at: at,
            last_active_at: at,
            owner: "p".into(),
            cwd: "/".into(),
            file: None,
            model: String::new(),
            thinking_level: String::new(),
            tools: Vec::new(),
            last_termination: None,
            key: None,
            workspace_node: None,
        }
    }

    #[test]
    fn children_nest_under_their_parent() {
        let nodes = [
            node("root", None, 1),
            node("b", Some("root"), 3),
            node("a", Some("root"), 2),
            node("orphan", Some("gone"), 4),
        ];
        let roots = forest(&nodes, &|_| false);
        assert_eq!(roots.len(), 2);
        assert_eq!(roots[0]["children"][0]["id"], "a");
        assert_eq!(roots[0]["children"][1]["id"], "b");
        assert!(render(&roots).contains("  a (sub-agent)"));
    }
}
