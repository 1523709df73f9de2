//! `/tree`: the session's entry tree with branch connectors; pick an entry to continue from.
//!
//! Single-child chains stay flat, branch points indent their children with `├─`/`└─`
//! and `│` gutters; the branch holding the current leaf comes first. Filters hide
//! bookkeeping entries, typing searches, Ctrl+←/→ fold branches.

use std::collections::{HashMap, HashSet};

use pi_agent_core::AgentMessage;
use pi_ai::{Message, StopReason};
use pi_tui::Input;
use pi_tui::keybindings::Keybindings;
use serde_json::{Map, Value};

use super::{SearchBox, SelectorOutcome, action, border, fit, hint_line, picker_component, title};
use crate::modes::interactive::theme::{Theme, ThemeBg, ThemeColor};
use crate::session::{EntryKind, SessionEntry};

/// Which entries the tree shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterMode {
    /// Everything but settings and bookkeeping entries.
    Default,
    /// Default minus tool results.
    NoTools,
    /// User messages only.
    UserOnly,
    /// Labeled entries only.
    LabeledOnly,
    /// Every entry.
    All,
}

const FILTER_CYCLE: [FilterMode; 5] = [
    FilterMode::Default,
    FilterMode::NoTools,
    FilterMode::UserOnly,
    FilterMode::LabeledOnly,
    FilterMode::All,
];

/// What kind of entry a node is, for the filters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    User,
    /// An assistant message; hidden when it has no text and did not fail.
    Assistant {
        has_text: bool,
        failed: bool,
    },
    ToolResult,
    /// Other messages, custom messages, compactions, branch summaries, unknown entries.
    Other,
    /// model/thinking changes, labels, custom data, session info.
    Settings,
}

/// How a piece of an entry's text is painted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Paint {
    Plain,
    Fg(ThemeColor),
    ItalicFg(ThemeColor),
}

