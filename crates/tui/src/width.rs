//! Visible width, wrapping and truncation of text that carries ANSI escapes.
//!
//! Widths are terminal columns: graphemes through unicode-width (wide CJK and emoji
//! are 2, combining marks 0), escape sequences 0, a tab 3 (as the TypeScript pi).

use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// One piece of a styled string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segment<'a> {
    /// An escape sequence (CSI, OSC, APC, …), zero columns wide.
    Escape(&'a str),
    /// One grapheme cluster and its width in columns.
    Grapheme(&'a str, usize),
}

/// Length in bytes of the escape sequence starting at `s` (which begins with ESC).
fn escape_len(s: &str) -> usize {
    let b = s.as_bytes();
    if b.len() < 2 {
        return b.len();
    }
    match b[1] {
        b'[' => {
            // CSI: parameters, then a final byte 0x40..=0x7e.
            for (i, &c) in b.iter().enumerate().skip(2) {
                if (0x40..=0x7e).contains(&c) {
                    return i + 1;
                }
            }
            b.len()
        }
        b']' | b'_' | b'P' | b'^' => {
            // OSC / APC / DCS / PM: up to BEL or ST (ESC \).
            let mut i = 2;
            while i < b.len() {
                if b[i] == 0x07 {
                    return i + 1;
                }
                if b[i] == 0x1b && b.get(i + 1) == Some(&b'\\') {
                    return i + 2;
                }
                i += 1;
            }
            b.len()
        }
        _ => {
            // Two-byte escape; step over a whole char for safety.
            1 + s[1..].chars().next().map_or(0, char::len_utf8)
        }
    }
}

/// Width of one grapheme cluster in columns.
pub fn grapheme_width(g: &str) -> usize {
    if g == "\t" {
        return 3;
    }
    let w = g.width();
    if g.chars().nth(1).is_some() {
        w.min(2)
    } else {
        w
    }
}

/// Split a styled string into escapes and graphemes.
pub fn segments(s: &str) -> Vec<Segment<'_>> {
    let mut out = Vec::with_capacity(s.len());
    let mut rest = s;
    while !rest.is_empty() {
        if let Some(pos) = rest.find('\x1b') {
            let (text, tail) = rest.split_at(pos);
            push_graphemes(text, &mut out);
            let len = escape_len(tail).max(1);
            let (esc, after) = tail.split_at(len.min(tail.len()));
            out.push(Segment::Escape(esc));
            rest = after;
        } else {
            push_graphemes(rest, &mut out);
            break;
        }
    }
    out
}

fn push_graphemes<'a>(text: &'a str, out: &mut Vec<Segment<'a>>) {
    // Printable ASCII is one column per byte; skip grapheme segmentation for it.
    if text.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        out.extend((0..text.len()).map(|i| Segment::Grapheme(&text[i..i + 1], 1)));
        return;
    }
    for g in text.graphemes(true) {
        out.push(Segment::Grapheme(g, grapheme_width(g)));
    }
}

/// Columns `s` occupies on screen, ignoring escape sequences.
pub fn visible_width(s: &str) -> usize {
    if s.is_ascii() && !s.contains('\x1b') && !s.contains('\t') {
        return s.bytes().filter(|b| !b.is_ascii_control()).count();
    }
    segments(s)
        .iter()
        .map(|seg| match seg {
            Segment::Escape(_) => 0,
            Segment::Grapheme(_, w) => *w,
        })
        .sum()
}

/// The SGR state accumulated while scanning a line, to re-open it on the next line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SgrState {
    fg: Option<String>,
    bg: Option<String>,
    bold: bool,
    dim: bool,
    italic: bool,
    underline: bool,
    inverse: bool,
    strike: bool,
    /// The open OSC 8 hyperlink (its opening sequence), re-opened on the next line.
    link: Option<String>,
}

