//! The components pi draws with.

pub mod editor;
pub mod image;
pub mod loader;
pub mod markdown;
pub mod select_list;
pub mod spacer;
pub mod text;