#[derive(Debug, Clone)]
struct Node {
    id: String,
    parent: Option<usize>,
    class: Class,
    label: Option<String>,
    content: Vec<(Paint, String)>,
    /// Lowercased text the search matches against.
    search: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Gutter {
    /// The display indent level where the ancestor's connector was drawn.
    position: usize,
    /// Draw `│` (more siblings follow) or blank.
    show: bool,
}

/// A visible node with its place in the drawn tree.
#[derive(Debug, Clone)]
struct Row {
    node: usize,
    indent: usize,
    show_connector: bool,
    is_last: bool,
    gutters: Vec<Gutter>,
    virtual_root_child: bool,
}

/// The session tree picker; `Done(entry id)`.
pub struct TreeSelector {
    nodes: Vec<Node>,
    /// All nodes in display order (pre-order, active branch first).
    flat: Vec<usize>,
    leaf: Option<usize>,
    active: HashSet<usize>,
    filter: FilterMode,
    search: SearchBox,
    folded: HashSet<usize>,
    rows: Vec<Row>,
    visible_parent: HashMap<usize, Option<usize>>,
    visible_children: HashMap<Option<usize>, Vec<usize>>,
    multiple_roots: bool,
    selected: usize,
    last_selected: Option<usize>,
    max_rows: usize,
    theme: Theme,
    outcome: Option<SelectorOutcome<String>>,
}

impl TreeSelector {
    /// The tree of `entries` (labels taken from their label entries) with `leaf` selected,
    /// showing at most `max_rows` entries at once.
    pub fn new(
        entries: &[SessionEntry],
        leaf: Option<&str>,
        theme: &Theme,
        max_rows: usize,
    ) -> Self {
        let index: HashMap<&str, usize> = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.id.as_str(), i))
            .collect();
        let mut labels: HashMap<&str, String> = HashMap::new();
        for entry in entries {
            if let EntryKind::Label { target_id, label } = &entry.kind {
                match label.as_deref().map(str::trim).filter(|l| !l.is_empty()) {
                    Some(l) => labels.insert(target_id.as_str(), l.to_owned()),
                    None => labels.remove(target_id.as_str()),
                };
            }
        }
        let tool_calls = tool_call_map(entries);
        let nodes: Vec<Node> = entries
            .iter()
            .enumerate()
            .map(|(i, entry)| {
                let parent = entry
                    .parent_id
                    .as_deref()
                    .and_then(|p| index.get(p).copied())
                    .filter(|p| *p != i);
                let label = labels.get(entry.id.as_str()).cloned();
                describe(entry, parent, label, &tool_calls)
            })
            .collect();
        let leaf = leaf.and_then(|l| index.get(l).copied());
        let mut active = HashSet::new();
        let mut cursor = leaf;
        while let Some(n) = cursor {
            if !active.insert(n) {
                break;
            }
            cursor = nodes[n].parent;
        }
        let flat = flatten(&nodes, &active);
        let mut selector = Self {
            nodes,
            flat,
            leaf,
            active,
            filter: FilterMode::Default,
            search: SearchBox::default(),
            folded: HashSet::new(),
            rows: Vec::new(),
            visible_parent: HashMap::new(),
            visible_children: HashMap::new(),
            multiple_roots: false,
            selected: 0,
            last_selected: leaf,
            max_rows: max_rows.max(1),
            theme: theme.clone(),
            outcome: None,
        };
        selector.apply_filter();
        selector
    }

    /// The finished outcome when driven through `Component::handle_input`.
    pub fn take_outcome(&mut self) -> Option<SelectorOutcome<String>> {
        self.outcome.take()
    }

    /// The entry id under the cursor.
    pub fn selected_id(&self) -> Option<&str> {
        let row = self.rows.get(self.selected)?;
        Some(self.nodes[row.node].id.as_str())
    }

    /// The active filter.
    pub fn filter(&self) -> FilterMode {
        self.filter
    }

    /// Starts with another filter.
    pub fn set_filter(&mut self, filter: FilterMode) {
        self.filter = filter;
        self.folded.clear();
        self.apply_filter();
    }

    /// The ids of the shown entries, top to bottom.
    pub fn visible_ids(&self) -> Vec<&str> {
        self.rows
            .iter()
            .map(|r| self.nodes[r.node].id.as_str())
            .collect()
    }

    fn passes(&self, n: usize, tokens: &[String]) -> bool {
        let node = &self.nodes[n];
        if let Class::Assistant { has_text, failed } = node.class
            && !has_text
            && !failed
            && Some(n) != self.leaf
        {
            return false;
        }
        let shown = match self.filter {
            FilterMode::Default => node.class != Class::Settings,
            FilterMode::NoTools => !matches!(node.class, Class::Settings | Class::ToolResult),
            FilterMode::UserOnly => node.class == Class::User,
            FilterMode::LabeledOnly => node.label.is_some(),
            FilterMode::All => true,
        };
        shown && tokens.iter().all(|t| node.search.contains(t.as_str()))
    }

    fn apply_filter(&mut self) {
        if let Some(row) = self.rows.get(self.selected) {
            self.last_selected = Some(row.node);
        }
        let tokens: Vec<String> = self
            .search
            .query()
            .to_lowercase()
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        let mut visible: Vec<usize> = self
            .flat
            .iter()
            .copied()
            .filter(|n| self.passes(*n, &tokens))
            .collect();
        if !self.folded.is_empty() {
            let mut skip: HashSet<usize> = HashSet::new();
            for &n in &self.flat {
                if let Some(p) = self.nodes[n].parent
                    && (self.folded.contains(&p) || skip.contains(&p))
                {
                    skip.insert(n);
                }
            }
            visible.retain(|n| !skip.contains(n));
        }
        self.recalculate(&visible);
        self.selected = match self.last_selected {
            Some(n) => self.nearest_visible(n),
            None => self.selected.min(self.rows.len().saturating_sub(1)),
        };
        if let Some(row) = self.rows.get(self.selected) {
            self.last_selected = Some(row.node);
        }
    }

    /// The row of `n` or of its nearest shown ancestor; the last row otherwise.
    fn nearest_visible(&self, n: usize) -> usize {
        let positions: HashMap<usize, usize> = self
            .rows
            .iter()
            .enumerate()
            .map(|(i, r)| (r.node, i))
            .collect();
        let mut cursor = Some(n);
        let mut steps = 0;
        while let Some(c) = cursor {
            if let Some(i) = positions.get(&c) {
                return *i;
            }
            steps += 1;
            if steps > self.nodes.len() {
                break;
            }
            cursor = self.nodes[c].parent;
        }
        self.rows.len().saturating_sub(1)
    }

    /// Indentation, connectors and gutters for the shown nodes: hidden entries' children
    /// hang from their nearest shown ancestor.
    fn recalculate(&mut self, visible: &[usize]) {
        let shown: HashSet<usize> = visible.iter().copied().collect();
        let mut parent_of: HashMap<usize, Option<usize>> = HashMap::new();
        let mut children: HashMap<Option<usize>, Vec<usize>> = HashMap::new();
        children.insert(None, Vec::new());
        for &n in visible {
            let mut ancestor = self.nodes[n].parent;
            let mut steps = 0;
            while let Some(a) = ancestor {
                if shown.contains(&a) || steps > self.nodes.len() {
                    break;
                }
                ancestor = self.nodes[a].parent;
                steps += 1;
            }
            let ancestor = ancestor.filter(|a| shown.contains(a));
            parent_of.insert(n, ancestor);
            children.entry(ancestor).or_default().push(n);
        }
        let roots = children.get(&None).cloned().unwrap_or_default();
        let multiple_roots = roots.len() > 1;
        let mut rows = Vec::with_capacity(visible.len());
        // (node, indent, just_branched, show_connector, is_last, gutters, virtual_root_child)
        type Item = (usize, usize, bool, bool, bool, Vec<Gutter>, bool);
        let mut stack: Vec<Item> = roots
            .iter()
            .enumerate()
            .rev()
            .map(|(i, n)| {
                (
                    *n,
                    usize::from(multiple_roots),
                    multiple_roots,
                    multiple_roots,
                    i + 1 == roots.len(),
                    Vec::new(),
                    multiple_roots,
                )
            })
            .collect();
        let mut seen = HashSet::new();
        while let Some((n, indent, just_branched, show_connector, is_last, gutters, virt)) =
            stack.pop()
        {
            if !seen.insert(n) {
                continue;
            }
            let kids = children.get(&Some(n)).cloned().unwrap_or_default();
            let multiple = kids.len() > 1;
            let child_indent = if multiple || (just_branched && indent > 0) {
                indent + 1
            } else {
                indent
            };
            let connector_shown = show_connector && !virt;
            let display_indent = if multiple_roots {
                indent.saturating_sub(1)
            } else {
                indent
            };
            let mut child_gutters = gutters.clone();
            if connector_shown {
                child_gutters.push(Gutter {
                    position: display_indent.saturating_sub(1),
                    show: !is_last,
                });
            }
            for (i, kid) in kids.iter().enumerate().rev() {
                stack.push((
                    *kid,
                    child_indent,
                    multiple,
                    multiple,
                    i + 1 == kids.len(),
                    child_gutters.clone(),
                    false,
                ));
            }
            rows.push(Row {
                node: n,
                indent,
                show_connector,
                is_last,
                gutters,
                virtual_root_child: virt,
            });
        }
        self.rows = rows;
        self.multiple_roots = multiple_roots;
        self.visible_parent = parent_of;
        self.visible_children = children;
    }

    /// A node folds when it has shown children and starts a branch segment (or is a root).
    fn is_foldable(&self, n: usize) -> bool {
        if self
            .visible_children
            .get(&Some(n))
            .is_none_or(|c| c.is_empty())
        {
            return false;
        }
        match self.visible_parent.get(&n).copied().flatten() {
            None => true,
            Some(p) => self
                .visible_children
                .get(&Some(p))
                .is_some_and(|s| s.len() > 1),
        }
    }

    /// The row of the next branch segment start up (parent chain) or down (first children).
    fn branch_segment_start(&self, down: bool) -> usize {
        let Some(row) = self.rows.get(self.selected) else {
            return self.selected;
        };
        let positions: HashMap<usize, usize> = self
            .rows
            .iter()
            .enumerate()
            .map(|(i, r)| (r.node, i))
            .collect();
        let position = |n: usize| positions.get(&n).copied().unwrap_or(self.selected);
        let mut current = row.node;
        for _ in 0..=self.nodes.len() {
            if down {
                let kids = self
                    .visible_children
                    .get(&Some(current))
                    .cloned()
                    .unwrap_or_default();
                match kids.as_slice() {
                    [] => return position(current),
                    [only] => current = *only,
                    [first, ..] => return position(*first),
                }
            } else {
                let Some(parent) = self.visible_parent.get(&current).copied().flatten() else {
                    return position(current);
                };
                let siblings = self.visible_children.get(&Some(parent)).map_or(0, Vec::len);
                if siblings > 1 && position(current) < self.selected {
                    return position(current);
                }
                current = parent;
            }
        }
        self.selected
    }

    fn set_filter_and_refresh(&mut self, filter: FilterMode) {
        self.filter = filter;
        self.folded.clear();
        self.apply_filter();
    }

    /// Handle one input with the app's keybindings.
    pub fn handle(&mut self, input: &Input, keys: &Keybindings) -> SelectorOutcome<String> {
        let len = self.rows.len();
        let toggle = |current: FilterMode, mode: FilterMode| {
            if current == mode {
                FilterMode::Default
            } else {
                mode
            }
        };
        if keys.matches(input, "tui.select.up") {
            self.selected = super::wrap_prev(self.selected, len);
        } else if keys.matches(input, "tui.select.down") {
            self.selected = super::wrap_next(self.selected, len);
        } else if action(keys, input, "app.tree.foldOrUp", &["ctrl+left", "alt+left"]) {
            let current = self.rows.get(self.selected).map(|r| r.node);
            match current {
                Some(n) if self.is_foldable(n) && !self.folded.contains(&n) => {
                    self.folded.insert(n);
                    self.apply_filter();
                }
                _ => self.selected = self.branch_segment_start(false),
            }
        } else if action(
            keys,
            input,
            "app.tree.unfoldOrDown",
            &["ctrl+right", "alt+right"],
        ) {
            let current = self.rows.get(self.selected).map(|r| r.node);
            match current {
                Some(n) if self.folded.contains(&n) => {
                    self.folded.remove(&n);
                    self.apply_filter();
                }
                _ => self.selected = self.branch_segment_start(true),
            }
        } else if action(keys, input, "tui.editor.cursorLeft", &["left"])
            || keys.matches(input, "tui.select.pageUp")
        {
            self.selected = self.selected.saturating_sub(self.max_rows);
        } else if action(keys, input, "tui.editor.cursorRight", &["right"])
            || keys.matches(input, "tui.select.pageDown")
        {
            self.selected = (self.selected + self.max_rows).min(len.saturating_sub(1));
        } else if keys.matches(input, "tui.select.confirm") {
            if let Some(id) = self.selected_id() {
                return SelectorOutcome::Done(id.to_owned());
            }
        } else if keys.matches(input, "tui.select.cancel") {
            if self.search.query().is_empty() {
                return SelectorOutcome::Cancelled;
            }
            self.search.clear();
            self.folded.clear();
            self.apply_filter();
        } else if action(keys, input, "app.tree.filter.default", &["ctrl+d"]) {
            self.set_filter_and_refresh(FilterMode::Default);
        } else if action(keys, input, "app.tree.filter.noTools", &["ctrl+t"]) {
            self.set_filter_and_refresh(toggle(self.filter, FilterMode::NoTools));
        } else if action(keys, input, "app.tree.filter.userOnly", &["ctrl+u"]) {
            self.set_filter_and_refresh(toggle(self.filter, FilterMode::UserOnly));
        } else if action(keys, input, "app.tree.filter.labeledOnly", &["ctrl+l"]) {
            self.set_filter_and_refresh(toggle(self.filter, FilterMode::LabeledOnly));
        } else if action(keys, input, "app.tree.filter.all", &["ctrl+a"]) {
            self.set_filter_and_refresh(toggle(self.filter, FilterMode::All));
        } else if action(
            keys,
            input,
            "app.tree.filter.cycleBackward",
            &["ctrl+shift+o"],
        ) {
            let i = FILTER_CYCLE
                .iter()
                .position(|m| *m == self.filter)
                .unwrap_or(0);
            self.set_filter_and_refresh(
                FILTER_CYCLE[(i + FILTER_CYCLE.len() - 1) % FILTER_CYCLE.len()],
            );
        } else if action(keys, input, "app.tree.filter.cycleForward", &["ctrl+o"]) {
            let i = FILTER_CYCLE
                .iter()
                .position(|m| *m == self.filter)
                .unwrap_or(0);
            self.set_filter_and_refresh(FILTER_CYCLE[(i + 1) % FILTER_CYCLE.len()]);
        } else if self.search.edit(input, keys) {
            self.folded.clear();
            self.apply_filter();
        }
        SelectorOutcome::Pending
    }

    fn status_labels(&self) -> &'static str {
        match self.filter {
            FilterMode::Default => "",
            FilterMode::NoTools => " [no-tools]",
            FilterMode::UserOnly => " [user]",
            FilterMode::LabeledOnly => " [labeled]",
            FilterMode::All => " [all]",
        }
    }

    fn prefix(&self, row: &Row) -> String {
        let display_indent = if self.multiple_roots {
            row.indent.saturating_sub(1)
        } else {
            row.indent
        };
        let connector = row.show_connector && !row.virtual_root_child;
        let connector_level = if connector {
            display_indent.checked_sub(1)
        } else {
            None
        };
        let folded = self.folded.contains(&row.node);
        let mut out = String::with_capacity(display_indent * 3);
        for level in 0..display_indent {
            if let Some(g) = row.gutters.iter().find(|g| g.position == level) {
                out.push_str(if g.show { "│  " } else { "   " });
            } else if connector_level == Some(level) {
                out.push(if row.is_last { '└' } else { '├' });
                out.push(if folded {
                    '⊞'
                } else if self.is_foldable(row.node) {
                    '⊟'
                } else {
                    '─'
                });
                out.push(' ');
            } else {
                out.push_str("   ");
            }
        }
        out
    }

    fn row_line(&self, row: &Row, is_selected: bool, width: usize) -> String {
        let t = &self.theme;
        let node = &self.nodes[row.node];
        let cursor = if is_selected {
            t.fg(ThemeColor::Accent).paint("→ ")
        } else {
            "  ".to_owned()
        };
        let connector = row.show_connector && !row.virtual_root_child;
        let fold = if self.folded.contains(&row.node) && !connector {
            t.fg(ThemeColor::Accent).paint("⊞ ")
        } else {
            String::new()
        };
        let path = if self.active.contains(&row.node) {
            t.fg(ThemeColor::Accent).paint("• ")
        } else {
            String::new()
        };
        let label = node
            .label
            .as_ref()
            .map(|l| t.fg(ThemeColor::Warning).paint(&format!("[{l}] ")))
            .unwrap_or_default();
        let content: String = node
            .content
            .iter()
            .map(|(paint, text)| {
                let mut style = match paint {
                    Paint::Plain => pi_tui::Style::plain(),
                    Paint::Fg(c) => t.fg(*c),
                    Paint::ItalicFg(c) => t.fg(*c).italic(),
                };
                if is_selected {
                    style = style.bold();
                }
                style.paint(text)
            })
            .collect();
        let line = format!(
            "{cursor}{}{fold}{path}{label}{content}",
            t.fg(ThemeColor::Dim).paint(&self.prefix(row))
        );
        if is_selected {
            t.bg(ThemeBg::SelectedBg)
                .paint(&pi_tui::truncate_to_width(&line, width, "…", true))
        } else {
            fit(&line, width)
        }
    }

    fn render_lines(&mut self, width: usize) -> Vec<String> {
        let t = &self.theme;
        let muted = t.fg(ThemeColor::Muted);
        let mut lines = vec![border(t, width), title(t, "Session Tree", width)];
        lines.push(hint_line(
            t,
            &[
                ("↑↓", "move"),
                ("←→", "page"),
                ("ctrl+←→", "fold/branch"),
                ("enter", "select"),
                ("esc", "cancel"),
            ],
            width,
        ));
        lines.push(hint_line(
            t,
            &[
                ("ctrl+d/t/u/l/a", "filters"),
                ("ctrl+o", "cycle"),
                ("type", "search"),
            ],
            width,
        ));
        let query = self.search.query();
        let search = if query.is_empty() {
            format!("  {}", muted.paint("Type to search:"))
        } else {
            format!(
                "  {} {}",
                muted.paint("Type to search:"),
                t.fg(ThemeColor::Accent).paint(query)
            )
        };
        lines.push(fit(&search, width));
        lines.push(border(t, width));
        let len = self.rows.len();
        if len == 0 {
            lines.push(fit(&muted.paint("  No entries found"), width));
            lines.push(fit(
                &muted.paint(&format!("  (0/0){}", self.status_labels())),
                width,
            ));
        } else {
            let start = super::scroll_start(self.selected, len, self.max_rows);
            let end = (start + self.max_rows).min(len);
            for i in start..end {
                lines.push(self.row_line(&self.rows[i], i == self.selected, width));
            }
            lines.push(fit(
                &muted.paint(&format!(
                    "  ({}/{len}){}",
                    self.selected + 1,
                    self.status_labels()
                )),
                width,
            ));
        }
        lines.push(border(t, width));
        lines
    }
}

