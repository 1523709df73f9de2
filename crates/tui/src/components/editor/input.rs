//! Input dispatch: which editor operation a key or paste runs, in the order pi checks
//! its keybindings (jump mode, undo, the open suggestion list, editing, submit, motion).

use std::sync::Arc;

use super::{Editor, Jump};
use crate::input::{Input, KeyCode, KeyEvent, KeyModifiers, key_id};
use crate::keybindings::Keybindings;

impl Editor {
    pub(super) fn handle_inner(&mut self, input: &Input) -> bool {
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
