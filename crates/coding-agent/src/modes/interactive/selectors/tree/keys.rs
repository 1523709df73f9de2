//! Key handling: moving, folding, filters and search.

use pi_tui::Input;
use pi_tui::keybindings::Keybindings;

use super::super::{SelectorOutcome, action};
use super::{FILTER_CYCLE, FilterMode, TreeSelector};
use crate::modes::interactive::extension_ui::line_input::LineInput;

impl TreeSelector {
    fn set_filter_and_refresh(&mut self, filter: FilterMode) {
        self.filter = filter;
        self.folded.clear();
        self.apply_filter();
    }

    /// Handle one input with the app's keybindings.
    pub fn handle(&mut self, input: &Input, keys: &Keybindings) -> SelectorOutcome<String> {
        if self.label_edit.is_some() {
            self.handle_label(input, keys);
            return SelectorOutcome::Pending;
        }
        let len = self.rows.len();
        let toggle = |current: FilterMode, mode: FilterMode| {
            if current == mode {
                FilterMode::Default
            } else {
                mode
            }
        };
        if keys.matches(input, "app.tree.editLabel") {
            if let Some(row) = self.rows.get(self.selected) {
                let node = row.node;
                let mut input =
                    LineInput::with_value(self.nodes[node].label.as_deref().unwrap_or(""));
                input.set_focused(true);
                self.label_edit = Some((node, input));
            }
        } else if keys.matches(input, "app.tree.toggleLabelTimestamp") {
            self.show_label_time = !self.show_label_time;
        } else if action(keys, input, "app.message.copy", &["ctrl+x"]) {
            let text = self
                .rows
                .get(self.selected)
                .and_then(|r| self.nodes[r.node].copy_text.clone());
            self.requests.push(super::TreeRequest::Copy(text));
        } else if keys.matches(input, "tui.select.up") {
            self.selected = super::super::wrap_prev(self.selected, len);
        } else if keys.matches(input, "tui.select.down") {
            self.selected = super::super::wrap_next(self.selected, len);
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

    /// Keys while a label is edited: Enter saves it (empty removes it), Esc leaves.
    fn handle_label(&mut self, input: &Input, keys: &Keybindings) {
        let Some((node, editor)) = self.label_edit.as_mut() else {
            return;
        };
        if keys.matches(input, "tui.select.confirm") {
            let node = *node;
            let text = editor.value().trim().to_owned();
            let label = (!text.is_empty()).then_some(text);
            self.nodes[node].label_time = label.as_ref().map(|_| crate::session::time::iso_now());
            self.nodes[node].label.clone_from(&label);
            self.requests.push(super::TreeRequest::Label(
                self.nodes[node].id.clone(),
                label,
            ));
            self.label_edit = None;
            self.apply_filter();
        } else if keys.matches(input, "tui.select.cancel") {
            self.label_edit = None;
        } else {
            editor.handle(input);
        }
    }
}
