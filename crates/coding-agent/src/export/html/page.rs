//! The page around the entries: the document skeleton, the session header, the totals
//! footer and the embedded session file.

use std::collections::{HashMap, HashSet};

use base64::Engine as _;

use pi_agent_core::AgentMessage;
use pi_ai::{Message, ToolResultMessage};

use super::assets::{CSS, SCRIPT};
use super::format::{count, esc, group_digits, time};
use super::sidebar::{sidebar, tree_order};
use super::stats::{Totals, models};
use super::theme_css::theme_style;
use crate::modes::interactive::theme::Theme;
use crate::session::{SessionEntry, SessionManager};

pub(super) struct Page<'a> {
    pub(super) session: &'a SessionManager,
    branch: &'a [&'a SessionEntry],
    /// Tool results on the branch, by tool call id.
    pub(super) results: HashMap<&'a str, &'a ToolResultMessage>,
    /// Ids of tool calls on the branch; their results render with the call.
    pub(super) calls: HashSet<&'a str>,
    pub(super) out: String,
}

impl<'a> Page<'a> {
    pub(super) fn new(session: &'a SessionManager, branch: &'a [&'a SessionEntry]) -> Self {
        let mut results = HashMap::new();
        let mut calls = HashSet::new();
        for entry in session.entries() {
            match entry.message() {
                Some(AgentMessage::Llm(Message::ToolResult(r))) => {
                    results.insert(r.tool_call_id.as_str(), &**r);
                }
                Some(AgentMessage::Llm(Message::Assistant(a))) => {
                    calls.extend(a.tool_calls().map(|c| c.id.as_str()));
                }
                _ => {}
            }
        }
        Self {
            session,
            branch,
            results,
            calls,
            out: String::with_capacity(64 * 1024),
        }
    }

    pub(super) fn render(mut self, theme: Option<&Theme>) -> String {
        let header = self.session.header();
        let title = match self.session.name() {
            Some(name) => format!("{name} · pi session"),
            None => format!("pi session {}", header.id),
        };
        self.out
            .push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
        let scheme = match theme {
            Some(theme) if theme.is_light() => "light",
            Some(_) => "dark",
            None => "dark light",
        };
        self.out.push_str(&format!(
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <meta name=\"color-scheme\" content=\"{scheme}\">\n\
             <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
             img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n",
        ));
        self.out
            .push_str(&format!("<title>{}</title>\n<style>\n", esc(&title)));
        self.out.push_str(CSS);
        self.out.push_str("</style>\n");
        if let Some(theme) = theme {
            self.out.push_str(&theme_style(theme));
        }
        self.out.push_str("</head>\n<body>\n");
        // Every branch is in the page; entries off the shown branch are hidden until the
        // sidebar switches to their branch.
        let tree = tree_order(self.session.entries());
        let on_path: HashSet<&str> = self.branch.iter().map(|e| e.id.as_str()).collect();
        self.out.push_str(&sidebar(&tree, &on_path));
        self.out.push_str("<main>\n");
        self.header();
        self.out
            .push_str("<section class=\"messages\" id=\"messages\">\n");
        let mut shown = false;
        for node in &tree {
            let entry = node.entry;
            let on = on_path.contains(entry.id.as_str());
            self.out.push_str(&format!(
                "<div class=\"entry\" data-id=\"{}\" data-parent=\"{}\"{}>\n",
                esc(&entry.id),
                esc(entry.parent_id.as_deref().unwrap_or("")),
                if on { "" } else { " hidden" }
            ));
            let body = self.out.len();
            self.entry(entry);
            // Entries that render nothing keep their (empty) element: the script walks
            // the tree through `data-parent`.
            shown |= on && self.out.len() > body;
            self.out.push_str("</div>\n");
        }
        if !shown {
            self.out
                .push_str("<p class=\"muted empty\">No messages in this session yet.</p>\n");
        }
        self.out.push_str("</section>\n");
        self.footer();
        self.out.push_str("</main>\n");
        self.out.push_str(&format!(
            "<script type=\"application/x-pi-session+base64\" id=\"pi-session-data\">{}</script>\n",
            base64::engine::general_purpose::STANDARD.encode(session_jsonl(self.session))
        ));
        self.out.push_str("<script>\n");
        self.out.push_str(SCRIPT);
        self.out.push_str("</script>\n</body>\n</html>\n");
        self.out
    }

    fn header(&mut self) {
        let session = self.session;
        let header = session.header();
        let heading = session.name().unwrap_or("Session");
        let mut html = format!(
            "<header class=\"session-header\">\n<h1>{}</h1>\n<dl class=\"info\">\n",
            esc(heading)
        );
        if let Some(name) = session.name() {
            html.push_str(&format!("<dt>Name</dt><dd>{}</dd>\n", esc(name)));
        }
        html.push_str(&format!(
            "<dt>Session</dt><dd><code>{}</code></dd>\n<dt>Working directory</dt><dd><code>{}</code></dd>\n<dt>Created</dt><dd>{}</dd>\n",
            esc(&header.id),
            esc(&header.cwd),
            time(&header.timestamp)
        ));
        if let Some(parent) = &header.parent_session {
            html.push_str(&format!(
                "<dt>Parent session</dt><dd><code>{}</code></dd>\n",
                esc(parent)
            ));
        }
        let models = models(session);
        let model = if models.is_empty() {
            "unknown".to_owned()
        } else {
            models.iter().map(|m| esc(m)).collect::<Vec<_>>().join(", ")
        };
        let label = if models.len() > 1 { "Models" } else { "Model" };
        html.push_str(&format!("<dt>{label}</dt><dd>{model}</dd>\n</dl>\n"));
        let file_name = session
            .session_file()
            .and_then(|f| f.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| format!("{}.jsonl", header.id));
        html.push_str(&format!(
            "<div class=\"toolbar\">\
             <button type=\"button\" data-action=\"expand\">Expand all</button>\
             <button type=\"button\" data-action=\"collapse\">Collapse all</button>\
             <button type=\"button\" data-action=\"toggle-hidden-messages\" aria-pressed=\"false\" \
             title=\"Show custom messages marked as hidden in the terminal (H)\">Show hidden messages</button>\
             <button type=\"button\" data-action=\"download\" data-filename=\"{}\">Download JSONL</button>\
             </div>\n<p class=\"muted help-hint\">H toggles hidden messages</p>\n</header>\n",
            esc(&file_name)
        ));
        self.out.push_str(&html);
    }

    fn footer(&mut self) {
        let totals = Totals::of(self.session.entries());
        let mut counts = vec![
            format!("{} user", totals.user),
            format!("{} assistant", totals.assistant),
            count(totals.tool_results as u64, "tool result", "tool results"),
        ];
        if totals.bash > 0 {
            counts.push(format!("{} bash", totals.bash));
        }
        if totals.compactions > 0 {
            counts.push(count(
                totals.compactions as u64,
                "compaction",
                "compactions",
            ));
        }
        if totals.branch_summaries > 0 {
            counts.push(count(
                totals.branch_summaries as u64,
                "branch summary",
                "branch summaries",
            ));
        }
        let tokens = format!(
            "input {} · output {} · cache read {} · cache write {} · total {}",
            group_digits(totals.usage.input),
            group_digits(totals.usage.output),
            group_digits(totals.usage.cache_read),
            group_digits(totals.usage.cache_write),
            group_digits(
                totals.usage.input
                    + totals.usage.output
                    + totals.usage.cache_read
                    + totals.usage.cache_write
            ),
        );
        let scope = if self.branch.len() < self.session.entries().len() {
            "Totals cover every branch of the session. "
        } else {
            ""
        };
        self.out.push_str(&format!(
            "<footer class=\"totals\">\n<h2>Totals</h2>\n<dl class=\"info\">\n\
             <dt>Messages</dt><dd>{}</dd>\n<dt>Tool calls</dt><dd>{}</dd>\n\
             <dt>Tokens</dt><dd>{}</dd>\n<dt>Cost</dt><dd>${:.4}</dd>\n</dl>\n\
             <p class=\"muted\">{scope}Exported by pi {}.</p>\n</footer>\n",
            counts.join(" · "),
            totals.tool_calls,
            tokens,
            totals.cost,
            crate::PI_VERSION
        ));
    }
}

/// The header and every entry as JSONL, as the session file holds them.
fn session_jsonl(session: &SessionManager) -> String {
    let mut text = serde_json::to_string(session.header()).unwrap_or_default();
    text.push('\n');
    for entry in session.entries() {
        if let Ok(line) = entry.to_line() {
            text.push_str(&line);
            text.push('\n');
        }
    }
    text
}
