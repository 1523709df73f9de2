//! pi-tui: an inline, differential terminal renderer and the components pi draws with.
//!
//! Components turn state into lines (`render(width)`), the renderer diffs those lines
//! against what the terminal shows and rewrites only what changed. It knows terminals,
//! not agents.

pub mod autocomplete;
pub mod component;
pub mod components;
pub mod fuzzy;
pub mod highlight;
pub mod input;
pub mod keybindings;
pub mod renderer;
pub mod style;
pub mod terminal;
pub mod width;

pub use component::{CURSOR_MARKER, Component};
pub use input::{Input, KeyCode, KeyEvent, KeyModifiers, key_id, normalize_key_id};
pub use style::{Color, ColorMode, Style};
pub use width::{truncate_to_width, visible_width, wrap_text_with_ansi};
