//! The session tree of a gateway: each session's node (who owns it, where it works, how its
//! last run ended, its OpenClaw key), saved under the agent dir, and the lists built from it.

use serde_json::{Value, json};

use super::gateway::{Gateway, lock};
use super::tree::{SessionNode, forest};
use crate::events::TerminationReason;

impl Gateway {
    /// The node of a session.
    pub fn node(&self, id: &str) -> Option<SessionNode> {
        lock(&self.nodes).get(id).cloned()
    }

    pub(super) fn save_node(&self, node: &SessionNode) {
        if let Err(e) = self.store.save(node) {
            eprintln!("Warning: could not save session node {}: {e}", node.id);
        }
        if let Some(cluster) = self.cluster() {
            cluster.save_record(node);
        }
    }

    /// A node another node of the cluster shared: known here from now on. The session
    /// file stays this node's own (the other node's path means nothing here).
    pub fn merge_node(&self, mut node: SessionNode) {
        let mut nodes = lock(&self.nodes);
        node.file = nodes.get(&node.id).and_then(|n| n.file.clone());
        nodes.insert(node.id.clone(), node);
    }

    /// Where this node keeps a copy of session `id`'s file.
    pub fn set_node_file(&self, id: &str, file: &std::path::Path) {
        if let Some(node) = lock(&self.nodes).get_mut(id) {
            node.file = Some(file.to_string_lossy().into_owned());
        }
    }

    /// Forgets the live session `id` (its lane moved to another node); true when it was live.
    pub fn drop_live(&self, id: &str) -> bool {
        lock(&self.live).remove(id).is_some()
    }

    /// Names session `id` with an OpenClaw session key (saved with its node).
    pub fn set_key(&self, id: &str, key: &str) {
        let node = {
            let mut nodes = lock(&self.nodes);
            let Some(node) = nodes.get_mut(id) else {
                return;
            };
            node.key = Some(key.to_owned());
            node.clone()
        };
        self.save_node(&node);
    }

    /// The most recently active session of `principal` named `key`.
    pub fn node_for_key(&self, principal: &str, key: &str) -> Option<SessionNode> {
        lock(&self.nodes)
            .values()
            .filter(|n| n.owner == principal && n.key.as_deref() == Some(key))
            .max_by_key(|n| n.last_active_at)
            .cloned()
    }

    /// Notes a session's activity (and how its last run ended) and saves its node.
    pub fn touch(&self, id: &str, termination: Option<TerminationReason>) {
        let node = {
            let mut nodes = lock(&self.nodes);
            let Some(node) = nodes.get_mut(id) else {
                return;
            };
            node.last_active_at = pi_ai::now_ms();
            if termination.is_some() {
                node.last_termination = termination;
            }
            node.clone()
        };
        self.save_node(&node);
    }

    pub(super) fn is_running(&self, id: &str) -> bool {
        lock(&self.live).get(id).is_some_and(|l| l.is_running())
            || self.cluster().is_some_and(|c| c.is_running(id))
    }

    /// The nodes of `principal`, oldest first.
    pub fn nodes_of(&self, principal: &str) -> Vec<SessionNode> {
        let mut nodes: Vec<SessionNode> = lock(&self.nodes)
            .values()
            .filter(|n| n.owner == principal)
            .cloned()
            .collect();
        nodes.sort_by_key(|n| (n.created_at, n.id.clone()));
        nodes
    }

    /// `sessions.list`.
    pub fn list(&self, principal: &str) -> Value {
        let nodes: Vec<Value> = self
            .nodes_of(principal)
            .iter()
            .map(|n| n.to_json(self.is_running(&n.id)))
            .collect();
        json!({ "sessions": nodes })
    }

    /// `sessions.tree`.
    pub fn tree(&self, principal: &str) -> Value {
        let nodes = self.nodes_of(principal);
        let roots = forest(&nodes, &|id| self.is_running(id));
        json!({ "roots": roots })
    }
}