impl SgrState {
    /// Feed one escape sequence; other than SGR and OSC 8 ones are ignored.
    pub fn apply(&mut self, esc: &str) {
        if let Some(body) = esc.strip_prefix("\x1b]8;") {
            let body = body
                .strip_suffix('\x07')
                .or_else(|| body.strip_suffix("\x1b\\"))
                .unwrap_or(body);
            let url = body.split_once(';').map_or("", |(_, url)| url);
            self.link = (!url.is_empty()).then(|| esc.to_owned());
            return;
        }
        let Some(params) = esc.strip_prefix("\x1b[").and_then(|p| p.strip_suffix('m')) else {
            return;
        };
        let nums: Vec<&str> = if params.is_empty() {
            vec!["0"]
        } else {
            params.split(';').collect()
        };
        let mut i = 0;
        while i < nums.len() {
            let n: u32 = nums[i].parse().unwrap_or(0);
            match n {
                0 => {
                    let link = self.link.take();
                    *self = SgrState {
                        link,
                        ..SgrState::default()
                    };
                }
                1 => self.bold = true,
                2 => self.dim = true,
                3 => self.italic = true,
                4 => self.underline = true,
                7 => self.inverse = true,
                9 => self.strike = true,
                22 => {
                    self.bold = false;
                    self.dim = false;
                }
                23 => self.italic = false,
                24 => self.underline = false,
                27 => self.inverse = false,
                29 => self.strike = false,
                30..=37 | 90..=97 => self.fg = Some(format!("\x1b[{n}m")),
                39 => self.fg = None,
                40..=47 | 100..=107 => self.bg = Some(format!("\x1b[{n}m")),
                49 => self.bg = None,
                38 | 48 => {
                    let take = match nums.get(i + 1) {
                        Some(&"5") => 2,
                        Some(&"2") => 4,
                        _ => 0,
                    };
                    let end = (i + 1 + take).min(nums.len());
                    let code = format!("\x1b[{}m", nums[i..end].join(";"));
                    if n == 38 {
                        self.fg = Some(code);
                    } else {
                        self.bg = Some(code);
                    }
                    i = end;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }

    /// The sequences that re-establish this state (empty when nothing is active).
    pub fn prefix(&self) -> String {
        let mut out = String::new();
        if let Some(fg) = &self.fg {
            out.push_str(fg);
        }
        if let Some(bg) = &self.bg {
            out.push_str(bg);
        }
        for (on, code) in [
            (self.bold, "\x1b[1m"),
            (self.dim, "\x1b[2m"),
            (self.italic, "\x1b[3m"),
            (self.underline, "\x1b[4m"),
            (self.inverse, "\x1b[7m"),
            (self.strike, "\x1b[9m"),
        ] {
            if on {
                out.push_str(code);
            }
        }
        if let Some(link) = &self.link {
            out.push_str(link);
        }
        out
    }

    /// True when any attribute is active.
    pub fn is_active(&self) -> bool {
        *self != SgrState::default()
    }
}

/// Cut `text` to at most `max` columns, ending with `ellipsis` when something was cut;
/// with `pad`, fill with spaces up to `max`.
pub fn truncate_to_width(text: &str, max: usize, ellipsis: &str, pad: bool) -> String {
    let width = visible_width(text);
    if width <= max {
        if pad {
            return format!("{text}{}", " ".repeat(max - width));
        }
        return text.to_string();
    }
    let ell_w = visible_width(ellipsis);
    let (budget, ellipsis) = if ell_w > max {
        (max, "")
    } else {
        (max - ell_w, ellipsis)
    };
    let mut out = String::with_capacity(text.len());
    let mut used = 0;
    let mut state = SgrState::default();
    for seg in segments(text) {
        match seg {
            Segment::Escape(e) => {
                state.apply(e);
                out.push_str(e);
            }
            Segment::Grapheme(g, w) => {
                if used + w > budget {
                    break;
                }
                out.push_str(g);
                used += w;
            }
        }
    }
    // A hyperlink cut open is closed before the ellipsis, which is not part of it.
    if state.link.is_some() {
        out.push_str("\x1b]8;;\x1b\\");
    }
    out.push_str("\x1b[0m");
    out.push_str(ellipsis);
    used += visible_width(ellipsis);
    if pad && used < max {
        out.push_str(&" ".repeat(max - used));
    }
    out
}

/// The columns `[start, start+len)` of a styled line, escapes kept; a wide character
/// cut by either edge is left out.
pub fn slice_columns(line: &str, start: usize, len: usize) -> String {
    let end = start + len;
    let mut out = String::new();
    let mut col = 0;
    for seg in segments(line) {
        match seg {
            Segment::Escape(e) => out.push_str(e),
            Segment::Grapheme(g, w) => {
                if col >= start && col + w <= end {
                    out.push_str(g);
                }
                col += w;
            }
        }
    }
    out
}

/// Word-wrap styled text to `width` columns. Newlines split lines; words longer than a
/// line are broken; active styles are re-opened at the start of each continuation line.
pub fn wrap_text_with_ansi(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut state = SgrState::default();
    for raw in text.split('\n') {
        let start_prefix = state.prefix();
        wrap_one(raw, width, &mut state, start_prefix, &mut lines);
    }
    lines
}

fn wrap_one(
    raw: &str,
    width: usize,
    state: &mut SgrState,
    prefix: String,
    lines: &mut Vec<String>,
) {
    if visible_width(raw) <= width {
        for seg in segments(raw) {
            if let Segment::Escape(e) = seg {
                state.apply(e);
            }
        }
        lines.push(format!("{prefix}{raw}"));
        return;
    }
    // Tokens: runs of whitespace or non-whitespace, each with its escapes attached.
    let segs = segments(raw);
    let mut tokens: Vec<(bool, Vec<Segment<'_>>, usize)> = Vec::new();
    for seg in segs {
        let is_space = matches!(seg, Segment::Grapheme(g, _) if g.chars().all(char::is_whitespace));
        match seg {
            Segment::Escape(_) => match tokens.last_mut() {
                Some(t) => t.1.push(seg),
                None => tokens.push((false, vec![seg], 0)),
            },
            Segment::Grapheme(_, w) => match tokens.last_mut() {
                Some(t) if t.0 == is_space || t.2 == 0 => {
                    t.0 = is_space;
                    t.1.push(seg);
                    t.2 += w;
                }
                _ => tokens.push((is_space, vec![seg], w)),
            },
        }
    }

    let mut line = prefix;
    let mut used = 0;
    let mut line_has_text = false;
    let push_line =
        |line: &mut String, used: &mut usize, state: &SgrState, lines: &mut Vec<String>| {
            lines.push(std::mem::take(line));
            *line = state.prefix();
            *used = 0;
        };
    for (is_space, segs, w) in tokens {
        if is_space {
            if used + w > width {
                // Whitespace at a wrap point is dropped; escapes still count.
                for seg in segs {
                    if let Segment::Escape(e) = seg {
                        state.apply(e);
                        line.push_str(e);
                    }
                }
                push_line(&mut line, &mut used, state, lines);
                line_has_text = false;
                continue;
            }
            if !line_has_text
                && used == 0
                && !lines.is_empty()
                && line_is_continuation(&line, state)
            {
                // Leading whitespace of a continuation line is dropped.
                for seg in segs {
                    if let Segment::Escape(e) = seg {
                        state.apply(e);
                        line.push_str(e);
                    }
                }
                continue;
            }
        } else if used + w > width && used > 0 {
            // Drop trailing spaces of the finished line.
            let trimmed = trim_trailing_spaces(&line);
            line = trimmed;
            push_line(&mut line, &mut used, state, lines);
            line_has_text = false;
        }
        for seg in segs {
            match seg {
                Segment::Escape(e) => {
                    state.apply(e);
                    line.push_str(e);
                }
                Segment::Grapheme(g, gw) => {
                    if used + gw > width && used > 0 {
                        push_line(&mut line, &mut used, state, lines);
                    }
                    line.push_str(g);
                    used += gw;
                    line_has_text = true;
                }
            }
        }
    }
    lines.push(trim_trailing_spaces(&line));
}

/// A continuation line holds nothing but the re-opened style prefix.
fn line_is_continuation(line: &str, state: &SgrState) -> bool {
    visible_width(line) == 0 && (line.is_empty() || state.is_active() || line.starts_with('\x1b'))
}

fn trim_trailing_spaces(line: &str) -> String {
    // Remove spaces at the end, keeping any escapes that follow them.
    let segs = segments(line);
    let mut keep_until = segs.len();
    while keep_until > 0 {
        match segs[keep_until - 1] {
            Segment::Grapheme(" ", _) => keep_until -= 1,
            Segment::Escape(_) => {
                // Look through escapes for trailing spaces before them.
                let mut j = keep_until - 1;
                while j > 0 && matches!(segs[j - 1], Segment::Escape(_)) {
                    j -= 1;
                }
                if j > 0 && matches!(segs[j - 1], Segment::Grapheme(" ", _)) {
                    let mut out = String::new();
                    let mut k = j;
                    while k > 0 && matches!(segs[k - 1], Segment::Grapheme(" ", _)) {
                        k -= 1;
                    }
                    for s in &segs[..k] {
                        out.push_str(seg_str(s));
                    }
                    for s in &segs[j..] {
                        out.push_str(seg_str(s));
                    }
                    return out;
                }
                break;
            }
            _ => break,
        }
    }
    segs[..keep_until].iter().map(seg_str).collect()
}

fn seg_str<'a>(s: &Segment<'a>) -> &'a str {
    match s {
        Segment::Escape(e) => e,
        Segment::Grapheme(g, _) => g,
    }
}

/// `s` without its escape sequences (styles, hyperlinks, markers).
pub fn strip_escapes(s: &str) -> String {
    segments(s)
        .into_iter()
        .filter_map(|seg| match seg {
            Segment::Grapheme(g, _) => Some(g),
            Segment::Escape(_) => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_ignore_escapes_and_count_wide_chars() {
        assert_eq!(visible_width("hello"), 5);
        assert_eq!(visible_width("\x1b[31mred\x1b[39m"), 3);
        assert_eq!(visible_width("日本"), 4);
        assert_eq!(visible_width("e\u{301}"), 1);
        assert_eq!(visible_width("👍🏽"), 2);
        assert_eq!(visible_width("\x1b]8;;http://x\x07link\x1b]8;;\x07"), 4);
        assert_eq!(visible_width("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"), 4);
        assert_eq!(visible_width("a\tb"), 5);
    }

    #[test]
    fn wraps_words_and_reopens_styles() {
        assert_eq!(
            wrap_text_with_ansi("the quick brown fox", 10),
            vec!["the quick", "brown fox"]
        );
        assert_eq!(
            wrap_text_with_ansi("abcdefghijkl", 5),
            vec!["abcde", "fghij", "kl"]
        );
        assert_eq!(wrap_text_with_ansi("a\n\nb", 5), vec!["a", "", "b"]);
        let wrapped = wrap_text_with_ansi("\x1b[31mred words here\x1b[39m", 9);
        assert_eq!(wrapped, vec!["\x1b[31mred words", "\x1b[31mhere\x1b[39m"]);
        for l in wrap_text_with_ansi("日本語のテキストを折り返す", 7) {
            assert!(visible_width(&l) <= 7, "{l}");
        }
    }

    #[test]
    fn truncates_with_ellipsis_and_pads() {
        assert_eq!(
            truncate_to_width("hello world", 8, "...", false),
            "hello\x1b[0m..."
        );
        assert_eq!(truncate_to_width("hi", 4, "...", true), "hi  ");
        assert_eq!(
            visible_width(&truncate_to_width("日本語テキスト", 5, "…", false)),
            5
        );
        assert_eq!(slice_columns("\x1b[1mabcdef", 2, 3), "\x1b[1mcde");
    }

    #[test]
    fn a_wrapped_hyperlink_reopens_on_the_next_line() {
        let text = "see \x1b]8;;http://x\x1b\\two words\x1b]8;;\x1b\\ end";
        let lines = wrap_text_with_ansi(text, 8);
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert_eq!(lines[2], "end");
        assert!(lines[1].starts_with("\x1b]8;;http://x\x1b\\"), "{lines:?}");
        let mut state = SgrState::default();
        state.apply("\x1b]8;;http://x\x07");
        state.apply("\x1b[0m");
        assert!(state.is_active());
        state.apply("\x1b]8;;\x07");
        assert!(!state.is_active());
    }

    #[test]
    fn a_hyperlink_cut_by_truncation_is_closed() {
        let text = "\x1b]8;;http://x\x1b\\a long link text\x1b]8;;\x1b\\ after";
        let cut = truncate_to_width(text, 8, "…", false);
        assert_eq!(visible_width(&cut), 8);
        let close = cut.rfind("\x1b]8;;\x1b\\").unwrap();
        assert!(close < cut.find('…').unwrap(), "{cut:?}");
    }
}
