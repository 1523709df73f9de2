//! Layout of the block tree: each block drawn as styled lines at the width it gets
//! (lists and quotes narrow it for their children), with inline spans re-opening the
//! surrounding styles after they end.

mod table;

use std::collections::HashMap;

use super::tree::{Block, Inline, Node, plain_text};
use super::{MarkdownTheme, merge};
use crate::highlight::{highlight_code, supports_language};
use crate::style::Style;
use crate::width::{visible_width, wrap_text_with_ansi};

/// Indent of code block lines under their fence border.
const CODE_BLOCK_INDENT: &str = "  ";

/// The style plain text gets, and what re-opens the surrounding styles after a span.
pub(super) struct Ctx {
    pub(super) text: Style,
    pub(super) prefix: String,
}

impl Ctx {
    fn inside(&self, span: &Style) -> Ctx {
        Ctx {
            text: self.text,
            prefix: format!("{}{}", self.prefix, span.prefix()),
        }
    }
}

pub(super) struct Renderer<'a> {
    pub(super) theme: &'a MarkdownTheme,
    pub(super) source: &'a str,
    pub(super) old_code: HashMap<(String, String), Vec<String>>,
    pub(super) new_code: HashMap<(String, String), Vec<String>>,
    pub(super) hyperlinks: bool,
}

fn wrap(text: &str, width: usize) -> Vec<String> {
    wrap_text_with_ansi(text, width.max(1))
}

fn paint_lines(style: &Style, text: &str) -> String {
    text.split('\n')
        .map(|l| style.paint(l))
        .collect::<Vec<_>>()
        .join("\n")
}

