//! The multi-line prompt editor.
//!
//! A buffer of logical lines with a cursor (line, byte column on a grapheme boundary),
//! Emacs-style motions and kills, undo, prompt history, collapsed large pastes and an
//! autocomplete list drawn under the text. Keys come through [`Keybindings`]; keys the
//! editor does not own come back as [`EditorAction::NotConsumed`].

mod kill_ring;
mod layout;
mod undo;

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::autocomplete::{AutocompleteProvider, Suggestion, Suggestions};
use crate::component::{CURSOR_MARKER, Component};
use crate::input::{Input, KeyCode, KeyEvent, KeyModifiers, key_id};
use crate::keybindings::Keybindings;
use crate::style::Style;
use crate::width::{truncate_to_width, visible_width};

use kill_ring::KillRing;
use layout::{Seg, expand_markers, is_punctuation, is_whitespace, segment, word_wrap_line};
use undo::UndoStack;

/// Pastes above this many lines are collapsed into a marker.
const PASTE_MAX_LINES: usize = 10;
/// Pastes above this many characters are collapsed into a marker.
const PASTE_MAX_CHARS: usize = 1000;
/// Most prompts kept in history.
const HISTORY_LIMIT: usize = 100;

/// Styles of the editor chrome and its suggestion list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EditorTheme {
    /// The top and bottom border lines (and their scroll indicators).
    pub border: Style,
    /// The selected suggestion row.
    pub select: Style,
    /// Suggestion descriptions.
    pub description: Style,
    /// The "(3/12)" position line under a scrolled suggestion list.
    pub scroll_info: Style,
}

