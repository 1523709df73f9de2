//! The HTML page of a session: inline CSS and script, images as `data:` URIs and the
//! session's JSONL embedded (base64) for download, so the file works offline.
//!
//! Everything is rendered here, not in the browser: the current branch from root to leaf,
//! each tool call with its result, and totals over the whole session.

mod ansi;
mod assets;
mod content;
mod entries;
mod format;
mod markdown;
mod page;
mod sidebar;
mod stats;
mod theme_css;
mod tools;

#[cfg(test)]
mod tests;

use crate::modes::interactive::theme::Theme;
use crate::session::SessionManager;

use page::Page;

/// Renders the session as a complete HTML document (the current branch, root to leaf)
/// in the page's own palette (light or dark as the viewer's browser prefers).
pub fn render_session_html(session: &SessionManager) -> String {
    render_session_html_themed(session, None)
}

/// [`render_session_html`] in `theme`'s colours when one is given (the active theme of
/// `/export` and RPC `export_html`).
pub fn render_session_html_themed(session: &SessionManager, theme: Option<&Theme>) -> String {
    let branch = session.branch_entries();
    Page::new(session, &branch).render(theme)
}
