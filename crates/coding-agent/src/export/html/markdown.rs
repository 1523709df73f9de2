//! Markdown to HTML: raw HTML shown as text, unsafe links dropped, images as links.

use pulldown_cmark::{CodeBlockKind, Event, LinkType, Options, Parser, Tag, TagEnd};

use super::format::esc;

/// Markdown wrapped in a `<div class="md">`.
pub(super) fn markdown_div(text: &str) -> String {
    format!("<div class=\"md\">{}</div>\n", markdown(text))
}

/// Markdown options: GFM tables, strikethrough and task lists; `~x~` parses as subscript
/// only so that it can be put back as text (strikethrough needs `~~`, as in pi's page).
const MARKDOWN_OPTIONS: Options = Options::ENABLE_TABLES
    .union(Options::ENABLE_STRIKETHROUGH)
    .union(Options::ENABLE_TASKLISTS)
    .union(Options::ENABLE_SUBSCRIPT);

/// CommonMark with GFM tables, strikethrough and task lists as HTML. Raw HTML shows as
/// text, links keep only http(s), mailto and relative URLs, single newlines break lines.
pub(super) fn markdown(text: &str) -> String {
    let mut events: Vec<Event> = Vec::new();
    // The open fenced or indented code block: its language and text.
    let mut code: Option<(String, String)> = None;
    // The lines of the open raw HTML block.
    let mut html_block: Option<String> = None;
    // For each open link and image: whether it renders as a link.
    let mut links: Vec<bool> = Vec::new();
    let prepared = cjk_friendly(text);
    for event in Parser::new_ext(&prepared, MARKDOWN_OPTIONS) {
        if let Some((lang, body)) = &mut code {
            match event {
                Event::Text(t) => body.push_str(&t),
                Event::End(TagEnd::CodeBlock) => {
                    let body = body.strip_suffix('\n').unwrap_or(body);
                    events.push(Event::Html(code_block(lang, body).into()));
                    code = None;
                }
                _ => {}
            }
            continue;
        }
        if let Some(block) = &mut html_block {
            match event {
                Event::Html(t) | Event::Text(t) => block.push_str(&t),
                Event::End(TagEnd::HtmlBlock) => {
                    let shown = esc(block.trim_end()).replace('\n', "<br>\n");
                    events.push(Event::Html(format!("<p>{shown}</p>\n").into()));
                    html_block = None;
                }
                _ => {}
            }
            continue;
        }
        match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => {
                        info.split_whitespace().next().unwrap_or("").to_owned()
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                code = Some((lang, String::new()));
            }
            Event::Start(Tag::HtmlBlock) => html_block = Some(String::new()),
            Event::Html(t) | Event::InlineHtml(t) => events.push(Event::Text(t)),
            Event::SoftBreak | Event::HardBreak => events.push(Event::Html("<br>\n".into())),
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }) => {
                let keep = !links.contains(&true) && safe_url(&dest_url);
                links.push(keep);
                if keep {
                    events.push(Event::Start(Tag::Link {
                        link_type,
                        dest_url,
                        title,
                        id,
                    }));
                }
            }
            Event::End(TagEnd::Link) => {
                if links.pop() == Some(true) {
                    events.push(Event::End(TagEnd::Link));
                }
            }
            // Images would load from elsewhere: they show as their alt text, a link to
            // the image when the URL is safe.
            Event::Start(Tag::Image {
                dest_url,
                title,
                id,
                ..
            }) => {
                let keep = !links.contains(&true) && safe_url(&dest_url);
                links.push(keep);
                if keep {
                    events.push(Event::Start(Tag::Link {
                        link_type: LinkType::Inline,
                        dest_url,
                        title,
                        id,
                    }));
                }
                events.push(Event::Html("<span class=\"md-image\">".into()));
            }
            Event::End(TagEnd::Image) => {
                events.push(Event::Html("</span>".into()));
                if links.pop() == Some(true) {
                    events.push(Event::End(TagEnd::Link));
                }
            }
            Event::Start(Tag::Subscript) | Event::End(TagEnd::Subscript) => {
                events.push(Event::Text("~".into()));
            }
            event => events.push(event),
        }
    }
    let mut html = String::with_capacity(text.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut html, events.into_iter());
    if prepared.len() != text.len() {
        html.retain(|c| c != CJK_MARK);
    }
    html
}