picker_component!(TreeSelector);

/// Pre-order over the tree, the branch holding the active leaf first at every fork.
fn flatten(nodes: &[Node], active: &HashSet<usize>) -> Vec<usize> {
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    let mut roots = Vec::new();
    for (i, node) in nodes.iter().enumerate() {
        match node.parent {
            Some(p) => children[p].push(i),
            None => roots.push(i),
        }
    }
    let active_first = |list: &mut Vec<usize>| {
        list.sort_by_key(|n| !active.contains(n));
    };
    active_first(&mut roots);
    for list in &mut children {
        active_first(list);
    }
    let mut out = Vec::with_capacity(nodes.len());
    let mut seen = vec![false; nodes.len()];
    let mut stack: Vec<usize> = roots.into_iter().rev().collect();
    while let Some(n) = stack.pop() {
        if std::mem::replace(&mut seen[n], true) {
            continue;
        }
        out.push(n);
        stack.extend(children[n].iter().rev());
    }
    out
}

/// Tool call id → (tool name, arguments), from every assistant message.
fn tool_call_map(entries: &[SessionEntry]) -> HashMap<String, (String, Map<String, Value>)> {
    let mut map = HashMap::new();
    for entry in entries {
        if let Some(assistant) = entry.message().and_then(AgentMessage::as_assistant) {
            for call in assistant.tool_calls() {
                map.insert(call.id.clone(), (call.name.clone(), call.arguments.clone()));
            }
        }
    }
    map
}

