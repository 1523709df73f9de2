//! The block's structure: top-level `key: value` lines, where each value starts and ends,
//! and nested blocks or flow collections (kept only as [`Value::Other`]).

use std::collections::HashMap;

use super::quoted::{double_quoted, single_quoted};
use super::scalars::{block_scalar, plain_scalar};
use super::{
    Frontmatter, FrontmatterError, Value, err, indent_of, is_blank_or_comment, strip_comment,
};

/// Parses the YAML block: a mapping of top-level keys.
pub(super) fn parse_yaml(yaml: &str) -> Result<Frontmatter, FrontmatterError> {
    // The line break before the closing `---` ends the last line; it starts no new one.
    let yaml = yaml.strip_suffix('\n').unwrap_or(yaml);
    let mut lines: Vec<&str> = yaml.split('\n').collect();
    // The whole mapping may be indented; its first line sets the indentation.
    let base = lines
        .iter()
        .find(|l| !is_blank_or_comment(l))
        .map(|l| indent_of(l))
        .unwrap_or(0);
    if base > 0 {
        for (n, line) in lines.iter_mut().enumerate() {
            if indent_of(line) < base && !is_blank_or_comment(line) {
                return Err(err(n, "bad indentation"));
            }
            *line = &line[indent_of(line).min(base)..];
        }
    }
    let mut fields = HashMap::new();
    // A document that is not a mapping (a scalar or a list) has no fields.
    if !lines
        .iter()
        .any(|l| indent_of(l) == 0 && !is_blank_or_comment(l) && split_key(l).is_some())
    {
        return Ok(Frontmatter { fields });
    }
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if is_blank_or_comment(line) || line == "---" || line == "..." {
            i += 1;
            continue;
        }
        if line.starts_with('\t') {
            return Err(err(i, "tabs are not allowed as indentation"));
        }
        if indent_of(line) > 0 {
            return Err(err(i, "unexpected indentation"));
        }
        let (key, rest) = split_key(line).ok_or_else(|| err(i, "expected a `key: value` line"))?;
        let (value, next) = parse_value(&lines, i, rest)?;
        if fields.insert(key, value).is_some() {
            return Err(err(i, "map keys must be unique"));
        }
        i = next;
    }
    Ok(Frontmatter { fields })
}

/// Splits `key: rest` (the key plain or quoted); `None` when the line is not a mapping entry.
fn split_key(line: &str) -> Option<(String, &str)> {
    if let Some(quote) = line.chars().next().filter(|c| *c == '"' || *c == '\'') {
        let close = line[1..].find(quote)? + 1;
        let key = line[1..close].to_owned();
        let rest = line[close + 1..].trim_start_matches(' ');
        let rest = rest.strip_prefix(':')?;
        if !(rest.is_empty() || rest.starts_with(' ')) {
            return None;
        }
        return Some((key, rest));
    }
    if line.starts_with('-') && (line.len() == 1 || line[1..].starts_with(' ')) {
        return None;
    }
    let mut search = 0;
    loop {
        let pos = line[search..].find(':')? + search;
        let after = &line[pos + 1..];
        if after.is_empty() || after.starts_with(' ') || after.starts_with('\t') {
            let key = line[..pos].trim_end();
            if key.is_empty() || key.contains(" #") {
                return None;
            }
            return Some((key.to_owned(), after));
        }
        search = pos + 1;
    }
}

