//! Terminal output to HTML, as pi 1.6.0's `ansi-to-html.js` does it: SGR colours and
//! styles become inline-styled spans, OSC 8 hyperlinks to http(s)/mailto become `<a href>`,
//! every other escape sequence and stray ESC is dropped.

use super::format::esc;

/// The 16 standard terminal colours (0–7 normal, 8–15 bright).
const ANSI_COLORS: [&str; 16] = [
    "#000000", "#800000", "#008000", "#808000", "#000080", "#800080", "#008080", "#c0c0c0",
    "#808080", "#ff0000", "#00ff00", "#ffff00", "#0000ff", "#ff00ff", "#00ffff", "#ffffff",
];

const ESC: char = '\u{1b}';

/// The current SGR style.
#[derive(Default, Clone, PartialEq)]
struct Style {
    fg: Option<String>,
    bg: Option<String>,
    bold: bool,
    dim: bool,
    italic: bool,
    underline: bool,
}

impl Style {
    fn css(&self) -> String {
        let mut parts = Vec::new();
        if let Some(fg) = &self.fg {
            parts.push(format!("color:{fg}"));
        }
        if let Some(bg) = &self.bg {
            parts.push(format!("background-color:{bg}"));
        }
        for (on, css) in [
            (self.bold, "font-weight:bold"),
            (self.dim, "opacity:0.6"),
            (self.italic, "font-style:italic"),
            (self.underline, "text-decoration:underline"),
        ] {
            if on {
                parts.push(css.to_owned());
            }
        }
        parts.join(";")
    }

    fn is_plain(&self) -> bool {
        *self == Style::default()
    }