/// Newlines and tabs as spaces, ends trimmed.
fn normalize(text: &str) -> String {
    text.replace(['\n', '\t', '\r'], " ").trim().to_owned()
}

/// The first 200 characters.
fn clip(text: &str) -> String {
    text.chars().take(200).collect()
}

/// The text of message content as JSON: the string or its text blocks.
fn value_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

fn describe(
    entry: &SessionEntry,
    parent: Option<usize>,
    label: Option<String>,
    tool_calls: &HashMap<String, (String, Map<String, Value>)>,
) -> Node {
    use Paint::{Fg, ItalicFg, Plain};
    let dim = |text: String| vec![(Fg(ThemeColor::Dim), text)];
    let mut search: Vec<String> = label.iter().cloned().collect();
    let (class, content) = match &entry.kind {
        EntryKind::Message { message } => {
            search.push(message.role().to_owned());
            match message {
                AgentMessage::Llm(Message::User(user)) => {
                    let text = clip(&user.text_content());
                    search.push(text.clone());
                    (
                        Class::User,
                        vec![
                            (Fg(ThemeColor::Accent), "user: ".to_owned()),
                            (Plain, normalize(&text)),
                        ],
                    )
                }
                AgentMessage::Llm(Message::Assistant(assistant)) => {
                    let text = clip(&assistant.text());
                    search.push(text.clone());
                    let has_text = !text.trim().is_empty();
                    let failed = !matches!(
                        assistant.stop_reason,
                        StopReason::Stop | StopReason::ToolUse
                    );
                    let head = (Fg(ThemeColor::Success), "assistant: ".to_owned());
                    let body = if has_text {
                        (Plain, normalize(&text))
                    } else if assistant.stop_reason == StopReason::Aborted {
                        (Fg(ThemeColor::Muted), "(aborted)".to_owned())
                    } else if let Some(error) = &assistant.error_message {
                        (
                            Fg(ThemeColor::Error),
                            normalize(error).chars().take(80).collect(),
                        )
                    } else {
                        (Fg(ThemeColor::Muted), "(no content)".to_owned())
                    };
                    (Class::Assistant { has_text, failed }, vec![head, body])
                }
                AgentMessage::Llm(Message::ToolResult(result)) => {
                    let text: String = result.content.iter().filter_map(|b| b.as_text()).collect();
                    search.push(clip(&text));
                    let shown = match tool_calls.get(&result.tool_call_id) {
                        Some((name, args)) => format_tool_call(name, args),
                        None => format!("[{}]", result.tool_name),
                    };
                    (Class::ToolResult, vec![(Fg(ThemeColor::Muted), shown)])
                }
                AgentMessage::Custom(custom) => {
                    if let Some(content) = custom.get("content") {
                        search.push(clip(&value_text(content)));
                    }
                    let shown = if custom.role == "bashExecution" {
                        let command = custom.get("command").and_then(Value::as_str).unwrap_or("");
                        search.push(command.to_owned());
                        format!("[bash]: {}", normalize(command))
                    } else {
                        format!("[{}]", custom.role)
                    };
                    (Class::Other, dim(shown))
                }
            }
        }
        EntryKind::CustomMessage {
            custom_type,
            content,
            ..
        } => {
            let text = value_text(content);
            search.push(custom_type.clone());
            search.push(text.clone());
            (
                Class::Other,
                vec![
                    (
                        Fg(ThemeColor::CustomMessageLabel),
                        format!("[{custom_type}]: "),
                    ),
                    (Plain, normalize(&text)),
                ],
            )
        }
        EntryKind::Compaction { tokens_before, .. } => {
            search.push("compaction".into());
            let k = (*tokens_before as f64 / 1000.0).round();
            (
                Class::Other,
                vec![(
                    Fg(ThemeColor::BorderAccent),
                    format!("[compaction: {k}k tokens]"),
                )],
            )
        }
        EntryKind::BranchSummary { summary, .. } => {
            search.push("branch summary".into());
            search.push(summary.clone());
            (
                Class::Other,
                vec![
                    (Fg(ThemeColor::Warning), "[branch summary]: ".to_owned()),
                    (Plain, normalize(summary)),
                ],
            )
        }
        EntryKind::ModelChange { model_id, .. } => {
            search.push(format!("model {model_id}"));
            (Class::Settings, dim(format!("[model: {model_id}]")))
        }
        EntryKind::ThinkingLevelChange { thinking_level } => {
            search.push(format!("thinking {thinking_level}"));
            (
                Class::Settings,
                dim(format!("[thinking: {thinking_level}]")),
            )
        }
        EntryKind::Custom { custom_type, .. } => {
            search.push(format!("custom {custom_type}"));
            (Class::Settings, dim(format!("[custom: {custom_type}]")))
        }
        EntryKind::Label { label: text, .. } => {
            let text = text.clone().unwrap_or_default();
            search.push(format!("label {text}"));
            let shown = if text.is_empty() { "(cleared)" } else { &text };
            (Class::Settings, dim(format!("[label: {shown}]")))
        }
        EntryKind::SessionInfo { name } => {
            search.push("title".into());
            let content = match name.as_deref().filter(|n| !n.is_empty()) {
                Some(name) => {
                    search.push(name.to_owned());
                    dim(format!("[title: {name}]"))
                }
                None => vec![
                    (Fg(ThemeColor::Dim), "[title: ".to_owned()),
                    (ItalicFg(ThemeColor::Dim), "empty".to_owned()),
                    (Fg(ThemeColor::Dim), "]".to_owned()),
                ],
            };
            (Class::Settings, content)
        }
        EntryKind::Unknown(raw) => {
            let kind = raw.get("type").and_then(Value::as_str).unwrap_or("entry");
            search.push(kind.to_owned());
            (Class::Other, dim(format!("[{kind}]")))
        }
    };
    Node {
        id: entry.id.clone(),
        parent,
        class,
        label,
        content,
        search: search.join(" ").to_lowercase(),
    }
}

