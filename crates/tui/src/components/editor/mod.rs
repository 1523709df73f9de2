//! The multi-line prompt editor.
//!
//! A buffer of logical lines with a cursor (line, byte column on a grapheme boundary),
//! Emacs-style motions and kills, undo, prompt history, collapsed large pastes and an
//! autocomplete list drawn under the text. Keys come through [`Keybindings`]; keys the
//! editor does not own come back as [`EditorAction::NotConsumed`].

mod autocomplete;
mod editing;
mod history;
mod input;
mod kill_ring;
mod kill_yank;
mod layout;
mod motion;
mod mouse;
mod paste;
mod render;
mod undo;
mod visual_lines;

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::autocomplete::AutocompleteProvider;
use crate::component::Component;
use crate::input::Input;
use crate::keybindings::Keybindings;
use crate::style::Style;

use autocomplete::AutocompleteList;
use editing::normalize_text;
use kill_ring::KillRing;
use layout::{Seg, expand_markers, segment};
use undo::UndoStack;

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
    /// Text rows drawn by the last render (between the borders).
    rendered_rows: usize,
    max_visible_lines: usize,
    provider: Option<Box<dyn AutocompleteProvider>>,
    autocomplete: Option<AutocompleteList>,
    autocomplete_max_visible: usize,
    /// A status drawn into the top border (pi 1.6's embedded working indicator): the
    /// whole status, and the spinner alone for when it does not fit.
    top_status: Option<(String, String)>,
    /// Characters that open completion at a token's start: `@`, `#` and any a provider
    /// declared (pi 1.6's `triggerCharacters`).
    trigger_characters: Vec<char>,
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

/// The characters that open completion without a provider's own (`@` files, `#` symbols).
const DEFAULT_TRIGGER_CHARACTERS: [char; 2] = ['@', '#'];

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
            rendered_rows: 1,
            max_visible_lines: 5,
            provider: None,
            autocomplete: None,
            autocomplete_max_visible: 5,
            top_status: None,
            trigger_characters: DEFAULT_TRIGGER_CHARACTERS.to_vec(),
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
    /// Draws `status` (styled; `(whole, spinner only)`) into the top border, or nothing.
    pub fn set_top_status(&mut self, status: Option<(String, String)>) {
        self.top_status = status;
    }

    pub fn set_autocomplete_max_visible(&mut self, max: usize) {
        self.autocomplete_max_visible = max.clamp(3, 20);
    }

    /// Adds characters that open completion at a token's start to `@` and `#`, as pi
    /// 1.6's `setAutocompleteTriggerCharacters`: single characters other than `/` and
    /// whitespace.
    pub fn set_autocomplete_trigger_characters(&mut self, characters: &[String]) {
        let mut next = DEFAULT_TRIGGER_CHARACTERS.to_vec();
        for text in characters {
            let mut chars = text.chars();
            if let (Some(c), None) = (chars.next(), chars.next())
                && c != '/'
                && !c.is_whitespace()
                && !next.contains(&c)
            {
                next.push(c);
            }
        }
        self.trigger_characters = next;
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
