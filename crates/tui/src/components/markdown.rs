//! Markdown rendered to styled lines that fit the viewport width.
//!
//! The text is parsed with pulldown-cmark into a small block tree, then each block is
//! laid out at the width it gets (lists and quotes narrow it for their children), the
//! way the TypeScript pi draws assistant messages.

use std::collections::HashMap;
use std::iter::Peekable;
use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, OffsetIter, Options, Parser, Tag, TagEnd};

use crate::component::Component;
use crate::highlight::{SyntaxTheme, highlight_code, supports_language};
use crate::style::Style;
use crate::width::{
    Segment, SgrState, segments, truncate_to_width, visible_width, wrap_text_with_ansi,
};

/// Styles for each markdown element; `syntax` colors highlighted code blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MarkdownTheme {
    pub heading: Style,
    pub link: Style,
    pub link_url: Style,
    pub code: Style,
    pub code_block: Style,
    pub code_block_border: Style,
    pub quote: Style,
    pub quote_border: Style,
    pub hr: Style,
    pub list_bullet: Style,
    pub bold: Style,
    pub italic: Style,
    pub strikethrough: Style,
    pub underline: Style,
    pub syntax: SyntaxTheme,
}

/// Indent of code block lines under their fence border.
const CODE_BLOCK_INDENT: &str = "  ";
/// Containers nested deeper than this are flattened (keeps recursion bounded).
const MAX_DEPTH: usize = 32;
/// Table columns may break words longer than this to fit the width.
const MAX_UNBROKEN_WORD: usize = 30;

/// A markdown document drawn as styled lines; re-rendered only when text or width change.
pub struct Markdown {
    text: String,
    padding_x: usize,
    padding_y: usize,
    theme: MarkdownTheme,
    default_style: Option<Style>,
    cache: Option<(usize, Vec<String>)>,
    code_cache: HashMap<(String, String), Vec<String>>,
}

impl Markdown {
    /// A markdown view of `text` with horizontal and vertical padding.
    pub fn new(
        text: impl Into<String>,
        padding_x: usize,
        padding_y: usize,
        theme: MarkdownTheme,
    ) -> Self {
        Markdown {
            text: text.into(),
            padding_x,
            padding_y,
            theme,
            default_style: None,
            cache: None,
            code_cache: HashMap::new(),
        }
    }

    /// Style plain text with `style` (e.g. italic + muted for thinking); its background
    /// fills whole lines.
    pub fn with_default_style(mut self, style: Style) -> Self {
        self.default_style = Some(style);
        self.cache = None;
        self
    }

    /// Replace the text (streaming calls this with ever longer text).
    pub fn set_text(&mut self, text: impl Into<String>) {
        let text = text.into();
        if text != self.text {
            self.text = text;
            self.cache = None;
        }
    }

    /// The current markdown source.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Replace the theme and drop cached output.
    pub fn set_theme(&mut self, theme: MarkdownTheme) {
        self.theme = theme;
        self.invalidate();
    }

    fn render_uncached(&mut self, width: usize) -> Vec<String> {
        if self.text.trim().is_empty() {
            return Vec::new();
        }
        let pad = self.padding_x.min(width.saturating_sub(1) / 2);
        let content_width = width.saturating_sub(2 * pad).max(1);
        let source = self.text.replace('\t', "   ");
        let nodes = TreeBuilder::new(&source).blocks(0);

        let default_text = self
            .default_style
            .map(|s| Style { bg: None, ..s })
            .unwrap_or_default();
        let ctx = Ctx {
            text: default_text,
            prefix: default_text.prefix(),
        };
        let mut renderer = Renderer {
            theme: &self.theme,
            source: &source,
            old_code: std::mem::take(&mut self.code_cache),
            new_code: HashMap::new(),
        };
        let lines = renderer.nodes(&nodes, content_width, &ctx, false);
        self.code_cache = renderer.new_code;

        let bg = self
            .default_style
            .and_then(|s| s.bg.map(|c| Style::bg(c).with_mode(s.mode).prefix()))
            .filter(|p| !p.is_empty());
        let finish = |line: String| -> String {
            let body = format!("{}{line}", " ".repeat(pad));
            let fill = width.saturating_sub(visible_width(&body));
            match &bg {
                Some(bg) => format!(
                    "{bg}{}{}\x1b[49m",
                    body.replace("\x1b[0m", &format!("\x1b[0m{bg}")),
                    " ".repeat(fill)
                ),
                None => format!("{body}{}", " ".repeat(fill)),
            }
        };

        let mut out = Vec::with_capacity(lines.len() + 2 * self.padding_y);
        for _ in 0..self.padding_y {
            out.push(finish(String::new()));
        }
        for line in lines {
            for piece in fit(line, content_width) {
                out.push(finish(close_styles(piece)));
            }
        }
        for _ in 0..self.padding_y {
            out.push(finish(String::new()));
        }
        out
    }
}