/// `~/…` for paths under the home directory.
fn shorten_home(path: &str) -> String {
    match std::env::var("HOME") {
        Ok(home) if !home.is_empty() && path.starts_with(&home) => {
            format!("~{}", &path[home.len()..])
        }
        _ => path.to_owned(),
    }
}

/// A tool call condensed to one bracket: `[read: src/main.rs:10-19]`, `[bash: ls -la]`.
fn format_tool_call(name: &str, args: &Map<String, Value>) -> String {
    let text = |key: &str| -> Option<String> {
        match args.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s.is_empty() => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => Some(other.to_string()),
        }
    };
    let path = || {
        shorten_home(
            &text("path")
                .or_else(|| text("file_path"))
                .unwrap_or_default(),
        )
    };
    let dir = || shorten_home(&text("path").unwrap_or_else(|| ".".into()));
    match name {
        "read" => {
            let mut shown = path();
            let offset = args.get("offset").and_then(Value::as_i64);
            let limit = args.get("limit").and_then(Value::as_i64);
            if offset.is_some() || limit.is_some() {
                let start = offset.unwrap_or(1);
                shown.push_str(&format!(":{start}"));
                if let Some(limit) = limit {
                    shown.push_str(&format!("-{}", start + limit - 1));
                }
            }
            format!("[read: {shown}]")
        }
        "write" | "edit" => format!("[{name}: {}]", path()),
        "bash" => {
            let raw = text("command").unwrap_or_default();
            let command: String = normalize(&raw).chars().take(50).collect();
            let more = if raw.chars().count() > 50 { "..." } else { "" };
            format!("[bash: {command}{more}]")
        }
        "grep" => format!(
            "[grep: /{}/ in {}]",
            text("pattern").unwrap_or_default(),
            dir()
        ),
        "find" => format!(
            "[find: {} in {}]",
            text("pattern").unwrap_or_default(),
            dir()
        ),
        "ls" => format!("[ls: {}]", dir()),
        _ => {
            let json = Value::Object(args.clone()).to_string();
            let short: String = json.chars().take(40).collect();
            let more = if json.chars().count() > 40 { "..." } else { "" };
            format!("[{name}: {short}{more}]")
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::test_support::*;
    use super::*;
    use pi_ai::{
        AssistantBlock, AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage,
    };
    use pi_tui::{Component, KeyCode, KeyModifiers};

    fn entry(id: &str, parent: Option<&str>, kind: EntryKind) -> SessionEntry {
        SessionEntry {
            id: id.into(),
            parent_id: parent.map(str::to_owned),
            timestamp: "2025-01-01T00:00:00.000Z".into(),
            kind,
        }
    }

    fn user(id: &str, parent: Option<&str>, text: &str) -> SessionEntry {
        entry(
            id,
            parent,
            EntryKind::Message {
                message: UserMessage::text(text).into(),
            },
        )
    }

    fn assistant(id: &str, parent: &str, blocks: Vec<AssistantBlock>) -> SessionEntry {
        let mut message = AssistantMessage::empty("api", "p", "m");
        message.content = blocks;
        entry(
            id,
            Some(parent),
            EntryKind::Message {
                message: message.into(),
            },
        )
    }

    fn said(id: &str, parent: &str, text: &str) -> SessionEntry {
        assistant(
            id,
            parent,
            vec![AssistantBlock::Text(TextContent::new(text))],
        )
    }

    /// m0 → u1 → a1, which branches into u2 → a2 and u3 → a3 (the leaf).
    fn branched() -> Vec<SessionEntry> {
        vec![
            entry(
                "m0",
                None,
                EntryKind::ModelChange {
                    provider: "p".into(),
                    model_id: "m".into(),
                },
            ),
            user("u1", Some("m0"), "first question"),
            said("a1", "u1", "first answer"),
            user("u2", Some("a1"), "branch a"),
            said("a2", "u2", "a reply"),
            user("u3", Some("a1"), "branch b"),
            said("a3", "u3", "b reply"),
            entry(
                "l1",
                Some("a3"),
                EntryKind::Label {
                    target_id: "u2".into(),
                    label: Some("checkpoint".into()),
                },
            ),
        ]
    }

    fn rendered(s: &mut TreeSelector, width: usize) -> Vec<String> {
        let lines = s.render(width);
        assert_fits(&lines, width);
        plain(&lines)
    }

    #[test]
    fn draws_branch_connectors_with_the_active_branch_first() {
        let mut s = TreeSelector::new(&branched(), Some("a3"), &theme(), 20);
        assert_eq!(s.visible_ids(), ["u1", "a1", "u3", "a3", "u2", "a2"]);
        assert_eq!(s.selected_id(), Some("a3"));
        let lines = rendered(&mut s, 100);
        let rows: Vec<&str> = lines
            .iter()
            .map(|l| l.trim_end())
            .filter(|l| l.contains(": "))
            .filter(|l| !l.contains("Type to search"))
            .collect();
        assert_eq!(
            rows,
            [
                "  • user: first question",
                "  • assistant: first answer",
                "  ├⊟ • user: branch b",
                "→ │     • assistant: b reply",
                "  └⊟ [checkpoint] user: branch a",
                "        assistant: a reply",
            ]
        );
        assert!(lines.iter().any(|l| l.contains("(4/6)")));
    }

    #[test]
    fn filters_hide_and_show_entries() {
        let keys = keys();
        let mut s = TreeSelector::new(&branched(), Some("a3"), &theme(), 20);
        s.handle(&ctrl('u'), &keys);
        assert_eq!(s.filter(), FilterMode::UserOnly);
        assert_eq!(s.visible_ids(), ["u1", "u3", "u2"]);
        // The leaf is hidden: its nearest shown ancestor is selected.
        assert_eq!(s.selected_id(), Some("u3"));
        let lines = rendered(&mut s, 60);
        assert!(
            lines.iter().any(|l| l.starts_with("→ ├─ • user: branch b")),
            "{lines:?}"
        );
        assert!(lines.iter().any(|l| l.contains("[user]")));
        s.handle(&ctrl('u'), &keys);
        assert_eq!(s.filter(), FilterMode::Default);
        s.handle(&ctrl('a'), &keys);
        assert_eq!(
            s.visible_ids(),
            ["m0", "u1", "a1", "u3", "a3", "l1", "u2", "a2"]
        );
        let lines = rendered(&mut s, 60);
        assert!(lines.iter().any(|l| l.contains("[model: m]")));
        assert!(lines.iter().any(|l| l.contains("[label: checkpoint]")));
        s.handle(&ctrl('l'), &keys);
        assert_eq!(s.visible_ids(), ["u2"]);
        s.handle(&ctrl('o'), &keys);
        assert_eq!(s.filter(), FilterMode::All);
        s.handle(
            &Input::key_with(
                KeyCode::Char('o'),
                KeyModifiers::CONTROL | KeyModifiers::SHIFT,
            ),
            &keys,
        );
        assert_eq!(s.filter(), FilterMode::LabeledOnly);
        s.handle(&ctrl('d'), &keys);
        assert_eq!(s.filter(), FilterMode::Default);
    }

    #[test]
    fn search_navigation_and_outcomes() {
        let keys = keys();
        let mut s = TreeSelector::new(&branched(), Some("a3"), &theme(), 20);
        for c in "reply".chars() {
            s.handle(&typed(c), &keys);
        }
        assert_eq!(s.visible_ids(), ["a3", "a2"]);
        let lines = rendered(&mut s, 40);
        assert!(lines.iter().any(|l| l.contains("Type to search: reply")));
        s.handle(&key(KeyCode::Down), &keys);
        assert_eq!(s.selected_id(), Some("a2"));
        s.handle(&key(KeyCode::Down), &keys);
        assert_eq!(s.selected_id(), Some("a3"));
        s.handle(&key(KeyCode::Up), &keys);
        assert_eq!(s.selected_id(), Some("a2"));
        // Esc clears the search first, then cancels.
        assert_eq!(
            s.handle(&key(KeyCode::Esc), &keys),
            SelectorOutcome::Pending
        );
        assert_eq!(s.visible_ids().len(), 6);
        assert_eq!(
            s.handle(&key(KeyCode::Enter), &keys),
            SelectorOutcome::Done("a2".into())
        );
        assert_eq!(
            s.handle(&key(KeyCode::Esc), &keys),
            SelectorOutcome::Cancelled
        );
    }

    #[test]
    fn folds_branches() {
        let keys = keys();
        let mut s = TreeSelector::new(&branched(), Some("a3"), &theme(), 20);
        let ctrl_left = Input::key_with(KeyCode::Left, KeyModifiers::CONTROL);
        let ctrl_right = Input::key_with(KeyCode::Right, KeyModifiers::CONTROL);
        // From a3, fold-or-up jumps to the start of its branch segment.
        s.handle(&ctrl_left, &keys);
        assert_eq!(s.selected_id(), Some("u3"));
        s.handle(&ctrl_left, &keys);
        assert_eq!(s.visible_ids(), ["u1", "a1", "u3", "u2", "a2"]);
        let lines = rendered(&mut s, 60);
        assert!(
            lines.iter().any(|l| l.starts_with("→ ├⊞ • user: branch b")),
            "{lines:?}"
        );
        s.handle(&ctrl_right, &keys);
        assert_eq!(s.visible_ids().len(), 6);
        s.handle(&ctrl_right, &keys);
        assert_eq!(s.selected_id(), Some("a3"));
    }

    #[test]
    fn tool_calls_are_condensed_and_scrolling_keeps_the_selection_visible() {
        let mut entries = vec![user("u0", None, "start")];
        let mut parent = "u0".to_owned();
        for i in 0..30 {
            let call = ToolCall::new(
                format!("call{i}"),
                "bash",
                serde_json::json!({"command": format!("echo {i}\nls")})
                    .as_object()
                    .cloned()
                    .unwrap(),
            );
            let a = format!("a{i}");
            entries.push(assistant(&a, &parent, vec![AssistantBlock::ToolCall(call)]));
            let r = format!("r{i}");
            entries.push(entry(
                &r,
                Some(&a),
                EntryKind::Message {
                    message: ToolResultMessage {
                        tool_call_id: format!("call{i}"),
                        tool_name: "bash".into(),
                        content: Vec::new(),
                        ..Default::default()
                    }
                    .into(),
                },
            ));
            parent = r;
        }
        let mut s = TreeSelector::new(&entries, Some(&parent), &theme(), 8);
        // Tool-call-only assistant messages are hidden, except the current leaf.
        assert_eq!(s.visible_ids().len(), 31);
        let lines = rendered(&mut s, 40);
        assert!(
            lines.iter().any(|l| l.contains("→ • [bash: echo 29 ls]")),
            "{lines:?}"
        );
        assert!(lines.iter().any(|l| l.contains("(31/31)")));
        s.handle(&key(KeyCode::Down), &keys());
        let lines = rendered(&mut s, 100);
        assert!(lines.iter().any(|l| l.starts_with("→ • user: start")));
        s.handle(&key(KeyCode::PageDown), &keys());
        assert_eq!(s.selected_id(), Some("r7"));
        s.set_filter(FilterMode::NoTools);
        assert_eq!(s.visible_ids(), ["u0"]);
    }

    #[test]
    fn formats_tool_calls_like_pi() {
        let args = |v: serde_json::Value| v.as_object().cloned().unwrap();
        assert_eq!(
            format_tool_call(
                "read",
                &args(serde_json::json!({"path": "a.rs", "offset": 10, "limit": 10}))
            ),
            "[read: a.rs:10-19]"
        );
        assert_eq!(
            format_tool_call("grep", &args(serde_json::json!({"pattern": "fn"}))),
            "[grep: /fn/ in .]"
        );
        assert_eq!(
            format_tool_call("custom", &args(serde_json::json!({"k": 1}))),
            "[custom: {\"k\":1}]"
        );
        let long = "x".repeat(60);
        assert_eq!(
            format_tool_call("bash", &args(serde_json::json!({"command": long}))),
            format!("[bash: {}...]", "x".repeat(50))
        );
    }

    #[test]
    fn empty_and_multiple_roots() {
        let mut s = TreeSelector::new(&[], None, &theme(), 10);
        let lines = rendered(&mut s, 40);
        assert!(lines.iter().any(|l| l.contains("No entries found")));
        assert_eq!(
            s.handle(&key(KeyCode::Enter), &keys()),
            SelectorOutcome::Pending
        );
        let entries = vec![user("r1", None, "root one"), user("r2", None, "root two")];
        let mut s = TreeSelector::new(&entries, Some("r2"), &theme(), 10);
        assert_eq!(s.visible_ids(), ["r2", "r1"]);
        let lines = rendered(&mut s, 40);
        assert!(
            lines.iter().any(|l| l.starts_with("→ • user: root two")),
            "{lines:?}"
        );
        assert!(lines.iter().any(|l| l.starts_with("  user: root one")));
    }
}
