//! Colored rendering of the edit tool's `<sign><number> <text>` diff lines; a single
//! changed line shows its changed words in inverse video.

use std::sync::OnceLock;

use regex::Regex;
use similar::{Algorithm, DiffTag, capture_diff_slices};

use super::{paint, replace_tabs};
use crate::modes::interactive::theme::{Theme, ThemeColor};

struct DiffLine<'a> {
    prefix: char,
    line_num: &'a str,
    content: &'a str,
}

fn line_pattern() -> Option<&'static Regex> {
    static PATTERN: OnceLock<Option<Regex>> = OnceLock::new();
    PATTERN
        .get_or_init(|| Regex::new(r"^([+\-\s])(\s*\d*)\s(.*)$").ok())
        .as_ref()
}

fn parse_line(line: &str) -> Option<DiffLine<'_>> {
    let caps = line_pattern()?.captures(line)?;
    let prefix = caps.get(1)?.as_str().chars().next()?;
    Some(DiffLine {
        prefix,
        line_num: caps.get(2)?.as_str(),
        content: caps.get(3)?.as_str(),
    })
}

/// Words, whitespace runs and single punctuation characters.
fn tokenize(text: &str) -> Vec<&str> {
    #[derive(PartialEq, Clone, Copy)]
    enum Class {
        Word,
        Space,
        Punct,
    }
    let class = |c: char| {
        if c.is_whitespace() {
            Class::Space
        } else if c.is_alphanumeric() || c == '_' {
            Class::Word
        } else {
            Class::Punct
        }
    };
    let mut tokens = Vec::new();
    let mut start = 0;
    let mut current: Option<Class> = None;
    for (i, c) in text.char_indices() {
        let k = class(c);
        match current {
            Some(prev) if prev == k && k != Class::Punct => {}
            Some(_) => {
                tokens.push(&text[start..i]);
                start = i;
            }
            None => {}
        }
        current = Some(k);
    }
    if start < text.len() {
        tokens.push(&text[start..]);
    }
    tokens
}

/// The removed and added line with changed words in inverse; leading whitespace of the
/// first changed part is left plain so indentation is not highlighted.
fn intra_line_diff(old: &str, new: &str, theme: &Theme) -> (String, String) {
    let inverse = pi_tui::style::Style::plain()
        .with_mode(theme.mode())
        .inverse();
    let old_tokens = tokenize(old);
    let new_tokens = tokenize(new);
    let ops = capture_diff_slices(Algorithm::Myers, &old_tokens, &new_tokens);

    let mut removed_line = String::new();
    let mut added_line = String::new();
    let mut first_removed = true;
    let mut first_added = true;
    let push_changed = |out: &mut String, first: &mut bool, value: String| {
        let mut value = value.as_str();
        if *first {
            let trimmed = value.trim_start();
            out.push_str(&value[..value.len() - trimmed.len()]);
            value = trimmed;
            *first = false;
        }
        if !value.is_empty() {
            out.push_str(&inverse.paint(value));
        }
    };
    for op in ops {
        let (tag, old_range, new_range) = op.as_tag_tuple();
        let old_text: String = old_tokens[old_range].concat();
        let new_text: String = new_tokens[new_range].concat();
        match tag {
            DiffTag::Equal => {
                removed_line.push_str(&old_text);
                added_line.push_str(&old_text);
            }
            DiffTag::Delete => push_changed(&mut removed_line, &mut first_removed, old_text),
            DiffTag::Insert => push_changed(&mut added_line, &mut first_added, new_text),
            DiffTag::Replace => {
                push_changed(&mut removed_line, &mut first_removed, old_text);
                push_changed(&mut added_line, &mut first_added, new_text);
            }
        }
    }
    (removed_line, added_line)
}

/// Render a diff from the edit tool as colored lines joined with `\n`.
pub fn render_diff(diff_text: &str, theme: &Theme) -> String {
    let removed_style = theme.fg(ThemeColor::ToolDiffRemoved);
    let added_style = theme.fg(ThemeColor::ToolDiffAdded);
    let context_style = theme.fg(ThemeColor::ToolDiffContext);
    let lines: Vec<&str> = diff_text.split('\n').collect();
    let mut out: Vec<String> = Vec::with_capacity(lines.len());

    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let Some(parsed) = parse_line(line) else {
            out.push(paint(context_style, line));
            i += 1;
            continue;
        };
        match parsed.prefix {
            '-' => {
                let mut removed = Vec::new();
                while let Some(p) = lines.get(i).and_then(|l| parse_line(l)) {
                    if p.prefix != '-' {
                        break;
                    }
                    removed.push(p);
                    i += 1;
                }
                let mut added = Vec::new();
                while let Some(p) = lines.get(i).and_then(|l| parse_line(l)) {
                    if p.prefix != '+' {
                        break;
                    }
                    added.push(p);
                    i += 1;
                }
                if let ([r], [a]) = (removed.as_slice(), added.as_slice()) {
                    let (removed_line, added_line) =
                        intra_line_diff(&replace_tabs(r.content), &replace_tabs(a.content), theme);
                    out.push(paint(
                        removed_style,
                        &format!("-{} {removed_line}", r.line_num),
                    ));
                    out.push(paint(added_style, &format!("+{} {added_line}", a.line_num)));
                } else {
                    for r in &removed {
                        out.push(paint(
                            removed_style,
                            &format!("-{} {}", r.line_num, replace_tabs(r.content)),
                        ));
                    }
                    for a in &added {
                        out.push(paint(
                            added_style,
                            &format!("+{} {}", a.line_num, replace_tabs(a.content)),
                        ));
                    }
                }
            }
            '+' => {
                out.push(paint(
                    added_style,
                    &format!("+{} {}", parsed.line_num, replace_tabs(parsed.content)),
                ));
                i += 1;
            }
            _ => {
                out.push(paint(
                    context_style,
                    &format!(" {} {}", parsed.line_num, replace_tabs(parsed.content)),
                ));
                i += 1;
            }
        }
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::components::strip_ansi;
    use pi_tui::style::ColorMode;

    #[test]
    fn parses_numbered_and_gap_lines() {
        let p = parse_line("-12 old text").map(|p| (p.prefix, p.line_num, p.content));
        assert_eq!(p, Some(('-', "12", "old text")));
        let p = parse_line("    ...").map(|p| (p.prefix, p.line_num, p.content));
        assert_eq!(p, Some((' ', "  ", "...")));
        assert!(parse_line("").is_none());
    }

    #[test]
    fn highlights_changed_words_of_a_single_line_change() {
        let theme = Theme::dark(ColorMode::TrueColor);
        let out = render_diff(" 1 a\n-2 let x = 1;\n+2 let x = 2;\n 3 b", &theme);
        let lines: Vec<&str> = out.split('\n').collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(strip_ansi(lines[1]), "-2 let x = 1;");
        assert!(lines[1].contains("\x1b[7m1\x1b[27m"));
        assert!(lines[2].contains("\x1b[7m2\x1b[27m"));
    }

    #[test]
    fn tokenizes_words_spaces_and_punctuation() {
        assert_eq!(
            tokenize("foo(bar)  x"),
            vec!["foo", "(", "bar", ")", "  ", "x"]
        );
    }
}