impl Component for Markdown {
    fn render(&mut self, width: usize) -> Vec<String> {
        if let Some((w, lines)) = &self.cache
            && *w == width
        {
            return lines.clone();
        }
        let lines = self.render_uncached(width);
        self.cache = Some((width, lines.clone()));
        lines
    }

    fn invalidate(&mut self) {
        self.cache = None;
        self.code_cache.clear();
    }
}

/// Safety net: re-wrap (and as a last resort cut) a line wider than `width`.
fn fit(line: String, width: usize) -> Vec<String> {
    if visible_width(&line) <= width {
        return vec![line];
    }
    wrap_text_with_ansi(&line, width)
        .into_iter()
        .map(|l| {
            if visible_width(&l) > width {
                truncate_to_width(&l, width, "", false)
            } else {
                l
            }
        })
        .collect()
}

/// End a line with a reset when styles are still open at its end.
fn close_styles(line: String) -> String {
    let mut state = SgrState::default();
    for seg in segments(&line) {
        if let Segment::Escape(e) = seg {
            state.apply(e);
        }
    }
    if state.is_active() {
        format!("{line}\x1b[0m")
    } else {
        line
    }
}

/// `over` applied on top of `base`: colors of `over` win, attributes add up.
fn merge(base: Style, over: Style) -> Style {
    let over_colors = over.fg.is_some() || over.bg.is_some();
    Style {
        fg: over.fg.or(base.fg),
        bg: over.bg.or(base.bg),
        bold: base.bold || over.bold,
        dim: base.dim || over.dim,
        italic: base.italic || over.italic,
        underline: base.underline || over.underline,
        strikethrough: base.strikethrough || over.strikethrough,
        inverse: base.inverse || over.inverse,
        mode: if over_colors { over.mode } else { base.mode },
    }
}

