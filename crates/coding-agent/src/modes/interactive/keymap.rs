//! The app's keybindings: pi-tui's editor and list keys plus the `app.*` actions, with
//! the user's overrides from `<agentDir>/keybindings.json` (old names migrated).

use std::path::Path;

use pi_tui::keybindings::{KeybindingDef, Keybindings, TUI_KEYBINDINGS};
use serde_json::{Map, Value};

const fn def(
    id: &'static str,
    default_keys: &'static [&'static str],
    description: &'static str,
) -> KeybindingDef {
    KeybindingDef {
        id,
        default_keys,
        description,
    }
}

/// The `app.*` actions with the TypeScript pi's default keys.
pub const APP_KEYBINDINGS: &[KeybindingDef] = &[
    def("app.interrupt", &["escape"], "Cancel or abort"),
    def("app.clear", &["ctrl+c"], "Clear editor"),
    def("app.exit", &["ctrl+d"], "Exit when editor is empty"),
    def("app.suspend", &["ctrl+z"], "Suspend to background"),
    def("app.thinking.cycle", &["shift+tab"], "Cycle thinking level"),
    def("app.model.cycleForward", &["ctrl+p"], "Cycle to next model"),
    def(
        "app.model.cycleBackward",
        &["shift+ctrl+p"],
        "Cycle to previous model",
    ),
    def("app.model.select", &["ctrl+l"], "Open model selector"),
    def("app.tools.expand", &["ctrl+o"], "Toggle tool output"),
    def("app.thinking.toggle", &["ctrl+t"], "Toggle thinking blocks"),
    def(
        "app.session.toggleNamedFilter",
        &["ctrl+n"],
        "Toggle named session filter",
    ),
    def("app.editor.external", &["ctrl+g"], "Open external editor"),
    def(
        "app.message.followUp",
        &["alt+enter"],
        "Queue follow-up message",
    ),
    def(
        "app.message.dequeue",
        &["alt+up"],
        "Restore queued messages",
    ),
    def(
        "app.message.copy",
        &["ctrl+x"],
        "Copy the selection or the last assistant message",
    ),
    def(
        "app.clipboard.pasteImage",
        &["ctrl+v"],
        "Paste image from clipboard",
    ),
    def("app.session.new", &[], "Start a new session"),
    def("app.session.tree", &[], "Open session tree"),
    def("app.session.fork", &[], "Fork current session"),
    def("app.session.resume", &[], "Resume a session"),
    def(
        "app.tree.foldOrUp",
        &["ctrl+left", "alt+left"],
        "Fold tree branch or move up",
    ),
    def(
        "app.tree.unfoldOrDown",
        &["ctrl+right", "alt+right"],
        "Unfold tree branch or move down",
    ),
    def("app.tree.editLabel", &["shift+l"], "Edit tree label"),
    def(
        "app.tree.toggleLabelTimestamp",
        &["shift+t"],
        "Toggle tree label timestamps",
    ),
    def(
        "app.session.togglePath",
        &["ctrl+p"],
        "Toggle session path display",
    ),
    def(
        "app.session.toggleSort",
        &["ctrl+s"],
        "Toggle session sort mode",
    ),
    def("app.session.rename", &["ctrl+r"], "Rename session"),
    def("app.session.delete", &["ctrl+d"], "Delete session"),
    def(
        "app.session.deleteNoninvasive",
        &["ctrl+backspace"],
        "Delete session when query is empty",
    ),
    def("app.models.save", &["ctrl+s"], "Save model selection"),
    def("app.models.enableAll", &["ctrl+a"], "Enable all models"),
    def("app.models.clearAll", &["ctrl+x"], "Clear all models"),
    def(
        "app.models.toggleProvider",
        &["ctrl+p"],
        "Toggle all models for provider",
    ),
    def(
        "app.models.reorderUp",
        &["alt+up"],
        "Move model up in order",
    ),
    def(
        "app.models.reorderDown",
        &["alt+down"],
        "Move model down in order",
    ),
    def(
        "app.tree.filter.default",
        &["ctrl+d"],
        "Tree filter: default view",
    ),
    def(
        "app.tree.filter.noTools",
        &["ctrl+t"],
        "Tree filter: hide tool results",
    ),
    def(
        "app.tree.filter.userOnly",
        &["ctrl+u"],
        "Tree filter: user messages only",
    ),
    def(
        "app.tree.filter.labeledOnly",
        &["ctrl+l"],
        "Tree filter: labeled entries only",
    ),
    def(
        "app.tree.filter.all",
        &["ctrl+a"],
        "Tree filter: show all entries",
    ),
    def(
        "app.tree.filter.cycleForward",
        &["ctrl+o"],
        "Tree filter: cycle forward",
    ),
    def(
        "app.tree.filter.cycleBackward",
        &["shift+ctrl+o"],
        "Tree filter: cycle backward",
    ),
];