/// Parses the value whose text after `key:` is `rest` (on line `i`); returns it and the index
/// of the first line after it.
fn parse_value(lines: &[&str], i: usize, rest: &str) -> Result<(Value, usize), FrontmatterError> {
    let text = rest.trim();
    // A value continues on the following lines that are indented (or blank).
    let mut end = i + 1;
    while end < lines.len() && (lines[end].trim().is_empty() || indent_of(lines[end]) > 0) {
        end += 1;
    }
    let trimmed_text = strip_comment(text).trim_end();
    if trimmed_text.is_empty() {
        return value_on_next_lines(lines, i, end);
    }
    // An anchor (`&name`) or a tag (`!tag`) before the value does not change its text.
    if text.starts_with(['&', '!']) {
        let after = text
            .split_once([' ', '\t'])
            .map(|(_, after)| after.trim_start())
            .unwrap_or("");
        // `after` ends `text`, which is `rest` without the whitespace around it.
        let offset = rest.len() - rest.trim_start().len() + text.len() - after.len();
        return parse_value(lines, i, &rest[offset..]);
    }
    let first = text.chars().next().unwrap_or(' ');
    if text == "-" || text.starts_with("- ") {
        return Err(err(
            i,
            "a sequence cannot start on the same line as its key",
        ));
    }
    if text == "?" || text.starts_with("? ") {
        return Err(err(
            i,
            "nested mappings are not allowed in compact mappings",
        ));
    }
    if first == '*' {
        return Err(err(i, "aliases are not supported"));
    }
    match first {
        '|' | '>' => block_scalar(lines, i, text, end),
        '"' => double_quoted(lines, i, rest),
        '\'' => single_quoted(lines, i, rest),
        '[' | '{' => flow_collection(lines, i, text),
        '@' | '`' => Err(err(
            i,
            format!("a plain value cannot start with the reserved character {first}"),
        )),
        _ => plain_scalar(
            lines,
            i,
            trimmed_text,
            trimmed_text.len() != text.len(),
            end,
        ),
    }
}

/// The value of a `key:` whose text starts on the following (indented) lines: a nested
/// collection, a scalar, or null when there is nothing.
fn value_on_next_lines(
    lines: &[&str],
    i: usize,
    end: usize,
) -> Result<(Value, usize), FrontmatterError> {
    let Some(k) = (i + 1..end).find(|&k| !is_blank_or_comment(lines[k])) else {
        // A block sequence may also sit at the key's own indentation.
        let mut next = end;
        while next < lines.len() {
            let l = lines[next];
            if l.trim().is_empty() || indent_of(l) > 0 || l == "-" || l.starts_with("- ") {
                next += 1;
            } else {
                break;
            }
        }
        let has_content = lines[end..next].iter().any(|l| !is_blank_or_comment(l));
        let value = if has_content {
            Value::Other
        } else {
            Value::Null
        };
        return Ok((value, next));
    };
    let t = lines[k].trim();
    let nested = t == "-"
        || t.starts_with("- ")
        || split_key(t).is_some()
        || t.starts_with(['[', '{', '|', '>', '&', '!', '?']);
    if nested {
        return Ok((Value::Other, end));
    }
    let stripped = strip_comment(t).trim_end();
    match t.chars().next() {
        Some('"') => double_quoted(lines, k, t),
        Some('\'') => single_quoted(lines, k, t),
        Some(c @ ('@' | '`')) => Err(err(
            k,
            format!("a plain value cannot start with the reserved character {c}"),
        )),
        _ => plain_scalar(lines, k, stripped, stripped.len() != t.len(), end),
    }
}

fn flow_collection(
    lines: &[&str],
    i: usize,
    text: &str,
) -> Result<(Value, usize), FrontmatterError> {
    let mut depth: i32 = 0;
    let mut quote: Option<char> = None;
    let mut line_no = i;
    let mut current = text.to_owned();
    loop {
        for c in current.chars() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '"' | '\'') => quote = Some(c),
                (None, '[' | '{') => depth += 1,
                (None, ']' | '}') => depth -= 1,
                (None, '#') if depth > 0 => break,
                _ => {}
            }
        }
        if depth <= 0 {
            return Ok((Value::Other, line_no + 1));
        }
        line_no += 1;
        if line_no >= lines.len() {
            return Err(err(i, "unterminated flow collection"));
        }
        current = lines[line_no].to_owned();
    }
}
