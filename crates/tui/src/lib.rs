//! pi-tui: an inline, differential terminal renderer and the components pi draws with.
//!
//! Components turn state into lines (`render(width)`), the renderer diffs those lines
//! against what the terminal shows and rewrites only what changed. It knows terminals,
//! not agents.

pub mod autocomplete;
pub mod capabilities;
pub mod color_space;
pub mod component;
pub mod components;
pub mod events;
pub mod fuzzy;
pub mod highlight;
pub mod image;
pub mod input;
pub mod input_parser;
pub mod keybindings;
pub mod renderer;
pub mod screen;
pub mod screen_images;
pub mod search;
pub mod style;
pub mod terminal;
pub mod terminal_colors;
pub mod viewport;
pub mod width;

pub use autocomplete::{
    AutocompleteProvider, CombinedAutocompleteProvider, SlashCommand, Suggestion, Suggestions,
};
pub use component::{CURSOR_MARKER, Component};
pub use components::editor::{Editor, EditorAction, EditorTheme};
pub use components::loader::Loader;
pub use components::markdown::{Markdown, MarkdownTheme};
pub use components::select_list::{SelectAction, SelectItem, SelectList, SelectListTheme};
pub use components::spacer::Spacer;
pub use components::text::Text;
pub use fuzzy::{fuzzy_filter, fuzzy_match};
pub use highlight::{SyntaxTheme, highlight_code, supports_language};
pub use input::{Input, KeyCode, KeyEvent, KeyModifiers, key_id, normalize_key_id};
pub use keybindings::{KeybindingDef, Keybindings, TUI_KEYBINDINGS};
pub use renderer::{RenderStats, Renderer};
pub use style::{Color, ColorMode, Style};
pub use terminal::{CrosstermTerminal, Terminal, VirtualTerminal};
pub use width::{truncate_to_width, visible_width, wrap_text_with_ansi};