impl Renderer<'_> {
    pub(super) fn nodes(
        &mut self,
        nodes: &[Node],
        width: usize,
        ctx: &Ctx,
        compact: bool,
    ) -> Vec<String> {
        let mut lines = Vec::new();
        for (i, node) in nodes.iter().enumerate() {
            lines.extend(self.node(node, width, ctx));
            if let Some(next) = nodes.get(i + 1)
                && !compact
                && self.blank_between(node, next)
            {
                lines.push(String::new());
            }
        }
        lines
    }

    /// Blocks are separated by a blank line, except a paragraph running straight
    /// into a list.
    pub(super) fn blank_between(&self, prev: &Node, next: &Node) -> bool {
        if !matches!(
            (&prev.block, &next.block),
            (Block::Paragraph(_), Block::List { .. })
        ) {
            return true;
        }
        let end = self
            .source
            .get(..prev.range.end)
            .map_or(0, |s| s.trim_end().len());
        let gap = self.source.get(end..next.range.start).unwrap_or("");
        gap.matches('\n').count() >= 2
    }

    fn node(&mut self, node: &Node, width: usize, ctx: &Ctx) -> Vec<String> {
        let theme = self.theme;
        match &node.block {
            Block::Paragraph(inlines) => wrap(&self.inlines(inlines, ctx), width),
            Block::Heading(level, inlines) => {
                let mut style = merge(theme.bold, theme.heading);
                if *level == 1 {
                    style = merge(theme.underline, style);
                }
                let heading_ctx = Ctx {
                    text: style,
                    prefix: style.prefix(),
                };
                let body = self.inlines(inlines, &heading_ctx);
                let text = if *level >= 3 {
                    format!("{}{body}", style.paint(&format!("{} ", "#".repeat(*level))))
                } else {
                    body
                };
                wrap(&text, width)
            }
            Block::Code { lang, text } => self.code_block(lang, text, width),
            Block::List { start, items } => self.list(*start, items, width, ctx),
            Block::Quote(children) => {
                let style = merge(theme.italic, theme.quote);
                let quote_ctx = Ctx {
                    text: Style::plain(),
                    prefix: style.prefix(),
                };
                let mut lines =
                    self.nodes(children, width.saturating_sub(2).max(1), &quote_ctx, false);
                while lines.last().is_some_and(String::is_empty) {
                    lines.pop();
                }
                let border = theme.quote_border.paint("│ ");
                lines
                    .into_iter()
                    .map(|l| {
                        if l.is_empty() {
                            border.clone()
                        } else {
                            format!("{border}{}", style.paint(&l))
                        }
                    })
                    .collect()
            }
            Block::Rule => vec![theme.hr.paint(&"─".repeat(width.min(80)))],
            Block::Html(raw) => wrap(&paint_lines(&ctx.text, raw.trim()), width),
            Block::Table { head, rows } => {
                let raw = self.source.get(node.range.clone()).unwrap_or("").trim_end();
                self.table(head, rows, raw, width, ctx)
            }
        }
    }

    fn inlines(&self, inlines: &[Inline], ctx: &Ctx) -> String {
        let theme = self.theme;
        let mut out = String::new();
        let span = |out: &mut String, style: &Style, children: &[Inline]| {
            let inner = self.inlines(children, &ctx.inside(style));
            out.push_str(&style.paint(&inner));
            out.push_str(&ctx.prefix);
        };
        // After an inline comment that starts the text or follows a space, the text's
        // leading spaces go too (pi drops the comment and the gap it leaves).
        let mut drop_leading_space = false;
        for (i, inline) in inlines.iter().enumerate() {
            let drop = std::mem::take(&mut drop_leading_space);
            match inline {
                Inline::Html(t) if t.starts_with("<!--") => {
                    drop_leading_space = i == 0
                        || matches!(&inlines[i - 1], Inline::Text(p) if p.ends_with([' ', '\t']));
                }
                Inline::Text(t) if drop => {
                    out.push_str(&paint_lines(&ctx.text, t.trim_start_matches([' ', '\t'])))
                }
                Inline::Text(t) | Inline::Html(t) => out.push_str(&paint_lines(&ctx.text, t)),
                Inline::Break => out.push('\n'),
                Inline::Code(c) => {
                    out.push_str(&theme.code.paint(c));
                    out.push_str(&ctx.prefix);
                }
                Inline::Task(done) => {
                    out.push_str(&theme.list_bullet.paint(if *done { "[x] " } else { "[ ] " }));
                    out.push_str(&ctx.prefix);
                }
                Inline::Strong(c) => span(&mut out, &theme.bold, c),
                Inline::Emphasis(c) => span(&mut out, &theme.italic, c),
                Inline::Strike(c) => span(&mut out, &theme.strikethrough, c),
                Inline::Link { url, children } => {
                    let style = merge(theme.underline, theme.link);
                    let inner = self.inlines(children, &ctx.inside(&style));
                    if self.hyperlinks {
                        // The terminal links the text itself: no URL after it.
                        out.push_str(&crate::capabilities::hyperlink(&style.paint(&inner), url));
                        out.push_str(&ctx.prefix);
                        continue;
                    }
                    out.push_str(&style.paint(&inner));
                    let text = plain_text(children);
                    let bare = url.strip_prefix("mailto:").unwrap_or(url);
                    if text != *url && text != bare {
                        out.push_str(&theme.link_url.paint(&format!(" ({url})")));
                    }
                    out.push_str(&ctx.prefix);
                }
            }
        }
        if !ctx.prefix.is_empty() {
            while out.ends_with(&ctx.prefix) {
                out.truncate(out.len() - ctx.prefix.len());
            }
        }
        out
    }

    fn code_block(&mut self, lang: &str, text: &str, width: usize) -> Vec<String> {
        let theme = self.theme;
        let key = (lang.to_string(), text.to_string());
        let code_lines = match self.old_code.remove(&key) {
            Some(lines) => lines,
            None if supports_language(lang) => highlight_code(text, Some(lang), &theme.syntax),
            None => text
                .split('\n')
                .map(|l| theme.code_block.paint(l))
                .collect(),
        };
        let indent = if width > CODE_BLOCK_INDENT.len() {
            CODE_BLOCK_INDENT
        } else {
            ""
        };
        let inner = width - indent.len();
        let mut lines = wrap(&theme.code_block_border.paint(&format!("```{lang}")), width);
        for line in &code_lines {
            for piece in wrap(line, inner) {
                lines.push(format!("{indent}{piece}"));
            }
        }
        lines.push(theme.code_block_border.paint("```"));
        self.new_code.insert(key, code_lines);
        lines
    }

    fn list(
        &mut self,
        start: Option<u64>,
        items: &[Vec<Node>],
        width: usize,
        ctx: &Ctx,
    ) -> Vec<String> {
        let mut lines = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let bullet = match start {
                Some(n) => format!("{}. ", n.saturating_add(i as u64)),
                None => "- ".to_string(),
            };
            let bullet_width = visible_width(&bullet);
            let (bullet, bullet_width) = if bullet_width < width {
                (bullet, bullet_width)
            } else {
                (String::new(), 0)
            };
            let item_lines = self.nodes(item, width - bullet_width, ctx, true);
            let painted = self.theme.list_bullet.paint(&bullet);
            if item_lines.is_empty() {
                lines.push(painted);
                continue;
            }
            let pad = " ".repeat(bullet_width);
            for (j, line) in item_lines.into_iter().enumerate() {
                if j == 0 {
                    // The bullet's color reset would end a surrounding quote style.
                    lines.push(format!("{painted}{}{line}", ctx.prefix));
                } else if line.is_empty() {
                    lines.push(line);
                } else {
                    lines.push(format!("{pad}{line}"));
                }
            }
        }
        lines
    }
}
