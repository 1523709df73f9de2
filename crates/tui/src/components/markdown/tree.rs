//! The block tree: pulldown-cmark's event stream gathered into blocks (paragraphs,
//! headings, code, lists, quotes, tables) holding inline spans, with their source ranges.

use std::iter::Peekable;
use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, OffsetIter, Options, Parser, Tag, TagEnd};

/// Containers nested deeper than this are flattened (keeps recursion bounded).
const MAX_DEPTH: usize = 32;

#[derive(Debug, Clone)]
pub(super) enum Inline {
    Text(String),
    Code(String),
    Html(String),
    Break,
    Task(bool),
    Strong(Vec<Inline>),
    Emphasis(Vec<Inline>),
    Strike(Vec<Inline>),
    Link { url: String, children: Vec<Inline> },
}

#[derive(Debug, Clone)]
pub(super) enum Block {
    Paragraph(Vec<Inline>),
    Heading(usize, Vec<Inline>),
    Code {
        lang: String,
        text: String,
    },
    List {
        start: Option<u64>,
        items: Vec<Vec<Node>>,
    },
    Quote(Vec<Node>),
    Rule,
    Html(String),
    Table {
        head: Vec<Vec<Inline>>,
        rows: Vec<Vec<Vec<Inline>>>,
    },
}

#[derive(Debug, Clone)]
pub(super) struct Node {
    pub(super) block: Block,
    pub(super) range: Range<usize>,
}

/// Builds the block tree from pulldown-cmark's event stream.
pub(super) struct TreeBuilder<'s> {
    source: &'s str,
    events: Peekable<OffsetIter<'s>>,
    last_end: usize,
}

fn is_inline(event: &Event<'_>) -> bool {
    match event {
        Event::Text(_)
        | Event::Code(_)
        | Event::InlineHtml(_)
        | Event::InlineMath(_)
        | Event::DisplayMath(_)
        | Event::FootnoteReference(_)
        | Event::SoftBreak
        | Event::HardBreak
        | Event::TaskListMarker(_) => true,
        Event::Start(tag) => matches!(
            tag,
            Tag::Emphasis
                | Tag::Strong
                | Tag::Strikethrough
                | Tag::Superscript
                | Tag::Subscript
                | Tag::Link { .. }
                | Tag::Image { .. }
        ),
        _ => false,
    }
}

impl<'s> TreeBuilder<'s> {
    pub(super) fn new(source: &'s str) -> Self {
        let options =
            Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
        TreeBuilder {
            source,
            events: Parser::new_ext(source, options)
                .into_offset_iter()
                .peekable(),
            last_end: 0,
        }
    }

    fn next(&mut self) -> Option<(Event<'s>, Range<usize>)> {
        let item = self.events.next();
        if let Some((_, range)) = &item {
            self.last_end = self.last_end.max(range.end);
        }
        item
    }

    /// Blocks up to the end of the enclosing container (whose `End` is consumed).
    pub(super) fn blocks(&mut self, depth: usize) -> Vec<Node> {
        let mut out = Vec::new();
        let mut skipped = 0usize;
        while let Some((event, range)) = self.events.peek() {
            if is_inline(event) {
                // Tight list items hold their text without a paragraph.
                let start = range.start;
                let inlines = self.inlines(depth, true);
                out.push(Node {
                    block: Block::Paragraph(inlines),
                    range: start..self.last_end,
                });
                continue;
            }
            let Some((event, range)) = self.next() else {
                break;
            };
            let block = match event {
                Event::End(_) => {
                    if skipped == 0 {
                        return out;
                    }
                    skipped -= 1;
                    continue;
                }
                Event::Rule => Block::Rule,
                Event::Html(html) => Block::Html(html.to_string()),
                Event::Start(tag) => match tag {
                    Tag::Paragraph => Block::Paragraph(self.inlines(depth, false)),
                    Tag::Heading { level, .. } => {
                        Block::Heading(level as usize, self.inlines(depth, false))
                    }
                    Tag::CodeBlock(kind) => {
                        let lang = match kind {
                            CodeBlockKind::Fenced(info) => {
                                info.split_whitespace().next().unwrap_or("").to_string()
                            }
                            CodeBlockKind::Indented => String::new(),
                        };
                        let mut text = self.raw_text();
                        if text.ends_with('\n') {
                            text.pop();
                        }
                        Block::Code { lang, text }
                    }
                    Tag::HtmlBlock => Block::Html(self.raw_text()),
                    Tag::BlockQuote(_) if depth < MAX_DEPTH => Block::Quote(self.blocks(depth + 1)),
                    Tag::List(start) if depth < MAX_DEPTH => Block::List {
                        start,
                        items: self.items(depth + 1),
                    },
                    Tag::Table(_) => self.table(depth),
                    _ => {
                        // Other containers (and any past the depth limit) are flattened.
                        skipped += 1;
                        continue;
                    }
                },
                _ => continue,
            };
            let block = match block {
                // An HTML block of comments only is dropped; others lose their comments.
                Block::Html(raw) => match strip_html_comments(&raw) {
                    kept if kept.trim().is_empty() => continue,
                    kept => Block::Html(kept),
                },
                other => other,
            };
            out.push(Node { block, range });
        }
        out
    }