/// What [`Editor::handle`] did with an input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditorAction {
    /// Handled; the text did not change.
    Consumed,
    /// Not an editor key: the application should handle it.
    NotConsumed,
    /// Enter: the prompt, paste markers expanded and trimmed; the editor is now empty.
    Submit(String),
    /// Handled and the text changed.
    Changed,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct State {
    lines: Vec<String>,
    cursor_line: usize,
    cursor_col: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LastAction {
    Kill,
    Yank,
    TypeWord,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Jump {
    Forward,
    Backward,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AutocompleteMode {
    Regular,
    Force,
}

struct AutocompleteList {
    mode: AutocompleteMode,
    prefix: String,
    items: Vec<Suggestion>,
    selected: usize,
}

/// One row of a visual line map: a piece of logical line `line` from byte `start`.
#[derive(Debug, Clone, Copy)]
struct VisualLine {
    line: usize,
    start: usize,
    len: usize,
}

struct LayoutLine {
    text: String,
    cursor: Option<usize>,
}

/// The prompt editor component.
pub struct Editor {
    state: State,
    theme: EditorTheme,
    border: Style,
    keybindings: Arc<Keybindings>,
    focused: bool,
    padding_x: usize,
    last_width: usize,
    scroll_offset: usize,
    max_visible_lines: usize,
    provider: Option<Box<dyn AutocompleteProvider>>,
    autocomplete: Option<AutocompleteList>,
    autocomplete_max_visible: usize,
    pastes: BTreeMap<u32, String>,
    paste_counter: u32,
    history: Vec<String>,
    history_index: Option<usize>,
    kill_ring: KillRing,
    last_action: Option<LastAction>,
    jump_mode: Option<Jump>,
    preferred_visual_col: Option<usize>,
    snapped_from_cursor_col: Option<usize>,
    undo_stack: UndoStack<State>,
    disable_submit: bool,
    just_submitted: Option<String>,
    submitted: Option<String>,
}

impl Editor {
    /// An empty, unfocused editor.
    pub fn new(theme: EditorTheme, keybindings: Arc<Keybindings>) -> Self {
        Editor {
            state: State {
                lines: vec![String::new()],
                cursor_line: 0,
                cursor_col: 0,
            },
            theme,
            border: theme.border,
            keybindings,
            focused: false,
            padding_x: 0,
            last_width: 80,
            scroll_offset: 0,
            max_visible_lines: 5,
            provider: None,
            autocomplete: None,
            autocomplete_max_visible: 5,
            pastes: BTreeMap::new(),
            paste_counter: 0,
            history: Vec::new(),
            history_index: None,
            kill_ring: KillRing::default(),
            last_action: None,
            jump_mode: None,
            preferred_visual_col: None,
            snapped_from_cursor_col: None,
            undo_stack: UndoStack::default(),
            disable_submit: false,
            just_submitted: None,
            submitted: None,
        }
    }

    // ----- public API -----

    /// The text as shown (paste markers collapsed), lines joined with `\n`.
    pub fn text(&self) -> String {
        self.state.lines.join("\n")
    }

    /// The text with paste markers replaced by the pasted content.
    pub fn expanded_text(&self) -> String {
        expand_markers(&self.text(), &self.pastes)
    }

    /// The logical lines.
    pub fn lines(&self) -> &[String] {
        &self.state.lines
    }

    /// The cursor as (line, byte column).
    pub fn cursor(&self) -> (usize, usize) {
        (self.state.cursor_line, self.state.cursor_col)
    }

    /// True when the buffer holds no text at all.
    pub fn is_empty(&self) -> bool {
        self.state.lines.len() == 1 && self.state.lines[0].is_empty()
    }

    /// Replace the text (undoable), cursor at the end; leaves history browsing.
    pub fn set_text(&mut self, text: &str) {
        self.cancel_autocomplete();
        self.last_action = None;
        self.history_index = None;
        let normalized = normalize_text(text);
        if self.text() != normalized {
            self.push_undo();
        }
        self.set_text_internal(&normalized);
    }

    /// Insert text at the cursor as one undo step.
    pub fn insert_text_at_cursor(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.cancel_autocomplete();
        self.push_undo();
        self.last_action = None;
        self.history_index = None;
        self.insert_text_internal(text);
    }

    /// Whether the editor has focus (draws the hardware cursor marker).
    pub fn set_focused(&mut self, focused: bool) {
        self.focused = focused;
    }

    /// Whether the editor has focus.
    pub fn is_focused(&self) -> bool {
        self.focused
    }

    /// The border style (pi colors it by thinking level or bash mode).
    pub fn set_border_style(&mut self, style: Style) {
        self.border = style;
    }

    /// The current border style.
    pub fn border_style(&self) -> Style {
        self.border
    }

    /// Replace the theme (the border style is reset to the theme's).
    pub fn set_theme(&mut self, theme: EditorTheme) {
        self.theme = theme;
        self.border = theme.border;
    }

    /// Horizontal padding inside the borders, in columns.
    pub fn set_padding_x(&mut self, padding: usize) {
        self.padding_x = padding;
    }

    /// Most text rows shown before scrolling (at least 1).
    pub fn set_max_visible_lines(&mut self, lines: usize) {
        self.max_visible_lines = lines.max(1);
    }

    /// Size the visible rows from the terminal height as pi does: 30%, at least 5.
    pub fn set_terminal_rows(&mut self, rows: u16) {
        self.max_visible_lines = (usize::from(rows) * 3 / 10).max(5);
    }

    /// Most suggestions shown at once (clamped to 3..=20; default 5).
    pub fn set_autocomplete_max_visible(&mut self, max: usize) {
        self.autocomplete_max_visible = max.clamp(3, 20);
    }

    /// Set the completion provider (closes any open list).
    pub fn set_autocomplete(&mut self, provider: Box<dyn AutocompleteProvider>) {
        self.cancel_autocomplete();
        self.provider = Some(provider);
    }

    /// Let the provider drop cached state (directory walks) so new files show up.
    pub fn refresh_autocomplete(&self) {
        if let Some(provider) = &self.provider {
            provider.refresh();
        }
    }

    /// True while the suggestion list is open.
    pub fn is_showing_autocomplete(&self) -> bool {
        self.autocomplete.is_some()
    }

    /// When true, Enter does nothing (the app is busy).
    pub fn set_disable_submit(&mut self, disable: bool) {
        self.disable_submit = disable;
    }

    /// Remember a submitted prompt for up/down history (trimmed, no consecutive
    /// duplicates, newest first, at most 100).
    pub fn add_to_history(&mut self, text: &str) {
        let trimmed = text.trim();
        if trimmed.is_empty() || self.history.first().is_some_and(|h| h == trimmed) {
            return;
        }
        self.history.insert(0, trimmed.to_string());
        self.history.truncate(HISTORY_LIMIT);
    }

    /// The prompt submitted through [`Component::handle_input`], once.
    pub fn take_submitted(&mut self) -> Option<String> {
        self.submitted.take()
    }

    /// Handle one input event.
    pub fn handle(&mut self, input: &Input) -> EditorAction {
        let before = self.state.lines.clone();
        self.just_submitted = None;
        let consumed = self.handle_inner(input);
        if let Some(text) = self.just_submitted.take() {
            return EditorAction::Submit(text);
        }
        if !consumed {
            EditorAction::NotConsumed
        } else if self.state.lines != before {
            EditorAction::Changed
        } else {
            EditorAction::Consumed
        }
    }

    // ----- input dispatch -----

    fn handle_inner(&mut self, input: &Input) -> bool {
        let kb = Arc::clone(&self.keybindings);
        let key = match input {
            Input::Paste(text) => {
                self.jump_mode = None;
                self.handle_paste(text);
                return true;
            }
            Input::Key(key) => key,
        };
        let is = |id: &str| kb.matches(input, id);
        let id = key_id(key).unwrap_or_default();

        if let Some(direction) = self.jump_mode {
            if is("tui.editor.jumpForward") || is("tui.editor.jumpBackward") {
                self.jump_mode = None;
                return true;
            }
            self.jump_mode = None;
            if let Some(c) = printable(key) {
                self.jump_to_char(c, direction);
                return true;
            }
        }

        if is("tui.input.copy") {
            return false;
        }
        if is("tui.editor.undo") {
            self.undo();
            return true;
        }

        let mut submit_after_completion = false;
        if self.autocomplete.is_some() {
            if is("tui.select.cancel") {
                self.cancel_autocomplete();
                return true;
            }
            if is("tui.select.up") || is("tui.select.down") {
                let up = is("tui.select.up");
                if let Some(list) = self.autocomplete.as_mut() {
                    let n = list.items.len().max(1);
                    list.selected = if up {
                        (list.selected + n - 1) % n
                    } else {
                        (list.selected + 1) % n
                    };
                }
                return true;
            }
            if is("tui.input.tab") {
                self.apply_selected_completion();
                return true;
            }
            if is("tui.select.confirm") {
                let slash = self
                    .autocomplete
                    .as_ref()
                    .is_some_and(|l| l.prefix.starts_with('/'));
                self.apply_selected_completion();
                if !slash {
                    return true;
                }
                submit_after_completion = true;
            }
        }

        if !submit_after_completion {
            if is("tui.input.tab") && self.autocomplete.is_none() {
                self.handle_tab_completion();
                return true;
            }
            if let Some(consumed) = self.handle_editing_key(input, &kb, &id) {
                return consumed;
            }
        }

        if is("tui.input.submit") {
            if self.disable_submit {
                return true;
            }
            if self.char_before_cursor() == Some('\\') {
                // Terminals without Shift+Enter: "\" + Enter inserts a newline.
                self.handle_backspace();
                self.add_new_line();
                return true;
            }
            self.submit_value();
            return true;
        }
        if submit_after_completion {
            return true;
        }

        if let Some(consumed) = self.handle_motion_key(input, &kb) {
            return consumed;
        }

        if let Some(c) = printable(key) {
            let mut buf = [0u8; 4];
            self.insert_character(c.encode_utf8(&mut buf));
            return true;
        }
        false
    }

    /// Deletion, kill-ring and newline keys; `None` when the key is none of them.
    fn handle_editing_key(&mut self, input: &Input, kb: &Keybindings, id: &str) -> Option<bool> {
        let is = |name: &str| kb.matches(input, name);
        if is("tui.editor.deleteToLineEnd") {
            self.delete_to_line_end();
        } else if is("tui.editor.deleteToLineStart") {
            self.delete_to_line_start();
        } else if is("tui.editor.deleteWordBackward") {
            self.delete_word_backward();
        } else if is("tui.editor.deleteWordForward") {
            self.delete_word_forward();
        } else if is("tui.editor.deleteCharBackward") || id == "shift+backspace" {
            self.handle_backspace();
        } else if is("tui.editor.deleteCharForward") || id == "shift+delete" {
            if self.is_empty() {
                // Ctrl+D on an empty prompt is the app's (exit).
                return Some(false);
            }
            self.handle_forward_delete();
        } else if is("tui.editor.yank") {
            self.yank();
        } else if is("tui.editor.yankPop") {
            self.yank_pop();
        } else if is("tui.editor.cursorLineStart") {
            self.move_to_line_start();
        } else if is("tui.editor.cursorLineEnd") {
            self.move_to_line_end();
        } else if is("tui.editor.cursorWordLeft") {
            self.move_word_backward();
        } else if is("tui.editor.cursorWordRight") {
            self.move_word_forward();
        } else if is("tui.input.newLine") || id == "ctrl+j" {
            if self.should_submit_on_backslash_enter(kb, id) {
                self.handle_backspace();
                self.submit_value();
            } else {
                self.add_new_line();
            }
        } else {
            return None;
        }
        Some(true)
    }

    /// Vertical motion, paging and jump keys; `None` when the key is none of them.
    fn handle_motion_key(&mut self, input: &Input, kb: &Keybindings) -> Option<bool> {
        let is = |name: &str| kb.matches(input, name);
        if is("tui.editor.cursorUp") {
            if self.is_empty() || (self.history_index.is_some() && self.is_on_first_visual_line()) {
                self.navigate_history(-1);
            } else if self.is_on_first_visual_line() {
                self.move_to_line_start();
            } else {
                self.move_cursor(-1, 0);
            }
        } else if is("tui.editor.cursorDown") {
            if self.history_index.is_some() && self.is_on_last_visual_line() {
                self.navigate_history(1);
            } else if self.is_on_last_visual_line() {
                self.move_to_line_end();
            } else {
                self.move_cursor(1, 0);
            }
        } else if is("tui.editor.cursorRight") {
            self.move_cursor(0, 1);
        } else if is("tui.editor.cursorLeft") {
            self.move_cursor(0, -1);
        } else if is("tui.editor.pageUp") {
            self.page_scroll(-1);
        } else if is("tui.editor.pageDown") {
            self.page_scroll(1);
        } else if is("tui.editor.jumpForward") {
            self.jump_mode = Some(Jump::Forward);
        } else if is("tui.editor.jumpBackward") {
            self.jump_mode = Some(Jump::Backward);
        } else {
            return None;
        }
        Some(true)
    }

    /// Plain Enter while Shift+Enter submits and the cursor follows a `\`: submit
    /// without the backslash.
    fn should_submit_on_backslash_enter(&self, kb: &Keybindings, id: &str) -> bool {
        if self.disable_submit || id != "enter" {
            return false;
        }
        let shift_enter = Input::key_with(KeyCode::Enter, KeyModifiers::SHIFT);
        kb.matches(&shift_enter, "tui.input.submit") && self.char_before_cursor() == Some('\\')
    }

    // ----- buffer helpers -----

    fn current_line(&self) -> &str {
        self.state
            .lines
            .get(self.state.cursor_line)
            .map_or("", String::as_str)
    }

    fn current_line_mut(&mut self) -> &mut String {
        if self.state.lines.is_empty() {
            self.state.lines.push(String::new());
        }
        let idx = self.state.cursor_line.min(self.state.lines.len() - 1);
        &mut self.state.lines[idx]
    }

    fn before_cursor(&self) -> &str {
        let line = self.current_line();
        line.get(..self.state.cursor_col).unwrap_or(line)
    }

    fn char_before_cursor(&self) -> Option<char> {
        self.before_cursor().chars().next_back()
    }

    fn segments<'a>(&self, text: &'a str) -> Vec<Seg<'a>> {
        segment(text, &self.pastes)
    }

    fn set_cursor_col(&mut self, col: usize) {
        self.state.cursor_col = col;
        self.preferred_visual_col = None;
        self.snapped_from_cursor_col = None;
    }

    fn push_undo(&mut self) {
        self.undo_stack.push(&self.state);
    }

    fn undo(&mut self) {
        self.history_index = None;
        if let Some(snapshot) = self.undo_stack.pop() {
            self.state = snapshot;
            self.last_action = None;
            self.preferred_visual_col = None;
            self.snapped_from_cursor_col = None;
        }
    }

    fn set_text_internal(&mut self, text: &str) {
        self.state.lines = text.split('\n').map(str::to_string).collect();
        self.state.cursor_line = self.state.lines.len() - 1;
        let end = self.current_line().len();
        self.set_cursor_col(end);
        self.scroll_offset = 0;
    }

    fn insert_text_internal(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        let normalized = normalize_text(text);
        let inserted: Vec<&str> = normalized.split('\n').collect();
        let line = self.current_line().to_string();
        let col = self.state.cursor_col.min(line.len());
        let (before, after) = line.split_at(col);
        if inserted.len() == 1 {
            *self.current_line_mut() = format!("{before}{normalized}{after}");
            self.set_cursor_col(col + normalized.len());
            return;
        }
        let last = inserted.last().copied().unwrap_or("");
        let mut new_lines: Vec<String> = Vec::with_capacity(inserted.len());
        new_lines.push(format!("{before}{}", inserted[0]));
        new_lines.extend(
            inserted[1..inserted.len() - 1]
                .iter()
                .map(|s| s.to_string()),
        );
        new_lines.push(format!("{last}{after}"));
        let at = self.state.cursor_line;
        self.state.lines.splice(at..=at, new_lines);
        self.state.cursor_line += inserted.len() - 1;
        self.set_cursor_col(last.len());
    }

    fn insert_character(&mut self, ch: &str) {
        self.history_index = None;
        // Fish-style coalescing: a run of word characters is one undo step; each
        // whitespace starts a new one.
        if is_whitespace(ch) || self.last_action != Some(LastAction::TypeWord) {
            self.push_undo();
        }
        self.last_action = Some(LastAction::TypeWord);
        let col = self.state.cursor_col;
        self.current_line_mut().insert_str(col, ch);
        self.set_cursor_col(col + ch.len());

        if self.autocomplete.is_some() {
            self.update_autocomplete();
            return;
        }
        let before = self.before_cursor().to_string();
        if ch == "/" && self.is_at_start_of_message() {
            self.try_trigger_autocomplete();
        } else if ch == "@" || ch == "#" {
            let mut chars = before.chars().rev();
            chars.next();
            match chars.next() {
                None | Some(' ') | Some('\t') => self.try_trigger_autocomplete(),
                _ => {}
            }
        } else if ch
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
            && (self.is_in_slash_command_context(&before) || in_symbol_context(&before))
        {
            self.try_trigger_autocomplete();
        }
    }

    fn handle_paste(&mut self, pasted: &str) {
        self.cancel_autocomplete();
        self.history_index = None;
        self.last_action = None;
        self.push_undo();

        let decoded = decode_csi_u_controls(pasted);
        let clean = normalize_text(&decoded);
        let mut filtered: String = clean
            .chars()
            .filter(|&c| c == '\n' || u32::from(c) >= 32)
            .collect();
        if filtered.starts_with(['/', '~', '.'])
            && self
                .char_before_cursor()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            filtered.insert(0, ' ');
        }
        let line_count = filtered.split('\n').count();
        let char_count = filtered.chars().count();
        if line_count > PASTE_MAX_LINES || char_count > PASTE_MAX_CHARS {
            self.paste_counter += 1;
            let id = self.paste_counter;
            self.pastes.insert(id, filtered);
            let marker = if line_count > PASTE_MAX_LINES {
                format!("[paste #{id} +{line_count} lines]")
            } else {
                format!("[paste #{id} {char_count} chars]")
            };
            self.insert_text_internal(&marker);
            return;
        }
        self.insert_text_internal(&filtered);
    }

    fn add_new_line(&mut self) {
        self.cancel_autocomplete();
        self.history_index = None;
        self.last_action = None;
        self.push_undo();
        let col = self.state.cursor_col;
        let rest = self.current_line_mut().split_off(col);
        self.state.lines.insert(self.state.cursor_line + 1, rest);
        self.state.cursor_line += 1;
        self.set_cursor_col(0);
    }

    fn submit_value(&mut self) {
        self.cancel_autocomplete();
        let result = self.expanded_text().trim().to_string();
        self.state = State {
            lines: vec![String::new()],
            cursor_line: 0,
            cursor_col: 0,
        };
        self.pastes.clear();
        self.paste_counter = 0;
        self.history_index = None;
        self.scroll_offset = 0;
        self.undo_stack.clear();
        self.last_action = None;
        self.preferred_visual_col = None;
        self.snapped_from_cursor_col = None;
        self.just_submitted = Some(result);
    }

    fn retrigger_autocomplete(&mut self) {
        if self.autocomplete.is_some() {
            self.update_autocomplete();
            return;
        }
        let before = self.before_cursor().to_string();
        if self.is_in_slash_command_context(&before) || in_symbol_context(&before) {
            self.try_trigger_autocomplete();
        }
    }

    fn handle_backspace(&mut self) {
        self.history_index = None;
        self.last_action = None;
        let col = self.state.cursor_col;
        if col > 0 {
            self.push_undo();
            let len = {
                let before = self.before_cursor();
                self.segments(before).last().map_or(1, |s| s.text.len())
            };
            self.current_line_mut().replace_range(col - len..col, "");
            self.set_cursor_col(col - len);
        } else if self.state.cursor_line > 0 {
            self.push_undo();
            self.merge_with_previous_line();
        }
        self.retrigger_autocomplete();
    }

    fn handle_forward_delete(&mut self) {
        self.history_index = None;
        self.last_action = None;
        let col = self.state.cursor_col;
        let line_len = self.current_line().len();
        if col < line_len {
            self.push_undo();
            let len = {
                let after = &self.current_line()[col..];
                self.segments(after).first().map_or(1, |s| s.text.len())
            };
            self.current_line_mut().replace_range(col..col + len, "");
        } else if self.state.cursor_line + 1 < self.state.lines.len() {
            self.push_undo();
            self.merge_with_next_line();
        }
        self.retrigger_autocomplete();
    }

    fn merge_with_previous_line(&mut self) {
        let current = self.state.lines.remove(self.state.cursor_line);
        self.state.cursor_line -= 1;
        let prev = self.current_line_mut();
        let prev_len = prev.len();
        prev.push_str(&current);
        self.set_cursor_col(prev_len);
    }

    fn merge_with_next_line(&mut self) {
        let next = self.state.lines.remove(self.state.cursor_line + 1);
        self.current_line_mut().push_str(&next);
    }

    fn kill(&mut self, text: &str, prepend: bool, accumulate: bool) {
        self.kill_ring.push(text, prepend, accumulate);
        self.last_action = Some(LastAction::Kill);
    }

    fn delete_to_line_start(&mut self) {
        self.history_index = None;
        let accumulate = self.last_action == Some(LastAction::Kill);
        let col = self.state.cursor_col;
        if col > 0 {
            self.push_undo();
            let deleted = self.before_cursor().to_string();
            self.kill(&deleted, true, accumulate);
            self.current_line_mut().replace_range(..col, "");
            self.set_cursor_col(0);
        } else if self.state.cursor_line > 0 {
            self.push_undo();
            self.kill("\n", true, accumulate);
            self.merge_with_previous_line();
        }
    }

    fn delete_to_line_end(&mut self) {
        self.history_index = None;
        let accumulate = self.last_action == Some(LastAction::Kill);
        let col = self.state.cursor_col;
        if col < self.current_line().len() {
            self.push_undo();
            let deleted = self.current_line()[col..].to_string();
            self.kill(&deleted, false, accumulate);
            self.current_line_mut().truncate(col);
        } else if self.state.cursor_line + 1 < self.state.lines.len() {
            self.push_undo();
            self.kill("\n", false, accumulate);
            self.merge_with_next_line();
        }
    }

    fn delete_word_backward(&mut self) {
        self.history_index = None;
        let accumulate = self.last_action == Some(LastAction::Kill);
        let col = self.state.cursor_col;
        if col == 0 {
            if self.state.cursor_line > 0 {
                self.push_undo();
                self.kill("\n", true, accumulate);
                self.merge_with_previous_line();
            }
            return;
        }
        self.push_undo();
        self.move_word_backward();
        let from = self.state.cursor_col;
        let deleted = self.current_line()[from..col].to_string();
        self.kill(&deleted, true, accumulate);
        self.current_line_mut().replace_range(from..col, "");
        self.set_cursor_col(from);
    }

    fn delete_word_forward(&mut self) {
        self.history_index = None;
        let accumulate = self.last_action == Some(LastAction::Kill);
        let col = self.state.cursor_col;
        if col >= self.current_line().len() {
            if self.state.cursor_line + 1 < self.state.lines.len() {
                self.push_undo();
                self.kill("\n", false, accumulate);
                self.merge_with_next_line();
            }
            return;
        }
        self.push_undo();
        self.move_word_forward();
        let to = self.state.cursor_col;
        self.set_cursor_col(col);
        let deleted = self.current_line()[col..to].to_string();
        self.kill(&deleted, false, accumulate);
        self.current_line_mut().replace_range(col..to, "");
    }

    fn yank(&mut self) {
        let Some(text) = self.kill_ring.peek().map(str::to_string) else {
            return;
        };
        self.push_undo();
        self.insert_yanked_text(&text);
        self.last_action = Some(LastAction::Yank);
    }

    fn yank_pop(&mut self) {
        if self.last_action != Some(LastAction::Yank) || self.kill_ring.len() <= 1 {
            return;
        }
        self.push_undo();
        self.delete_yanked_text();
        self.kill_ring.rotate();
        if let Some(text) = self.kill_ring.peek().map(str::to_string) {
            self.insert_yanked_text(&text);
        }
        self.last_action = Some(LastAction::Yank);
    }

    fn insert_yanked_text(&mut self, text: &str) {
        self.history_index = None;
        let parts: Vec<&str> = text.split('\n').collect();
        let line = self.current_line().to_string();
        let col = self.state.cursor_col.min(line.len());
        let (before, after) = line.split_at(col);
        if parts.len() == 1 {
            *self.current_line_mut() = format!("{before}{text}{after}");
            self.set_cursor_col(col + text.len());
            return;
        }
        let last = parts.last().copied().unwrap_or("");
        let mut new_lines = vec![format!("{before}{}", parts[0])];
        new_lines.extend(parts[1..parts.len() - 1].iter().map(|s| s.to_string()));
        new_lines.push(format!("{last}{after}"));
        let at = self.state.cursor_line;
        self.state.lines.splice(at..=at, new_lines);
        self.state.cursor_line += parts.len() - 1;
        self.set_cursor_col(last.len());
    }

    fn delete_yanked_text(&mut self) {
        let Some(yanked) = self.kill_ring.peek().map(str::to_string) else {
            return;
        };
        let parts: Vec<&str> = yanked.split('\n').collect();
        let col = self.state.cursor_col;
        if parts.len() == 1 {
            let start = col.saturating_sub(yanked.len());
            self.current_line_mut().replace_range(start..col, "");
            self.set_cursor_col(start);
            return;
        }
        let Some(start_line) = self.state.cursor_line.checked_sub(parts.len() - 1) else {
            return;
        };
        let first_len = self.state.lines[start_line].len();
        let start_col = first_len.saturating_sub(parts[0].len());
        let after = self.current_line()[col..].to_string();
        let merged = format!("{}{after}", &self.state.lines[start_line][..start_col]);
        self.state
            .lines
            .splice(start_line..=self.state.cursor_line, [merged]);
        self.state.cursor_line = start_line;
        self.set_cursor_col(start_col);
    }

    fn jump_to_char(&mut self, c: char, direction: Jump) {
        self.last_action = None;
        let cur_line = self.state.cursor_line;
        let cur_col = self.state.cursor_col;
        let found = match direction {
            Jump::Forward => (cur_line..self.state.lines.len()).find_map(|i| {
                let line = &self.state.lines[i];
                let from = if i == cur_line {
                    line[cur_col..]
                        .chars()
                        .next()
                        .map_or(line.len(), |ch| cur_col + ch.len_utf8())
                } else {
                    0
                };
                line.get(from..)
                    .and_then(|rest| rest.find(c))
                    .map(|pos| (i, from + pos))
            }),
            Jump::Backward => (0..=cur_line).rev().find_map(|i| {
                let line = &self.state.lines[i];
                let hay = if i == cur_line {
                    &line[..cur_col]
                } else {
                    line.as_str()
                };
                hay.rfind(c).map(|pos| (i, pos))
            }),
        };
        if let Some((line, col)) = found {
            self.state.cursor_line = line;
            self.set_cursor_col(col);
        }
    }

    // ----- motions -----

    fn move_to_line_start(&mut self) {
        self.last_action = None;
        self.set_cursor_col(0);
    }

    fn move_to_line_end(&mut self) {
        self.last_action = None;
        let end = self.current_line().len();
        self.set_cursor_col(end);
    }

    fn move_word_backward(&mut self) {
        self.last_action = None;
        let col = self.state.cursor_col;
        if col == 0 {
            if self.state.cursor_line > 0 {
                self.state.cursor_line -= 1;
                let end = self.current_line().len();
                self.set_cursor_col(end);
            }
            return;
        }
        let new_col = {
            let before = self.before_cursor();
            let mut segs = self.segments(before);
            let mut new_col = col;
            while let Some(s) = segs.last().filter(|s| !s.marker && is_whitespace(s.text)) {
                new_col -= s.text.len();
                segs.pop();
            }
            if let Some(last) = segs.last().copied() {
                if last.marker {
                    new_col -= last.text.len();
                } else if is_punctuation(last.text) {
                    while let Some(s) = segs.last().filter(|s| !s.marker && is_punctuation(s.text))
                    {
                        new_col -= s.text.len();
                        segs.pop();
                    }
                } else {
                    while let Some(s) = segs
                        .last()
                        .filter(|s| !s.marker && !is_whitespace(s.text) && !is_punctuation(s.text))
                    {
                        new_col -= s.text.len();
                        segs.pop();
                    }
                }
            }
            new_col
        };
        self.set_cursor_col(new_col);
    }

    fn move_word_forward(&mut self) {
        self.last_action = None;
        let col = self.state.cursor_col;
        if col >= self.current_line().len() {
            if self.state.cursor_line + 1 < self.state.lines.len() {
                self.state.cursor_line += 1;
                self.set_cursor_col(0);
            }
            return;
        }
        let new_col = {
            let after = &self.current_line()[col..];
            let segs = self.segments(after);
            let mut it = segs.iter().peekable();
            let mut new_col = col;
            while let Some(s) = it.next_if(|s| !s.marker && is_whitespace(s.text)) {
                new_col += s.text.len();
            }
            if let Some(first) = it.peek().copied() {
                if first.marker {
                    new_col += first.text.len();
                } else if is_punctuation(first.text) {
                    while let Some(s) = it.next_if(|s| !s.marker && is_punctuation(s.text)) {
                        new_col += s.text.len();
                    }
                } else {
                    while let Some(s) = it
                        .next_if(|s| !s.marker && !is_whitespace(s.text) && !is_punctuation(s.text))
                    {
                        new_col += s.text.len();
                    }
                }
            }
            new_col
        };
        self.set_cursor_col(new_col);
    }

    fn build_visual_line_map(&self, width: usize) -> Vec<VisualLine> {
        let mut out = Vec::new();
        for (i, line) in self.state.lines.iter().enumerate() {
            if line.is_empty() {
                out.push(VisualLine {
                    line: i,
                    start: 0,
                    len: 0,
                });
            } else if visible_width(line) <= width {
                out.push(VisualLine {
                    line: i,
                    start: 0,
                    len: line.len(),
                });
            } else {
                let segs = self.segments(line);
                for chunk in word_wrap_line(line, width, &segs) {
                    out.push(VisualLine {
                        line: i,
                        start: chunk.start,
                        len: chunk.end - chunk.start,
                    });
                }
            }
        }
        out
    }

    fn is_last_segment_of_line(vls: &[VisualLine], i: usize) -> bool {
        vls.get(i + 1).is_none_or(|next| next.line != vls[i].line)
    }

    fn find_visual_line_at(vls: &[VisualLine], line: usize, col: usize) -> usize {
        for (i, vl) in vls.iter().enumerate() {
            if vl.line != line || col < vl.start {
                continue;
            }
            let offset = col - vl.start;
            if offset < vl.len || (Self::is_last_segment_of_line(vls, i) && offset == vl.len) {
                return i;
            }
        }
        vls.len().saturating_sub(1)
    }

    fn current_visual_line(&self, vls: &[VisualLine]) -> usize {
        Self::find_visual_line_at(vls, self.state.cursor_line, self.state.cursor_col)
    }

    fn is_on_first_visual_line(&self) -> bool {
        let vls = self.build_visual_line_map(self.last_width);
        self.current_visual_line(&vls) == 0
    }

    fn is_on_last_visual_line(&self) -> bool {
        let vls = self.build_visual_line_map(self.last_width);
        self.current_visual_line(&vls) + 1 >= vls.len()
    }

    /// Sticky-column choice for vertical moves (the TypeScript decision table).
    fn compute_vertical_move_column(
        &mut self,
        current_col: usize,
        source_max: usize,
        target_max: usize,
    ) -> usize {
        let cursor_in_middle = current_col < source_max;
        let target_too_short = target_max < current_col;
        match self.preferred_visual_col {
            Some(preferred) if !cursor_in_middle => {
                if target_too_short || target_max < preferred {
                    target_max
                } else {
                    self.preferred_visual_col = None;
                    preferred
                }
            }
            _ => {
                if target_too_short {
                    self.preferred_visual_col = Some(current_col);
                    target_max
                } else {
                    self.preferred_visual_col = None;
                    current_col
                }
            }
        }
    }

    fn move_to_visual_line(&mut self, vls: &[VisualLine], current: usize, target: usize) {
        let (Some(cur_vl), Some(target_vl)) = (vls.get(current).copied(), vls.get(target).copied())
        else {
            return;
        };
        let current_col = match self.snapped_from_cursor_col {
            Some(snapped) => {
                let idx = Self::find_visual_line_at(vls, cur_vl.line, snapped);
                snapped.saturating_sub(vls[idx].start)
            }
            None => self.state.cursor_col.saturating_sub(cur_vl.start),
        };
        let max_col = |i: usize, vl: VisualLine| {
            if Self::is_last_segment_of_line(vls, i) {
                vl.len
            } else {
                vl.len.saturating_sub(1)
            }
        };
        let source_max = max_col(current, cur_vl);
        let target_max = max_col(target, target_vl);
        let visual_col = self.compute_vertical_move_column(current_col, source_max, target_max);

        self.state.cursor_line = target_vl.line;
        let line = self.current_line().to_string();
        let mut col = (target_vl.start + visual_col).min(line.len());
        while !line.is_char_boundary(col) {
            col -= 1;
        }
        self.state.cursor_col = col;

        // Never land inside a multi-byte unit; markers snap to their start.
        for seg in self.segments(&line) {
            if seg.index > col {
                break;
            }
            if seg.text.len() <= 1 || col >= seg.index + seg.text.len() {
                continue;
            }
            if !seg.marker {
                self.state.cursor_col = seg.index;
                break;
            }
            let continuation = seg.index < target_vl.start;
            if continuation && target > current {
                // Already passed this marker on the way down: skip its other rows.
                let seg_end = seg.index + seg.text.len();
                let mut next = target + 1;
                while next < vls.len()
                    && vls[next].line == target_vl.line
                    && vls[next].start < seg_end
                {
                    next += 1;
                }
                if next < vls.len() {
                    self.move_to_visual_line(vls, current, next);
                    return;
                }
            }
            self.snapped_from_cursor_col = Some(col);
            self.state.cursor_col = seg.index;
            return;
        }
        self.snapped_from_cursor_col = None;
    }

    fn move_cursor(&mut self, delta_line: isize, delta_col: isize) {
        self.last_action = None;
        let vls = self.build_visual_line_map(self.last_width);
        let current = self.current_visual_line(&vls);
        if delta_line != 0 {
            let target = current as isize + delta_line;
            if target >= 0 && (target as usize) < vls.len() {
                self.move_to_visual_line(&vls, current, target as usize);
            }
        }
        if delta_col > 0 {
            let col = self.state.cursor_col;
            let line_len = self.current_line().len();
            if col < line_len {
                let len = {
                    let after = &self.current_line()[col..];
                    self.segments(after).first().map_or(1, |s| s.text.len())
                };
                self.set_cursor_col(col + len);
            } else if self.state.cursor_line + 1 < self.state.lines.len() {
                self.state.cursor_line += 1;
                self.set_cursor_col(0);
            } else if let Some(vl) = vls.get(current) {
                self.preferred_visual_col = Some(col.saturating_sub(vl.start));
            }
        } else if delta_col < 0 {
            let col = self.state.cursor_col;
            if col > 0 {
                let len = {
                    let before = self.before_cursor();
                    self.segments(before).last().map_or(1, |s| s.text.len())
                };
                self.set_cursor_col(col - len);
            } else if self.state.cursor_line > 0 {
                self.state.cursor_line -= 1;
                let end = self.current_line().len();
                self.set_cursor_col(end);
            }
        }
    }

    fn page_scroll(&mut self, direction: isize) {
        self.last_action = None;
        let vls = self.build_visual_line_map(self.last_width);
        let current = self.current_visual_line(&vls);
        let page = self.max_visible_lines as isize;
        let last = vls.len().saturating_sub(1) as isize;
        let target = (current as isize + direction * page).clamp(0, last) as usize;
        self.move_to_visual_line(&vls, current, target);
    }

    // ----- history -----

    fn navigate_history(&mut self, direction: isize) {
        self.last_action = None;
        if self.history.is_empty() {
            return;
        }
        let index = self.history_index.map_or(-1, |i| i as isize);
        let new_index = index - direction;
        if new_index < -1 || new_index >= self.history.len() as isize {
            return;
        }
        if self.history_index.is_none() && new_index >= 0 {
            self.push_undo();
        }
        if new_index < 0 {
            self.history_index = None;
            self.set_text_internal("");
        } else {
            let i = new_index as usize;
            self.history_index = Some(i);
            let text = self.history[i].clone();
            self.set_text_internal(&text);
        }
    }

    // ----- autocomplete -----

    fn is_at_start_of_message(&self) -> bool {
        if self.state.cursor_line != 0 {
            return false;
        }
        let before = self.before_cursor().trim();
        before.is_empty() || before == "/"
    }

    fn is_in_slash_command_context(&self, before: &str) -> bool {
        self.state.cursor_line == 0 && before.trim_start().starts_with('/')
    }

    fn try_trigger_autocomplete(&mut self) {
        self.request_autocomplete(false, false);
    }

    fn update_autocomplete(&mut self) {
        if let Some(list) = &self.autocomplete {
            let force = list.mode == AutocompleteMode::Force;
            self.request_autocomplete(force, false);
        }
    }

    fn handle_tab_completion(&mut self) {
        if self.provider.is_none() {
            return;
        }
        let before = self.before_cursor().to_string();
        if self.is_in_slash_command_context(&before) && !before.trim_start().contains(' ') {
            self.request_autocomplete(false, true);
        } else {
            self.request_autocomplete(true, true);
        }
    }

    fn request_autocomplete(&mut self, force: bool, explicit_tab: bool) {
        let Some(provider) = self.provider.as_ref() else {
            return;
        };
        let (lines, line, col) = (
            &self.state.lines,
            self.state.cursor_line,
            self.state.cursor_col,
        );
        if force && !provider.should_trigger_file_completion(lines, line, col) {
            return;
        }
        let suggestions = provider
            .suggestions(lines, line, col, force)
            .filter(|s| !s.items.is_empty());
        let Some(Suggestions { items, prefix }) = suggestions else {
            self.cancel_autocomplete();
            return;
        };
        if force && explicit_tab && items.len() == 1 {
            self.push_undo();
            self.last_action = None;
            self.apply_completion(&items[0], &prefix);
            return;
        }
        let selected = best_match_index(&items, &prefix).unwrap_or(0);
        self.autocomplete = Some(AutocompleteList {
            mode: if force {
                AutocompleteMode::Force
            } else {
                AutocompleteMode::Regular
            },
            prefix,
            items,
            selected,
        });
    }

    fn apply_completion(&mut self, item: &Suggestion, prefix: &str) {
        let Some(provider) = self.provider.as_ref() else {
            return;
        };
        let (lines, line, col) = provider.apply(
            &self.state.lines,
            self.state.cursor_line,
            self.state.cursor_col,
            item,
            prefix,
        );
        self.state.lines = if lines.is_empty() {
            vec![String::new()]
        } else {
            lines
        };
        self.state.cursor_line = line.min(self.state.lines.len() - 1);
        let text = self.current_line();
        let mut col = col.min(text.len());
        while !text.is_char_boundary(col) {
            col -= 1;
        }
        self.set_cursor_col(col);
    }

    fn apply_selected_completion(&mut self) {
        let Some(list) = self.autocomplete.take() else {
            return;
        };
        if let Some(item) = list.items.get(list.selected) {
            self.push_undo();
            self.last_action = None;
            self.apply_completion(item, &list.prefix);
        }
        self.cancel_autocomplete();
    }

    fn cancel_autocomplete(&mut self) {
        self.autocomplete = None;
    }

    // ----- rendering -----

    fn layout_text(&self, width: usize) -> Vec<LayoutLine> {
        if self.is_empty() {
            return vec![LayoutLine {
                text: String::new(),
                cursor: Some(0),
            }];
        }
        let mut out = Vec::new();
        for (i, line) in self.state.lines.iter().enumerate() {
            let is_current = i == self.state.cursor_line;
            let col = self.state.cursor_col;
            if visible_width(line) <= width {
                out.push(LayoutLine {
                    text: line.clone(),
                    cursor: is_current.then_some(col),
                });
                continue;
            }
            let segs = self.segments(line);
            let chunks = word_wrap_line(line, width, &segs);
            let count = chunks.len();
            for (ci, chunk) in chunks.into_iter().enumerate() {
                let text = &line[chunk.start..chunk.end];
                let cursor = if !is_current {
                    None
                } else if ci + 1 == count {
                    (col >= chunk.start).then(|| col - chunk.start)
                } else if col >= chunk.start && col < chunk.end {
                    Some((col - chunk.start).min(text.len()))
                } else {
                    None
                };
                out.push(LayoutLine {
                    text: text.to_string(),
                    cursor,
                });
            }
        }
        out
    }

    fn border_with_indicator(&self, indicator: &str, width: usize) -> String {
        let used = visible_width(indicator);
        if used <= width {
            self.border
                .paint(&format!("{indicator}{}", "─".repeat(width - used)))
        } else {
            self.border
                .paint(&truncate_to_width(indicator, width, "", false))
        }
    }

    fn render_lines(&mut self, width: usize) -> Vec<String> {
        if width == 0 {
            return Vec::new();
        }
        let padding = self.padding_x.min((width - 1) / 2);
        let content_width = width.saturating_sub(padding * 2).max(1);
        // Without padding one column is kept free for the cursor at line end.
        let layout_width = content_width
            .saturating_sub(if padding == 0 { 1 } else { 0 })
            .max(1);
        self.last_width = layout_width;

        let layout = self.layout_text(layout_width);
        let max_visible = self.max_visible_lines.max(1);
        let cursor_index = layout.iter().position(|l| l.cursor.is_some()).unwrap_or(0);
        if cursor_index < self.scroll_offset {
            self.scroll_offset = cursor_index;
        } else if cursor_index >= self.scroll_offset + max_visible {
            self.scroll_offset = cursor_index + 1 - max_visible;
        }
        let max_scroll = layout.len().saturating_sub(max_visible);
        self.scroll_offset = self.scroll_offset.min(max_scroll);
        let visible_end = (self.scroll_offset + max_visible).min(layout.len());
        let visible = &layout[self.scroll_offset..visible_end];

        let mut out = Vec::with_capacity(visible.len() + 2);
        if self.scroll_offset > 0 {
            let indicator = format!("─── ↑ {} more ", self.scroll_offset);
            out.push(self.border_with_indicator(&indicator, width));
        } else {
            out.push(self.border.paint(&"─".repeat(width)));
        }

        let emit_marker = self.focused && self.autocomplete.is_none();
        let pad = " ".repeat(padding);
        for line in visible {
            let mut display = line.text.clone();
            let mut line_width = visible_width(&line.text);
            let mut cursor_in_padding = false;
            if let Some(pos) = line.cursor {
                let pos = pos.min(line.text.len());
                let (before, after) = line.text.split_at(pos);
                let marker = if emit_marker { CURSOR_MARKER } else { "" };
                if after.is_empty() {
                    display = format!("{before}{marker}\x1b[7m \x1b[27m");
                    line_width += 1;
                    cursor_in_padding = line_width > content_width && padding > 0;
                } else {
                    let first = self
                        .segments(after)
                        .first()
                        .map_or(after, |s| s.text)
                        .to_string();
                    let rest = &after[first.len()..];
                    display = format!("{before}{marker}\x1b[7m{first}\x1b[27m{rest}");
                }
            }
            let fill = " ".repeat(content_width.saturating_sub(line_width));
            let right = if cursor_in_padding {
                &pad[1..]
            } else {
                pad.as_str()
            };
            out.push(fit(format!("{pad}{display}{fill}{right}"), width));
        }

        let below = layout.len() - visible_end;
        if below > 0 {
            let indicator = format!("─── ↓ {below} more ");
            out.push(self.border_with_indicator(&indicator, width));
        } else {
            out.push(self.border.paint(&"─".repeat(width)));
        }

        if let Some(list) = &self.autocomplete {
            for row in self.render_autocomplete(list, content_width) {
                let fill = " ".repeat(content_width.saturating_sub(visible_width(&row)));
                out.push(fit(format!("{pad}{row}{fill}{pad}"), width));
            }
        }
        out
    }

    fn render_autocomplete(&self, list: &AutocompleteList, width: usize) -> Vec<String> {
        const GAP: usize = 2;
        let n = list.items.len();
        if n == 0 {
            return Vec::new();
        }
        let (min_col, max_col) = if list.prefix.starts_with('/') {
            (12, 32)
        } else {
            (32, 32)
        };
        let widest = list
            .items
            .iter()
            .map(|i| visible_width(display_value(i)) + GAP)
            .max()
            .unwrap_or(0);
        let primary_width = widest.clamp(min_col, max_col);
        let max_visible = self.autocomplete_max_visible;
        let start = list
            .selected
            .saturating_sub(max_visible / 2)
            .min(n.saturating_sub(max_visible));
        let end = (start + max_visible).min(n);

        let mut out = Vec::new();
        for (i, item) in list.items.iter().enumerate().take(end).skip(start) {
            let selected = i == list.selected;
            let prefix = if selected { "→ " } else { "  " };
            let description = item
                .description
                .as_deref()
                .map(|d| {
                    d.split(['\r', '\n'])
                        .filter(|s| !s.is_empty())
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .map(|d| d.trim().to_string())
                .filter(|d| !d.is_empty());
            out.push(self.render_item(item, selected, prefix, description, width, primary_width));
        }
        if start > 0 || end < n {
            let info = format!("  ({}/{})", list.selected + 1, n);
            out.push(self.theme.scroll_info.paint(&truncate_to_width(
                &info,
                width.saturating_sub(2),
                "",
                false,
            )));
        }
        out
    }

    fn render_item(
        &self,
        item: &Suggestion,
        selected: bool,
        prefix: &str,
        description: Option<String>,
        width: usize,
        primary_width: usize,
    ) -> String {
        const GAP: usize = 2;
        const MIN_DESCRIPTION: usize = 10;
        let prefix_width = visible_width(prefix);
        let value = display_value(item);
        if let Some(desc) = description.filter(|_| width > 40) {
            let column = primary_width.min(width - prefix_width - 4).max(1);
            let max_primary = column.saturating_sub(GAP).max(1);
            let shown = truncate_to_width(value, max_primary, "", false);
            let shown_width = visible_width(&shown);
            let spacing = " ".repeat(column.saturating_sub(shown_width).max(1));
            let desc_start = prefix_width + shown_width + spacing.len();
            let remaining = width.saturating_sub(desc_start + 2);
            if remaining > MIN_DESCRIPTION {
                let desc = truncate_to_width(&desc, remaining, "", false);
                if selected {
                    return self
                        .theme
                        .select
                        .paint(&format!("{prefix}{shown}{spacing}{desc}"));
                }
                let styled = self.theme.description.paint(&format!("{spacing}{desc}"));
                return format!("{prefix}{shown}{styled}");
            }
        }
        let max_width = width.saturating_sub(prefix_width + 2);
        let shown = truncate_to_width(value, max_width, "", false);
        if selected {
            self.theme.select.paint(&format!("{prefix}{shown}"))
        } else {
            format!("{prefix}{shown}")
        }
    }
}

impl Component for Editor {
    fn render(&mut self, width: usize) -> Vec<String> {
        self.render_lines(width)
    }

    fn handle_input(&mut self, input: &Input) -> bool {
        match self.handle(input) {
            EditorAction::NotConsumed => false,
            EditorAction::Submit(text) => {
                self.submitted = Some(text);
                true
            }
            EditorAction::Consumed | EditorAction::Changed => true,
        }
    }
}

/// `row` cut to `width` columns; only degenerate widths (a wide character in one
/// column, a list in two) need it.
fn fit(row: String, width: usize) -> String {
    if visible_width(&row) > width {
        truncate_to_width(&row, width, "", false)
    } else {
        row
    }
}

/// The label, or the value when the label is empty.
fn display_value(item: &Suggestion) -> &str {
    if item.label.is_empty() {
        &item.value
    } else {
        &item.label
    }
}

/// Exact value match first, else the first value starting with `prefix`.
fn best_match_index(items: &[Suggestion], prefix: &str) -> Option<usize> {
    if prefix.is_empty() {
        return None;
    }
    items
        .iter()
        .position(|i| i.value == prefix)
        .or_else(|| items.iter().position(|i| i.value.starts_with(prefix)))
}

/// The character a key types, if it is a plain (or shifted) printable key.
fn printable(key: &KeyEvent) -> Option<char> {
    let KeyCode::Char(c) = key.code else {
        return None;
    };
    if !(key.modifiers - KeyModifiers::SHIFT).is_empty() || c.is_control() {
        return None;
    }
    if key.modifiers.contains(KeyModifiers::SHIFT) && c.is_ascii_lowercase() {
        return Some(c.to_ascii_uppercase());
    }
    Some(c)
}

/// After whitespace (or at the start): `@…` or `#…` up to the cursor.
fn in_symbol_context(before: &str) -> bool {
    let token = before.rsplit(char::is_whitespace).next().unwrap_or("");
    token.starts_with(['@', '#'])
}

/// Line endings to `\n`, tabs to four spaces.
fn normalize_text(text: &str) -> String {
    text.replace("\r\n", "\n")
        .replace('\r', "\n")
        .replace('\t', "    ")
}

/// `ESC [ <code> ; 5 u` (Ctrl+letter re-encoded by some terminals inside a paste) back
/// to the control byte.
fn decode_csi_u_controls(text: &str) -> String {
    if !text.contains("\x1b[") {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find("\x1b[") {
        out.push_str(&rest[..pos]);
        let tail = &rest[pos + 2..];
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        let decoded = (digits > 0 && tail[digits..].starts_with(";5u"))
            .then(|| tail[..digits].parse::<u32>().ok())
            .flatten()
            .and_then(|cp| match cp {
                97..=122 => char::from_u32(cp - 96),
                65..=90 => char::from_u32(cp - 64),
                _ => None,
            });
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &tail[digits + 3..];
            }
            None => {
                out.push_str("\x1b[");
                rest = tail;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_csi_u_controls_in_pastes() {
        assert_eq!(decode_csi_u_controls("a\x1b[106;5ub"), "a\nb");
        assert_eq!(decode_csi_u_controls("a\x1b[1;2Ab"), "a\x1b[1;2Ab");
    }

    #[test]
    fn symbol_context_needs_a_token_start() {
        assert!(in_symbol_context("see @src"));
        assert!(in_symbol_context("@"));
        assert!(!in_symbol_context("mail a@b"));
    }
}
