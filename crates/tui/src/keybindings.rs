//! Keybinding definitions, user overrides and matching.