/// A punctuation character put next to a `*` run so that CommonMark sees the run as both
/// opening and closing; removed from the HTML again.
const CJK_MARK: char = '\u{2E18}';

/// Emphasis next to CJK punctuation, as pi's page parses it (marked with the CJK-friendly
/// extension): `**「重要」**です` and `これは*（注）*` are emphasis. CommonMark refuses a `*`
/// run with punctuation on one side and a letter on the other; when either neighbour is
/// CJK, a punctuation mark is put on the letter's side, which makes the run both opening
/// and closing as the CJK-friendly rules do.
fn cjk_friendly(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains(CJK_MARK) || !text.contains('*') || !text.chars().any(is_cjk) {
        return text.into();
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 16);
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '*' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let end = i + chars[i..].iter().take_while(|c| **c == '*').count();
        let before = i.checked_sub(1).map(|k| chars[k]);
        let after = chars.get(end).copied();
        let run: String = chars[i..end].iter().collect();
        match (before, after) {
            (Some(b), Some(a)) if b.is_whitespace() || a.is_whitespace() => out.push_str(&run),
            (Some(b), Some(a)) if (is_cjk(b) || is_cjk(a)) && is_punct(b) && !is_punct(a) => {
                out.push_str(&run);
                out.push(CJK_MARK);
            }
            (Some(b), Some(a)) if (is_cjk(b) || is_cjk(a)) && !is_punct(b) && is_punct(a) => {
                out.push(CJK_MARK);
                out.push_str(&run);
            }
            _ => out.push_str(&run),
        }
        i = end;
    }
    out.into()
}

/// CJK characters: wide and fullwidth ideographs, kana, Hangul, CJK punctuation.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x11FF | 0x2E80..=0x303E | 0x3041..=0x33FF | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF | 0xA960..=0xA97F | 0xAC00..=0xD7FF | 0xF900..=0xFAFF
        | 0xFE30..=0xFE4F | 0xFF01..=0xFF60 | 0xFFE0..=0xFFE6 | 0x20000..=0x3FFFD)
}

/// Punctuation as CommonMark counts it (Unicode P and S), for the characters this module
/// needs to tell apart: ASCII, general and CJK punctuation, fullwidth forms.
fn is_punct(c: char) -> bool {
    c.is_ascii_punctuation()
        || matches!(c as u32,
            0x2010..=0x2027 | 0x2030..=0x205E | 0x3001..=0x3004 | 0x3008..=0x3020 | 0x3030
            | 0x303D | 0x30FB | 0xFE30..=0xFE4F | 0xFF01..=0xFF0F | 0xFF1A..=0xFF20
            | 0xFF3B..=0xFF40 | 0xFF5B..=0xFF65)
}

/// Whether a link URL is safe to keep: http(s), mailto or relative (no other scheme).
pub(super) fn safe_url(url: &str) -> bool {
    // Browsers skip tabs, newlines and other control characters inside a URL's scheme.
    let url: String = url
        .chars()
        .filter(|c| !c.is_ascii_control() && *c != ' ')
        .collect();
    match url.find([':', '/', '?', '#']) {
        Some(end) if url[end..].starts_with(':') => {
            let scheme = url[..end].to_ascii_lowercase();
            matches!(scheme.as_str(), "http" | "https" | "mailto")
        }
        _ => true,
    }
}

/// A code block, its language (when given) as `data-lang`.
fn code_block(lang: &str, code: &str) -> String {
    let lang_attr = if lang.is_empty() {
        String::new()
    } else {
        format!(" data-lang=\"{}\"", esc(lang))
    };
    format!(
        "<pre class=\"code\"{lang_attr}><code>{}</code></pre>\n",
        esc(code)
    )
}