/// Names used before the `tui.*` / `app.*` ids, and what they became.
const LEGACY_NAMES: &[(&str, &str)] = &[
    ("cursorUp", "tui.editor.cursorUp"),
    ("cursorDown", "tui.editor.cursorDown"),
    ("cursorLeft", "tui.editor.cursorLeft"),
    ("cursorRight", "tui.editor.cursorRight"),
    ("cursorWordLeft", "tui.editor.cursorWordLeft"),
    ("cursorWordRight", "tui.editor.cursorWordRight"),
    ("cursorLineStart", "tui.editor.cursorLineStart"),
    ("cursorLineEnd", "tui.editor.cursorLineEnd"),
    ("jumpForward", "tui.editor.jumpForward"),
    ("jumpBackward", "tui.editor.jumpBackward"),
    ("pageUp", "tui.editor.pageUp"),
    ("pageDown", "tui.editor.pageDown"),
    ("deleteCharBackward", "tui.editor.deleteCharBackward"),
    ("deleteCharForward", "tui.editor.deleteCharForward"),
    ("deleteWordBackward", "tui.editor.deleteWordBackward"),
    ("deleteWordForward", "tui.editor.deleteWordForward"),
    ("deleteToLineStart", "tui.editor.deleteToLineStart"),
    ("deleteToLineEnd", "tui.editor.deleteToLineEnd"),
    ("yank", "tui.editor.yank"),
    ("yankPop", "tui.editor.yankPop"),
    ("undo", "tui.editor.undo"),
    ("newLine", "tui.input.newLine"),
    ("submit", "tui.input.submit"),
    ("tab", "tui.input.tab"),
    ("copy", "tui.input.copy"),
    ("selectUp", "tui.select.up"),
    ("selectDown", "tui.select.down"),
    ("selectPageUp", "tui.select.pageUp"),
    ("selectPageDown", "tui.select.pageDown"),
    ("selectConfirm", "tui.select.confirm"),
    ("selectCancel", "tui.select.cancel"),
    ("interrupt", "app.interrupt"),
    ("clear", "app.clear"),
    ("exit", "app.exit"),
    ("suspend", "app.suspend"),
    ("cycleThinkingLevel", "app.thinking.cycle"),
    ("cycleModelForward", "app.model.cycleForward"),
    ("cycleModelBackward", "app.model.cycleBackward"),
    ("selectModel", "app.model.select"),
    ("expandTools", "app.tools.expand"),
    ("toggleThinking", "app.thinking.toggle"),
    ("toggleSessionNamedFilter", "app.session.toggleNamedFilter"),
    ("externalEditor", "app.editor.external"),
    ("followUp", "app.message.followUp"),
    ("dequeue", "app.message.dequeue"),
    ("pasteImage", "app.clipboard.pasteImage"),
    ("newSession", "app.session.new"),
    ("tree", "app.session.tree"),
    ("fork", "app.session.fork"),
    ("resume", "app.session.resume"),
    ("treeFoldOrUp", "app.tree.foldOrUp"),
    ("treeUnfoldOrDown", "app.tree.unfoldOrDown"),
    ("treeEditLabel", "app.tree.editLabel"),
    ("treeToggleLabelTimestamp", "app.tree.toggleLabelTimestamp"),
    ("toggleSessionPath", "app.session.togglePath"),
    ("toggleSessionSort", "app.session.toggleSort"),
    ("renameSession", "app.session.rename"),
    ("deleteSession", "app.session.delete"),
    ("deleteSessionNoninvasive", "app.session.deleteNoninvasive"),
];

/// Renames legacy ids; when both the old and the new id are present the new one wins.
pub fn migrate(raw: Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for (key, value) in &raw {
        let new_key = LEGACY_NAMES
            .iter()
            .find(|(old, _)| old == key)
            .map_or(key.as_str(), |(_, new)| new);
        if new_key != key && raw.contains_key(new_key) {
            continue;
        }
        out.insert(new_key.to_owned(), value.clone());
    }
    out
}

/// All keybinding definitions: pi-tui's, then the app's.
pub fn definitions() -> Vec<KeybindingDef> {
    TUI_KEYBINDINGS
        .iter()
        .chain(APP_KEYBINDINGS)
        .map(|d| def(d.id, d.default_keys, d.description))
        .collect()
}

/// Loads `<agent_dir>/keybindings.json` (missing or malformed → defaults).
pub fn load(agent_dir: &Path) -> Keybindings {
    let raw = crate::text_file::read_text(agent_dir.join("keybindings.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .and_then(|v| match v {
            Value::Object(map) => Some(map),
            _ => None,
        })
        .unwrap_or_default();
    Keybindings::new(definitions(), &migrate(raw))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn legacy_names_migrate_and_new_names_win() {
        let Value::Object(raw) = json!({"cycleModelForward": "ctrl+k", "interrupt": "ctrl+x", "app.interrupt": "ctrl+q"})
        else {
            return;
        };
        let migrated = migrate(raw);
        assert_eq!(
            migrated.get("app.model.cycleForward"),
            Some(&json!("ctrl+k"))
        );
        assert_eq!(migrated.get("app.interrupt"), Some(&json!("ctrl+q")));
        assert!(!migrated.contains_key("interrupt"));
    }
}
