//! The tools codemode's description lists (pi 1.6's `Nested tools:` part): each with its
//! declaration, grouped by namespace, as many as the inline budget of estimated tokens
//! holds, cheapest first in each group, taking from the groups in turn.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use pi_agent_core::{AgentTool, ToolNamespace};

use super::catalog::sample;
use super::declaration::identifier;

/// Characters per estimated token.
const CHARS_PER_TOKEN: usize = 4;

struct Listed {
    name: String,
    section: String,
    cost: usize,
}

struct Group {
    namespace: Option<ToolNamespace>,
    entries: Vec<Listed>,
}

/// One tool's heading and declaration.
fn section(tool: &dyn AgentTool, guidelines: &[String]) -> String {
    let id = identifier(tool.name());
    let heading = if id == tool.name() {
        format!("### `{id}`")
    } else {
        format!("### `{id}` (`{}`)", tool.name())
    };
    format!("{heading}\n{}", sample(tool, guidelines).trim())
}

/// The names that fit `budget`, every name when there is none.
fn select(groups: &[Group], budget: Option<usize>) -> HashSet<String> {
    let Some(mut remaining) = budget else {
        return groups
            .iter()
            .flat_map(|g| g.entries.iter().map(|e| e.name.clone()))
            .collect();
    };
    let mut queues: Vec<Vec<&Listed>> = groups
        .iter()
        .map(|g| {
            let mut queue: Vec<&Listed> = g.entries.iter().collect();
            queue.sort_by_key(|e| e.cost);
            queue.reverse();
            queue
        })
        .filter(|q| !q.is_empty())
        .collect();
    let mut shown = HashSet::new();
    while !queues.is_empty() {
        queues.retain_mut(|queue| {
            let Some(next) = queue.last() else {
                return false;
            };
            if next.cost > remaining {
                return false;
            }
            remaining -= next.cost;
            shown.insert(next.name.clone());
            queue.pop();
            !queue.is_empty()
        });
    }
    shown
}

/// `Nested tools:` and the listed tools, or `None` when there are none to list.
pub(super) fn nested_tools(
    tools: &[Arc<dyn AgentTool>],
    guidelines: &HashMap<String, Vec<String>>,
    budget: Option<usize>,
) -> Option<String> {
    if tools.is_empty() {
        return None;
    }
    let mut groups: Vec<Group> = vec![Group {
        namespace: None,
        entries: Vec::new(),
    }];
    for tool in tools {
        let notes = guidelines
            .get(tool.name())
            .map(Vec::as_slice)
            .unwrap_or_default();
        let text = section(tool.as_ref(), notes);
        let entry = Listed {
            name: tool.name().to_owned(),
            cost: text.encode_utf16().count().div_ceil(CHARS_PER_TOKEN),
            section: text,
        };
        let namespace = tool.namespace();
        let key = namespace.as_ref().map(|n| n.name.clone());
        match groups
            .iter_mut()
            .find(|g| g.namespace.as_ref().map(|n| &n.name) == key.as_ref())
        {
            Some(group) => group.entries.push(entry),
            None => groups.push(Group {
                namespace,
                entries: vec![entry],
            }),
        }
    }
    // The tools without a namespace first, then the namespaces by name.
    groups[1..].sort_by(|a, b| {
        let name = |g: &Group| g.namespace.as_ref().map(|n| n.name.to_lowercase());
        name(a).cmp(&name(b))
    });
    let shown = select(&groups, budget);
    let mut parts = vec!["Nested tools:".to_owned()];
    for group in &groups {
        let visible: Vec<&Listed> = group
            .entries
            .iter()
            .filter(|e| shown.contains(&e.name))
            .collect();
        if let Some(namespace) = &group.namespace {
            let listing = if visible.len() == group.entries.len() {
                ""
            } else if visible.is_empty() {
                " (tools not listed)"
            } else {
                " (some tools not listed)"
            };
            let description = namespace
                .description
                .as_deref()
                .map(str::trim)
                .filter(|d| !d.is_empty())
                .map(|d| format!("\n{d}"))
                .unwrap_or_default();
            parts.push(format!("## {}{listing}{description}", namespace.name));
        }
        parts.extend(visible.iter().map(|e| e.section.clone()));
    }
    Some(parts.join("\n\n"))
}