    /// Applies one SGR parameter list (`ESC[...m`).
    fn apply(&mut self, params: &[u32]) {
        let mut i = 0;
        while i < params.len() {
            let at = |k: usize| params.get(i + k).copied();
            match params[i] {
                0 => *self = Style::default(),
                1 => self.bold = true,
                2 => self.dim = true,
                3 => self.italic = true,
                4 => self.underline = true,
                22 => {
                    self.bold = false;
                    self.dim = false;
                }
                23 => self.italic = false,
                24 => self.underline = false,
                c @ 30..=37 => self.fg = Some(ANSI_COLORS[(c - 30) as usize].to_owned()),
                c @ 90..=97 => self.fg = Some(ANSI_COLORS[(c - 90 + 8) as usize].to_owned()),
                c @ 40..=47 => self.bg = Some(ANSI_COLORS[(c - 40) as usize].to_owned()),
                c @ 100..=107 => self.bg = Some(ANSI_COLORS[(c - 100 + 8) as usize].to_owned()),
                39 => self.fg = None,
                49 => self.bg = None,
                c @ (38 | 48) => {
                    let color = match (at(1), at(2), at(3), at(4)) {
                        (Some(5), Some(n), _, _) => {
                            i += 2;
                            Some(color_256(n))
                        }
                        (Some(2), Some(r), Some(g), Some(b)) => {
                            i += 4;
                            Some(format!("rgb({r},{g},{b})"))
                        }
                        _ => None,
                    };
                    if let Some(color) = color {
                        if c == 38 {
                            self.fg = Some(color);
                        } else {
                            self.bg = Some(color);
                        }
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }
}

/// A 256-colour palette index as a CSS colour.
fn color_256(index: u32) -> String {
    match index {
        0..16 => ANSI_COLORS[index as usize].to_owned(),
        16..232 => {
            let cube = index - 16;
            let part = |n: u32| if n == 0 { 0 } else { 55 + n * 40 };
            format!(
                "#{:02x}{:02x}{:02x}",
                part(cube / 36),
                part((cube % 36) / 6),
                part(cube % 6)
            )
        }
        _ => {
            let gray = 8 + (index.min(255) - 232) * 10;
            format!("#{gray:02x}{gray:02x}{gray:02x}")
        }
    }
}

/// One escape sequence found at the start of a string.
enum Sequence<'a> {
    /// `ESC[...m` with its parameter text.
    Sgr(&'a str),
    /// `ESC]...` terminated by BEL or `ESC\`, with its payload.
    Osc(&'a str),
    /// Any other CSI or APC sequence.
    Other,
}

/// Parses the escape sequence at the start of `s` (which starts with ESC): the sequence
/// and its length, or `None` when it is not a complete sequence.
fn sequence(s: &str) -> Option<(Sequence<'_>, usize)> {
    let bytes = s.as_bytes();
    match bytes.get(1)? {
        b'[' => {
            let params_end = 2 + bytes[2..]
                .iter()
                .take_while(|b| (0x30..=0x3f).contains(*b))
                .count();
            let inter_end = params_end
                + bytes[params_end..]
                    .iter()
                    .take_while(|b| (0x20..=0x2f).contains(*b))
                    .count();
            let last = *bytes.get(inter_end)?;
            if !(0x40..=0x7e).contains(&last) {
                return None;
            }
            let params = &s[2..params_end];
            let sgr = last == b'm'
                && inter_end == params_end
                && params.bytes().all(|b| b.is_ascii_digit() || b == b';');
            let seq = if sgr {
                Sequence::Sgr(params)
            } else {
                Sequence::Other
            };
            Some((seq, inter_end + 1))
        }
        b']' | b'_' => {
            let body = &s[2..];
            let end = body.find(['\u{7}', ESC])?;
            let len = if body[end..].starts_with('\u{7}') {
                1
            } else if body[end..].starts_with("\u{1b}\\") {
                2
            } else {
                return None;
            };
            let seq = if bytes[1] == b']' {
                Sequence::Osc(&body[..end])
            } else {
                Sequence::Other
            };
            Some((seq, 2 + end + len))
        }
        _ => None,
    }
}

/// Whether a hyperlink target may become a link: http(s) or mailto only.
fn safe_link(url: &str) -> bool {
    let lower = url.get(..7).unwrap_or(url).to_ascii_lowercase();
    lower.starts_with("http:") || lower.starts_with("https:") || lower.starts_with("mailto:")
}

/// Converts terminal text to HTML (escaped text, styled spans and links).
pub(super) fn ansi_to_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 32);
    let mut style = Style::default();
    let mut in_span = false;
    let mut in_link = false;
    let mut plain = String::new();
    let mut rest = text;
    let close_span = |out: &mut String, in_span: &mut bool| {
        if *in_span {
            out.push_str("</span>");
            *in_span = false;
        }
    };
    let open_span = |out: &mut String, in_span: &mut bool, style: &Style| {
        if !style.is_plain() {
            out.push_str(&format!("<span style=\"{}\">", style.css()));
            *in_span = true;
        }
    };
    while let Some(at) = rest.find(ESC) {
        plain.push_str(&rest[..at]);
        rest = &rest[at..];
        let Some((seq, len)) = sequence(rest) else {
            // A stray ESC: dropped, the text after it kept.
            rest = &rest[ESC.len_utf8()..];
            continue;
        };
        out.push_str(&esc(&plain));
        plain.clear();
        match seq {
            Sequence::Sgr(params) => {
                let params: Vec<u32> = if params.is_empty() {
                    vec![0]
                } else {
                    params.split(';').map(|p| p.parse().unwrap_or(0)).collect()
                };
                close_span(&mut out, &mut in_span);
                style.apply(&params);
                open_span(&mut out, &mut in_span, &style);
            }
            Sequence::Osc(payload) => {
                if let Some(link) = payload.strip_prefix("8;")
                    && let Some((_, url)) = link.split_once(';')
                {
                    let url: String = url
                        .trim()
                        .chars()
                        .filter(|c| !c.is_ascii_control())
                        .collect();
                    close_span(&mut out, &mut in_span);
                    if in_link {
                        out.push_str("</a>");
                        in_link = false;
                    }
                    if !url.is_empty() && safe_link(&url) {
                        out.push_str(&format!("<a href=\"{}\">", esc(&url)));
                        in_link = true;
                    }
                    open_span(&mut out, &mut in_span, &style);
                }
            }
            Sequence::Other => {}
        }
        rest = &rest[len..];
    }
    plain.push_str(rest);
    out.push_str(&esc(&plain));
    close_span(&mut out, &mut in_span);
    if in_link {
        out.push_str("</a>");
    }
    out
}

/// Whether text holds an escape character (and so needs [`ansi_to_html`]).
pub(super) fn has_escapes(text: &str) -> bool {
    text.contains(ESC)
}