// ---------------------------------------------------------------------------
// Block tree
// ---------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Inline {
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
enum Block {
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
struct Node {
    block: Block,
    range: Range<usize>,
}

/// Builds the block tree from pulldown-cmark's event stream.
struct TreeBuilder<'s> {
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
    fn new(source: &'s str) -> Self {
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
    fn blocks(&mut self, depth: usize) -> Vec<Node> {
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

fn plain_text(inlines: &[Inline]) -> String {
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

// ---------------------------------------------------------------------------
// Layout
// ---------------------------------------------------------------------------

/// The style plain text gets, and what re-opens the surrounding styles after a span.
struct Ctx {
    text: Style,
    prefix: String,
}

impl Ctx {
    fn inside(&self, span: &Style) -> Ctx {
        Ctx {
            text: self.text,
            prefix: format!("{}{}", self.prefix, span.prefix()),
        }
    }
}

struct Renderer<'a> {
    theme: &'a MarkdownTheme,
    source: &'a str,
    old_code: HashMap<(String, String), Vec<String>>,
    new_code: HashMap<(String, String), Vec<String>>,
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
    fn nodes(&mut self, nodes: &[Node], width: usize, ctx: &Ctx, compact: bool) -> Vec<String> {
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
    fn blank_between(&self, prev: &Node, next: &Node) -> bool {
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
        for inline in inlines {
            match inline {
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

    fn table(
        &mut self,
        head: &[Vec<Inline>],
        rows: &[Vec<Vec<Inline>>],
        raw: &str,
        width: usize,
        ctx: &Ctx,
    ) -> Vec<String> {
        let cols = head.len();
        if cols == 0 {
            return Vec::new();
        }
        // "│ " + cells joined by " │ " + " │"
        let overhead = 3 * cols + 1;
        if width < overhead + cols {
            return wrap(raw, width);
        }
        let available = width - overhead;
        let head_text: Vec<String> = head.iter().map(|c| self.inlines(c, ctx)).collect();
        let row_text: Vec<Vec<String>> = rows
            .iter()
            .map(|r| {
                (0..cols)
                    .map(|i| r.get(i).map(|c| self.inlines(c, ctx)).unwrap_or_default())
                    .collect()
            })
            .collect();

        let longest_word = |s: &str| {
            s.split_whitespace()
                .map(visible_width)
                .max()
                .unwrap_or(0)
                .min(MAX_UNBROKEN_WORD)
        };
        let mut natural = vec![0usize; cols];
        let mut min_word = vec![1usize; cols];
        for row in std::iter::once(&head_text).chain(row_text.iter()) {
            for (i, cell) in row.iter().enumerate() {
                natural[i] = natural[i].max(visible_width(cell));
                min_word[i] = min_word[i].max(longest_word(cell));
            }
        }

        let mut min_cols = min_word.clone();
        let mut min_sum: usize = min_cols.iter().sum();
        if min_sum > available {
            // Words do not fit: share the space by how much each column wants.
            min_cols = vec![1; cols];
            let remaining = available - cols;
            let weight: usize = min_word.iter().map(|w| w - 1).sum();
            for (c, w) in min_cols.iter_mut().zip(&min_word) {
                *c += ((w - 1) * remaining).checked_div(weight).unwrap_or(0);
            }
            let mut leftover = available.saturating_sub(min_cols.iter().sum());
            for c in min_cols.iter_mut() {
                if leftover == 0 {
                    break;
                }
                *c += 1;
                leftover -= 1;
            }
            min_sum = min_cols.iter().sum();
        }

        let widths: Vec<usize> = if natural.iter().sum::<usize>() + overhead <= width {
            natural
                .iter()
                .zip(&min_cols)
                .map(|(n, m)| (*n).max(*m))
                .collect()
        } else {
            let potential: usize = natural
                .iter()
                .zip(&min_cols)
                .map(|(n, m)| n.saturating_sub(*m))
                .sum();
            let extra = available.saturating_sub(min_sum);
            let mut widths: Vec<usize> = natural
                .iter()
                .zip(&min_cols)
                .map(|(n, m)| {
                    m + (n.saturating_sub(*m) * extra)
                        .checked_div(potential)
                        .unwrap_or(0)
                })
                .collect();
            let mut remaining = available.saturating_sub(widths.iter().sum());
            while remaining > 0 {
                let mut grew = false;
                for (w, n) in widths.iter_mut().zip(&natural) {
                    if remaining > 0 && *w < *n {
                        *w += 1;
                        remaining -= 1;
                        grew = true;
                    }
                }
                if !grew {
                    break;
                }
            }
            widths
        };

        let border = |left: &str, mid: &str, right: &str| {
            let cells: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
            format!("{left}─{}─{right}", cells.join(&format!("─{mid}─")))
        };
        let bold = self.theme.bold;
        let cell_rows = |cells: &[String], header: bool| -> Vec<String> {
            let wrapped: Vec<Vec<String>> = cells
                .iter()
                .zip(&widths)
                .map(|(c, w)| wrap(c, *w))
                .collect();
            let height = wrapped.iter().map(Vec::len).max().unwrap_or(1);
            (0..height)
                .map(|line| {
                    let parts: Vec<String> = wrapped
                        .iter()
                        .zip(&widths)
                        .map(|(cell, w)| {
                            let text = cell.get(line).map_or("", String::as_str);
                            let padded = format!(
                                "{text}{}",
                                " ".repeat(w.saturating_sub(visible_width(text)))
                            );
                            if header { bold.paint(&padded) } else { padded }
                        })
                        .collect();
                    format!("│ {} │", parts.join(" │ "))
                })
                .collect()
        };

        let mut lines = vec![border("┌", "┬", "┐")];
        lines.extend(cell_rows(&head_text, true));
        let separator = border("├", "┼", "┤");
        lines.push(separator.clone());
        for (i, row) in row_text.iter().enumerate() {
            lines.extend(cell_rows(row, false));
            if i + 1 < row_text.len() {
                lines.push(separator.clone());
            }
        }
        lines.push(border("└", "┴", "┘"));
        lines
    }
}
