//! Single- and double-quoted scalars, also spanning lines: finding the closing quote, folding
//! the line breaks, and double-quoted escapes.

use super::{FrontmatterError, Value, err, indent_of};

/// Joins the raw lines of a multi-line quoted scalar the YAML way: each line break becomes a
/// space, a run of n blank lines becomes n line breaks, and (in double quotes) a `\` at the
/// end of a line joins it to the next without a space.
fn fold_quoted(raw: &[String], escaped_breaks: bool) -> String {
    let mut out = String::new();
    let mut blanks = 0;
    let last = raw.len().saturating_sub(1);
    let mut tight = false;
    for (n, line) in raw.iter().enumerate() {
        let mut piece: &str = line;
        if n > 0 {
            piece = piece.trim_start_matches([' ', '\t']);
        }
        let escaped = escaped_breaks && n < last && ends_with_odd_backslashes(piece);
        if escaped {
            piece = &piece[..piece.len() - 1];
        } else if n < last {
            piece = piece.trim_end_matches([' ', '\t']);
        }
        if n > 0 && n < last && piece.is_empty() && !escaped && !tight {
            blanks += 1;
            continue;
        }
        if n > 0 && !tight {
            if blanks > 0 {
                out.push_str(&"\n".repeat(blanks));
            } else {
                out.push(' ');
            }
        }
        blanks = 0;
        out.push_str(piece);
        tight = escaped;
    }
    out
}

/// Finds the end of a quoted scalar starting at `rest` (which begins with the quote) on line
/// `i`; returns the raw text lines between the quotes, the text after the closing quote, and
/// the line holding it.
fn quoted_span<'a>(
    lines: &[&'a str],
    i: usize,
    rest: &'a str,
    quote: char,
) -> Result<(Vec<String>, &'a str, usize), FrontmatterError> {
    let start = rest.find(quote).unwrap_or(0) + 1;
    let mut raw: Vec<String> = Vec::new();
    let mut line_no = i;
    let mut text: &str = &rest[start..];
    loop {
        let mut chars = text.char_indices().peekable();
        let mut close = None;
        while let Some((pos, c)) = chars.next() {
            if quote == '"' && c == '\\' {
                chars.next();
                continue;
            }
            if c == quote {
                if quote == '\'' && chars.peek().is_some_and(|(_, n)| *n == '\'') {
                    chars.next();
                    continue;
                }
                close = Some(pos);
                break;
            }
        }
        match close {
            Some(pos) => {
                raw.push(text[..pos].to_owned());
                return Ok((raw, &text[pos + 1..], line_no));
            }
            None => {
                raw.push(text.to_owned());
                line_no += 1;
                if line_no >= lines.len() {
                    return Err(err(i, "missing closing quote"));
                }
                let next = lines[line_no];
                if !next.trim().is_empty() && indent_of(next) == 0 {
                    return Err(err(line_no, "missing closing quote"));
                }
                text = next;
            }
        }
    }
}

fn after_quote(i: usize, after: &str) -> Result<(), FrontmatterError> {
    let after = after.trim();
    if after.is_empty() || after.starts_with('#') {
        Ok(())
    } else {
        Err(err(i, "unexpected text after a quoted value"))
    }
}

pub(super) fn double_quoted(
    lines: &[&str],
    i: usize,
    rest: &str,
) -> Result<(Value, usize), FrontmatterError> {
    let (raw, after, last) = quoted_span(lines, i, rest, '"')?;
    after_quote(last, after)?;
    let value = unescape(&fold_quoted(&raw, true)).map_err(|m| err(i, m))?;
    Ok((Value::String(value), last + 1))
}

fn ends_with_odd_backslashes(line: &str) -> bool {
    let n = line.len() - line.trim_end_matches('\\').len();
    n % 2 == 1
}

fn unescape(text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            return Err("dangling escape".into());
        };
        let hex = |chars: &mut std::str::Chars<'_>, n: usize| -> Result<char, String> {
            let digits: String = chars.by_ref().take(n).collect();
            u32::from_str_radix(&digits, 16)
                .ok()
                .filter(|_| digits.len() == n)
                .and_then(char::from_u32)
                .ok_or_else(|| format!("invalid escape \\{e}{digits}"))
        };
        match e {
            '0' => out.push('\0'),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            't' | '\t' => out.push('\t'),
            'n' => out.push('\n'),
            'v' => out.push('\u{b}'),
            'f' => out.push('\u{c}'),
            'r' => out.push('\r'),
            'e' => out.push('\u{1b}'),
            ' ' => out.push(' '),
            '"' => out.push('"'),
            '/' => out.push('/'),
            '\\' => out.push('\\'),
            'N' => out.push('\u{85}'),
            '_' => out.push('\u{a0}'),
            'L' => out.push('\u{2028}'),
            'P' => out.push('\u{2029}'),
            'x' => out.push(hex(&mut chars, 2)?),
            'u' => out.push(hex(&mut chars, 4)?),
            'U' => out.push(hex(&mut chars, 8)?),
            other => return Err(format!("invalid escape \\{other}")),
        }
    }
    Ok(out)
}

pub(super) fn single_quoted(
    lines: &[&str],
    i: usize,
    rest: &str,
) -> Result<(Value, usize), FrontmatterError> {
    let (raw, after, last) = quoted_span(lines, i, rest, '\'')?;
    after_quote(last, after)?;
    let value = fold_quoted(&raw, false).replace("''", "'");
    Ok((Value::String(value), last + 1))
}
