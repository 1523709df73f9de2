//! Snapshot and width tests of the markdown component.
#![allow(clippy::unwrap_used)]

use pi_tui::components::markdown::{Markdown, MarkdownTheme};
use pi_tui::highlight::SyntaxTheme;
use pi_tui::{Color, Component, Style, visible_width};

fn c(i: u8) -> Style {
    Style::fg(Color::Ansi256(i))
}

fn theme() -> MarkdownTheme {
    MarkdownTheme {
        heading: c(1),
        link: c(2),
        link_url: c(3),
        code: c(4),
        code_block: c(5),
        code_block_border: c(6),
        quote: c(7),
        quote_border: c(8),
        hr: c(9),
        list_bullet: c(10),
        bold: Style::plain().bold(),
        italic: Style::plain().italic(),
        strikethrough: Style::plain().strikethrough(),
        underline: Style::plain().underline(),
        syntax: SyntaxTheme {
            comment: c(20),
            keyword: c(21),
            function: c(22),
            variable: c(23),
            string: c(24),
            number: c(25),
            type_: c(26),
            operator: c(27),
            punctuation: c(28),
        },
    }
}

/// Drop escape sequences (CSI and string sequences) so the layout is readable.
fn strip(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(ch) = chars.next() {
        if ch != '\x1b' {
            out.push(ch);
            continue;
        }
        match chars.next() {
            Some('[') => {
                for c in chars.by_ref() {
                    if ('\x40'..='\x7e').contains(&c) {
                        break;
                    }
                }
            }
            Some(']' | '_' | 'P' | '^') => {
                while let Some(c) = chars.next() {
                    if c == '\x07' {
                        break;
                    }
                    if c == '\x1b' && chars.peek() == Some(&'\\') {
                        chars.next();
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

fn render(text: &str, width: usize) -> Vec<String> {
    // Links as `text (url)`: the snapshots do not depend on the terminal the tests run in.
    let lines = Markdown::new(text, 1, 0, theme())
        .with_hyperlinks(false)
        .render(width);
    for line in &lines {
        assert!(visible_width(line) <= width, "{line:?} wider than {width}");
    }
    lines
}

/// Escaped lines (escapes shown) followed by the stripped layout.
fn snapshot(text: &str, width: usize) -> String {
    let lines = render(text, width);
    let escaped: Vec<String> = lines
        .iter()
        .map(|l| format!("{:?}", l.trim_end()))
        .collect();
    let plain: Vec<String> = lines.iter().map(|l| format!("{}|", strip(l))).collect();
    format!(
        "--- width {width}, escapes ---\n{}\n--- width {width}, plain ---\n{}\n",
        escaped.join("\n"),
        plain.join("\n")
    )
}

fn snap_both(name: &str, text: &str) {
    for width in [40, 80] {
        insta::assert_snapshot!(format!("{name}_{width}"), snapshot(text, width));
    }
}

const HEADINGS: &str = "# Title here\n\nA first paragraph with **bold**, *italic*, ~~struck~~ and `inline code`, long enough to wrap at forty columns.\nA soft break keeps its line.\n\n## Second level\n\n### Third *level*\nText right under the heading.\n\n---\n\nLast words with a single ~tilde~.";

const LISTS: &str = "Steps:\n- first item that is long enough to wrap onto a second line at forty\n- second\n  - nested one\n  - nested two with `code`\n    1. deep ordered\n    2. deep ordered two\n- third\n\n3. three\n4. four, whose text also runs long enough to wrap at the narrow width\n\n- [ ] open task\n- [x] done task";

const RUST_CODE: &str = "Some code:\n\n```rust\n// add two numbers\nfn add(a: i32, b: i32) -> i32 {\n    let s = \"a string that is quite long and will need to be wrapped at forty\";\n    a + b + 42\n}\n```\n\nAfter.";

const UNKNOWN_CODE: &str = "```brainfudge\n+++[>++<-]>.\n\tindented with a tab\n```";

const TABLE: &str = "| Name | Description | Size |\n|------|-------------|-----:|\n| `alpha` | The first entry, with a description long enough to wrap | 10 |\n| beta | **bold** cell | 200000 |\n| gamma | | 3 |";

const QUOTE: &str = "> A quoted paragraph that goes on for a while so that it wraps inside the quote border.\n>\n> > Nested quote with *emphasis*.\n>\n> - a list in a quote\n\nOutside.";

const LINKS: &str = "See [the docs](https://example.com/docs) or <https://example.com>, mail <me@example.com>, and [same](same).";

const STREAMING: &str = "Here is a partial answer:\n\n```python\ndef f(x):\n    return x *";

#[test]
fn headings_and_paragraphs() {
    snap_both("headings", HEADINGS);
}

#[test]
fn nested_lists() {
    snap_both("lists", LISTS);
}

#[test]
fn code_block_rust() {
    snap_both("code_rust", RUST_CODE);
}

#[test]
fn code_block_unknown_language() {
    snap_both("code_unknown", UNKNOWN_CODE);
}

#[test]
fn table() {
    snap_both("table", TABLE);
}

#[test]
fn block_quote() {
    snap_both("quote", QUOTE);
}

#[test]
fn links() {
    snap_both("links", LINKS);
}

#[test]
fn links_are_hyperlinks_where_the_terminal_shows_them() {
    let lines = Markdown::new(
        "See [the docs](https://example.com/docs) now.",
        0,
        0,
        theme(),
    )
    .with_hyperlinks(true)
    .render(80);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].contains("\x1b]8;;https://example.com/docs\x1b\\"),
        "{lines:?}"
    );
    assert!(!lines[0].contains("(https://"), "{lines:?}");
    let link = lines[0]
        .split("\x1b]8;;https://example.com/docs\x1b\\")
        .nth(1)
        .unwrap();
    let text = link.split("\x1b]8;;\x1b\\").next().unwrap();
    assert_eq!(visible_width(text), "the docs".len(), "{lines:?}");
}

#[test]
fn unterminated_streaming_fence() {
    snap_both("streaming_fence", STREAMING);
}

#[test]
fn narrow_table_falls_back_to_source() {
    insta::assert_snapshot!(snapshot("| a | b | c |\n|---|---|---|\n| 1 | 2 | 3 |", 10));
}

#[test]
fn default_style_and_padding() {
    let style = Style::fg(Color::Ansi256(99))
        .italic()
        .with_bg(Color::Ansi256(236));
    let mut md =
        Markdown::new("thinking *hard* about `x`", 2, 1, theme()).with_default_style(style);
    let lines = md.render(20);
    insta::assert_debug_snapshot!(lines);
    for line in &lines {
        assert_eq!(visible_width(line), 20);
    }
}

#[test]
fn empty_text_renders_nothing() {
    assert!(render("", 40).is_empty());
    assert!(render("  \n\n ", 40).is_empty());
}

#[test]
fn render_is_cached_until_text_or_width_change() {
    let mut md = Markdown::new("hello", 0, 0, theme());
    let a = md.render(30);
    assert_eq!(md.render(30), a);
    md.set_text("hello world");
    assert_eq!(strip(md.render(30)[0].trim_end()), "hello world");
    assert_eq!(md.render(12)[0].len(), 12);
    md.invalidate();
    assert_eq!(strip(md.render(30)[0].trim_end()), "hello world");
}

fn long_document() -> String {
    [
        HEADINGS,
        LISTS,
        RUST_CODE,
        UNKNOWN_CODE,
        TABLE,
        QUOTE,
        LINKS,
        "日本語のテキストを折り返す、とても長い文章です。絵文字も👍🏽あります。",
        "averyveryveryveryveryveryveryveryveryveryveryverylongwordwithoutanybreakpoints",
        "| 長い | 列 |\n|---|---|\n| 日本語のセル内容 | averyveryveryverylongcellword |",
        "<div>\nsome html\n</div>",
        "1. a\n   > quoted in a list\n   ```js\n   const x = 1;\n   ```",
        STREAMING,
    ]
    .join("\n\n")
}

#[test]
fn no_line_exceeds_the_width() {
    let doc = long_document();
    let mut md = Markdown::new(doc.clone(), 1, 1, theme());
    for width in 10..=120 {
        for line in md.render(width) {
            assert!(visible_width(&line) <= width, "width {width}: {line:?}");
        }
    }
    // Every prefix of the document, as streaming would show it.
    let mut md = Markdown::new("", 0, 0, theme());
    let mut end = 0;
    while end < doc.len() {
        end = (end + 7).min(doc.len());
        while !doc.is_char_boundary(end) {
            end += 1;
        }
        md.set_text(&doc[..end]);
        for width in [10, 33] {
            for line in md.render(width) {
                assert!(visible_width(&line) <= width, "width {width}: {line:?}");
            }
        }
    }
}

#[test]
fn deep_nesting_does_not_overflow() {
    let quotes = format!("{} deep", ">".repeat(5000));
    let lists: String = (0..300)
        .map(|i| format!("{}- x\n", "  ".repeat(i)))
        .collect();
    let emphasis = format!("{}a{}", "*".repeat(3000), "*".repeat(3000));
    for doc in [quotes, lists, emphasis] {
        for line in render(&doc, 40) {
            assert!(visible_width(&line) <= 40);
        }
    }
}

/// A reply streamed a few characters at a time draws, at every step, exactly what a fresh
/// render of the same text draws: reusing the blocks that did not change is invisible.
#[test]
fn streamed_text_draws_as_a_fresh_render_at_every_step() {
    let doc = "# Title\n\nSome *prose* with `code` and a [link](https://e.x).\n\n\
               - one\n- two\n  - nested\n\n1. first\n2. second\n\n\
               > quoted\n> text\n\n```rust\nfn main() {\n    let x = 1;\n}\n```\n\n\
               | a | b |\n|---|---|\n| 1 | 2 |\n\nA paragraph\n- into a list\n\n\
               Same line\n\nSame line\n\n---\n\nTail [ref] text.\n\n[ref]: https://r.x\n\nEnd.";
    for width in [40, 80] {
        let mut streamed = Markdown::new("", 1, 0, theme());
        let chars: Vec<char> = doc.chars().collect();
        let mut end = 0;
        while end < chars.len() {
            end = (end + 3).min(chars.len());
            let text: String = chars[..end].iter().collect();
            streamed.set_text(text.clone());
            assert_eq!(
                streamed.render(width),
                render_at(&text, width),
                "after {end} chars at width {width}"
            );
        }
    }
}

fn render_at(text: &str, width: usize) -> Vec<String> {
    Markdown::new(text, 1, 0, theme()).render(width)
}

/// HTML comments are not shown, as in pi 1.6.0 (its output for these texts, at 40
/// columns): an inline comment and the space before the text after it go, a block of
/// comments goes with its blank line, other HTML keeps all but its comments.
#[test]
fn html_comments_are_not_shown() {
    let cases: [(&str, &[&str]); 5] = [
        ("Before <!-- hidden --> after", &["Before after"]),
        ("<!-- a comment -->\n\nText after.", &["Text after."]),
        ("Start\n\n<!--\nblock\n-->\n\nEnd", &["Start", "", "End"]),
        ("<!-- lead --> words", &["words"]),
        ("<div>x<!-- c --></div>\n\nok", &["<div>x</div>", "", "ok"]),
    ];
    for (text, want) in cases {
        let shown: Vec<String> = Markdown::new(text, 0, 0, theme())
            .render(40)
            .iter()
            .map(|l| strip(l).trim_end().to_owned())
            .collect();
        assert_eq!(shown, want, "{text:?}");
    }
}