    fn items(&mut self, depth: usize) -> Vec<Vec<Node>> {
        let mut items = Vec::new();
        while let Some((event, _)) = self.next() {
            match event {
                Event::Start(Tag::Item) => items.push(self.blocks(depth)),
                Event::End(TagEnd::List(_)) => break,
                _ => {}
            }
        }
        items
    }

    /// Text of a code or HTML block up to its end.
    fn raw_text(&mut self) -> String {
        let mut text = String::new();
        while let Some((event, _)) = self.next() {
            match event {
                Event::Text(t) | Event::Html(t) | Event::InlineHtml(t) | Event::Code(t) => {
                    text.push_str(&t)
                }
                Event::SoftBreak | Event::HardBreak => text.push('\n'),
                Event::End(_) => break,
                _ => {}
            }
        }
        text
    }

    fn table(&mut self, depth: usize) -> Block {
        let mut head = Vec::new();
        let mut rows = Vec::new();
        let mut row = Vec::new();
        let mut in_head = false;
        while let Some((event, _)) = self.next() {
            match event {
                Event::Start(Tag::TableHead) => {
                    in_head = true;
                    row.clear();
                }
                Event::End(TagEnd::TableHead) => {
                    in_head = false;
                    if !row.is_empty() {
                        head = std::mem::take(&mut row);
                    }
                }
                Event::Start(Tag::TableRow) => row.clear(),
                Event::End(TagEnd::TableRow) => {
                    if in_head {
                        head = std::mem::take(&mut row);
                    } else {
                        rows.push(std::mem::take(&mut row));
                    }
                }
                Event::Start(Tag::TableCell) => row.push(self.inlines(depth + 1, false)),
                Event::End(TagEnd::Table) => break,
                _ => {}
            }
        }
        Block::Table { head, rows }
    }

    /// Inline content up to the end of the enclosing span (consumed); with `implicit`,
    /// up to the first non-inline event (left in place).
    fn inlines(&mut self, depth: usize, implicit: bool) -> Vec<Inline> {
        let mut out = Vec::new();
        let mut skipped = 0usize;
        while let Some((event, _)) = self.events.peek() {
            if implicit && skipped == 0 && !is_inline(event) {
                break;
            }
            let Some((event, range)) = self.next() else {
                break;
            };
            match event {
                Event::Text(t) => push_text(&mut out, &t),
                Event::Code(c) => out.push(Inline::Code(c.to_string())),
                Event::InlineHtml(h) | Event::Html(h) => out.push(Inline::Html(h.to_string())),
                Event::InlineMath(m) | Event::DisplayMath(m) => push_text(&mut out, &m),
                Event::FootnoteReference(r) => push_text(&mut out, &format!("[^{r}]")),
                Event::SoftBreak | Event::HardBreak => out.push(Inline::Break),
                Event::TaskListMarker(done) => out.push(Inline::Task(done)),
                Event::Rule => {}
                Event::End(_) => {
                    if skipped == 0 {
                        break;
                    }
                    skipped -= 1;
                }
                Event::Start(_) if depth >= MAX_DEPTH => skipped += 1,
                Event::Start(tag) => {
                    let children = self.inlines(depth + 1, false);
                    match tag {
                        Tag::Emphasis => out.push(Inline::Emphasis(children)),
                        Tag::Strong => out.push(Inline::Strong(children)),
                        Tag::Strikethrough => {
                            // Only `~~text~~` strikes; a single `~` stays literal.
                            let raw = self.source.get(range).unwrap_or("");
                            if raw.starts_with("~~") {
                                out.push(Inline::Strike(children));
                            } else {
                                push_text(&mut out, "~");
                                out.extend(children);
                                push_text(&mut out, "~");
                            }
                        }
                        Tag::Link { dest_url, .. } => out.push(Inline::Link {
                            url: dest_url.to_string(),
                            children,
                        }),
                        _ => out.extend(children),
                    }
                }
            }
        }
        out
    }
}

fn push_text(out: &mut Vec<Inline>, text: &str) {
    if let Some(Inline::Text(last)) = out.last_mut() {
        last.push_str(text);
    } else {
        out.push(Inline::Text(text.to_string()));
    }
}

pub(super) fn plain_text(inlines: &[Inline]) -> String {
    let mut out = String::new();
    for inline in inlines {
        match inline {
            Inline::Text(t) | Inline::Code(t) | Inline::Html(t) => out.push_str(t),
            Inline::Break => out.push('\n'),
            Inline::Task(_) => {}
            Inline::Strong(c)
            | Inline::Emphasis(c)
            | Inline::Strike(c)
            | Inline::Link { children: c, .. } => {
                out.push_str(&plain_text(c));
            }
        }
    }
    out
}

/// `html` without its `<!-- … -->` comments (an unclosed one runs to the end), as pi's
/// `stripHtmlComments`.
pub(super) fn strip_html_comments(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(start) = rest.find("<!--") {
        out.push_str(&rest[..start]);
        rest = match rest[start + 4..].find("-->") {
            Some(end) => &rest[start + 4 + end + 3..],
            None => "",
        };
    }
    out.push_str(rest);
    out
}
