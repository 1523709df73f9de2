//! Markdown rendered to styled lines that fit the viewport width.
//!
//! The text is parsed with pulldown-cmark into a small block tree, then each block is
//! laid out at the width it gets (lists and quotes narrow it for their children), the
//! way the TypeScript pi draws assistant messages.

mod render;
mod tree;

use std::collections::HashMap;

use crate::component::Component;
use crate::highlight::SyntaxTheme;
use crate::style::Style;
use crate::width::{
    Segment, SgrState, segments, truncate_to_width, visible_width, wrap_text_with_ansi,
};

use render::{Ctx, Renderer};
use tree::TreeBuilder;

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
/// A markdown document drawn as styled lines; re-rendered only when text or width change.
pub struct Markdown {
    text: String,
    padding_x: usize,
    padding_y: usize,
    theme: MarkdownTheme,
    default_style: Option<Style>,
    cache: Option<(usize, Vec<String>)>,
    code_cache: HashMap<(String, String), Vec<String>>,
    /// The finished lines of each top-level block by its source, at `blocks.0` columns: a
    /// streamed reply re-renders only its growing last block, as pi 1.6 does.
    blocks: (usize, HashMap<String, Vec<String>>),
    /// Links as OSC 8 hyperlinks (the terminal shows them) instead of `text (url)`.
    hyperlinks: bool,
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
            blocks: (0, HashMap::new()),
            hyperlinks: crate::capabilities::get().hyperlinks,
        }
    }

    /// Links as OSC 8 hyperlinks or as `text (url)`, whatever the terminal was detected to
    /// show.
    pub fn with_hyperlinks(mut self, hyperlinks: bool) -> Self {
        self.hyperlinks = hyperlinks;
        self.invalidate();
        self
    }

    /// Style plain text with `style` (e.g. italic + muted for thinking); its background
    /// fills whole lines.
    pub fn with_default_style(mut self, style: Style) -> Self {
        self.default_style = Some(style);
        self.invalidate();
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
            hyperlinks: self.hyperlinks,
        };
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

        // A reference definition can change how an earlier block reads: no reuse then.
        let reuse = !has_reference_definition(&source);
        let mut old_blocks = match std::mem::take(&mut self.blocks) {
            (w, blocks) if w == width && reuse => blocks,
            _ => HashMap::new(),
        };
        let mut blocks = HashMap::new();
        let mut out = Vec::with_capacity(2 * self.padding_y);
        for _ in 0..self.padding_y {
            out.push(finish(String::new()));
        }
        for (i, node) in nodes.iter().enumerate() {
            let raw = source.get(node.range.clone()).unwrap_or("");
            let cached = old_blocks.remove(raw).or_else(|| blocks.get(raw).cloned());
            let lines = cached.unwrap_or_else(|| {
                let mut lines = Vec::new();
                let drawn = renderer.nodes(std::slice::from_ref(node), content_width, &ctx, false);
                for line in drawn {
                    for piece in fit(line, content_width) {
                        lines.push(finish(close_styles(piece)));
                    }
                }
                lines
            });
            out.extend(lines.iter().cloned());
            if reuse {
                blocks.insert(raw.to_owned(), lines);
            }
            if let Some(next) = nodes.get(i + 1)
                && renderer.blank_between(node, next)
            {
                out.push(finish(String::new()));
            }
        }
        self.code_cache = renderer.new_code;
        self.blocks = (width, blocks);
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
        self.blocks = (0, HashMap::new());
    }
}

/// Whether a line of `source` looks like a link reference definition (`[label]: url`).
fn has_reference_definition(source: &str) -> bool {
    source.lines().any(|line| {
        let line = line.trim_start_matches(['>', ' ']);
        line.starts_with('[')
            && line
                .find("]:")
                .is_some_and(|end| end > 1 && !line[1..end].contains(']'))
    })
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
