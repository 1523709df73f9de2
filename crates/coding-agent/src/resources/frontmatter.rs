//! Frontmatter of prompt templates and skills: a YAML block between a leading `---` line and
//! the next `---` line.
//!
//! The TypeScript pi hands that block to a full YAML parser. The fields pi reads are
//! top-level scalars (`name`, `description`, `argument-hint`, `disable-model-invocation`),
//! so this parser implements the part of YAML such a block uses: `key: value` mappings with
//! plain, single- and double-quoted scalars (also spanning lines), literal (`|`) and folded
//! (`>`) block scalars with chomping indicators, comments, and nested blocks or flow
//! collections, which are kept only as "some other value". Malformed input that a YAML parser
//! rejects (an unterminated quote, a duplicate key, a plain value holding `: `) is an error,
//! because the TypeScript pi then skips the file (templates) or reports it (skills).

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;

/// A frontmatter value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A string scalar (quoted, block or plain text that is not a bool, number or null).
    String(String),
    /// `true` / `false` (any YAML 1.2 core spelling).
    Bool(bool),
    /// A plain scalar that reads as a number, kept as written.
    Number(String),
    /// `null`, `~` or nothing.
    Null,
    /// A nested mapping or sequence (block or flow), not interpreted.
    Other,
}

impl Value {
    /// The string, when this is a string scalar.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
}

/// The parsed top-level keys of a frontmatter block.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Frontmatter {
    /// Every top-level key with its value.
    pub fields: HashMap<String, Value>,
}

impl Frontmatter {
    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.fields.get(key)
    }

    /// The value of `key` when it is a string.
    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Value::as_str)
    }

    /// The value of `key` when it is a boolean.
    pub fn get_bool(&self, key: &str) -> Option<bool> {
        match self.get(key) {
            Some(Value::Bool(b)) => Some(*b),
            _ => None,
        }
    }
}

/// A document split into its frontmatter and body.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    /// The frontmatter (empty when the document has none).
    pub frontmatter: Frontmatter,
    /// The text after the frontmatter, trimmed; the whole (newline-normalized) document when
    /// there is no frontmatter.
    pub body: String,
}

/// Why a frontmatter block could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid frontmatter (line {line}): {message}")]
pub struct FrontmatterError {
    /// 1-based line within the frontmatter block.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

fn err(line: usize, message: impl Into<String>) -> FrontmatterError {
    FrontmatterError {
        line: line + 1,
        message: message.into(),
    }
}

/// Splits `content` into the raw YAML block (if any) and the body, as the TypeScript pi does:
/// the block starts after a leading `---` and ends at the next line starting with `---`.
fn extract(content: &str) -> (Option<String>, String) {
    let normalized = content.replace("\r\n", "\n").replace('\r', "\n");
    if !normalized.starts_with("---") {
        return (None, normalized);
    }
    let Some(end) = normalized.get(3..).and_then(|rest| rest.find("\n---")) else {
        return (None, normalized);
    };
    let end = end + 3;
    let mut start = 4.min(end);
    while !normalized.is_char_boundary(start) {
        start += 1;
    }
    let yaml = normalized.get(start..end).unwrap_or("").to_owned();
    let body = normalized.get(end + 4..).unwrap_or("").trim().to_owned();
    (Some(yaml), body)
}

/// Parses a document's frontmatter and body.
pub fn parse(content: &str) -> Result<Parsed, FrontmatterError> {
    let (yaml, body) = extract(content);
    let frontmatter = match yaml {
        Some(yaml) if !yaml.is_empty() => parse_yaml(&yaml)?,
        _ => Frontmatter::default(),
    };
    Ok(Parsed { frontmatter, body })
}

/// The body of a document without its frontmatter (which must still parse).
pub fn strip(content: &str) -> Result<String, FrontmatterError> {
    parse(content).map(|p| p.body)
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn is_blank_or_comment(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

/// Parses the YAML block: a mapping of top-level keys.
fn parse_yaml(yaml: &str) -> Result<Frontmatter, FrontmatterError> {
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

/// Removes a trailing ` # comment` from a plain scalar.
fn strip_comment(text: &str) -> &str {
    if text.starts_with('#') {
        return "";
    }
    match text.find(" #").or_else(|| text.find("\t#")) {
        Some(pos) => &text[..pos],
        None => text,
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
        let offset = rest.len() - after.len();
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

fn plain_scalar(
    lines: &[&str],
    i: usize,
    first: &str,
    had_comment: bool,
    end: usize,
) -> Result<(Value, usize), FrontmatterError> {
    let mut value = first.to_owned();
    let mut blanks = 0usize;
    let mut ended = had_comment;
    for (offset, line) in lines[i + 1..end].iter().enumerate() {
        let t = line.trim();
        if t.is_empty() {
            blanks += 1;
            continue;
        }
        if ended {
            return Err(err(i + 1 + offset, "unexpected content after a comment"));
        }
        if t.starts_with('#') {
            ended = true;
            continue;
        }
        let piece = strip_comment(t).trim_end();
        ended = piece.len() != t.len();
        if blanks > 0 {
            value.push_str(&"\n".repeat(blanks));
        } else {
            value.push(' ');
        }
        blanks = 0;
        value.push_str(piece);
    }
    if value.contains(": ") || value.ends_with(':') {
        return Err(err(
            i,
            "nested mappings are not allowed in compact mappings (quote the value)",
        ));
    }
    Ok((resolve_plain(&value), end))
}

static NUMBER: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
    )
    .ok()
});

/// The YAML 1.2 core schema's reading of a plain scalar.
fn resolve_plain(value: &str) -> Value {
    match value {
        "true" | "True" | "TRUE" => Value::Bool(true),
        "false" | "False" | "FALSE" => Value::Bool(false),
        "" | "~" | "null" | "Null" | "NULL" => Value::Null,
        _ if NUMBER.as_ref().is_some_and(|re| re.is_match(value)) => {
            Value::Number(value.to_owned())
        }
        _ => Value::String(value.to_owned()),
    }
}

fn block_scalar(
    lines: &[&str],
    i: usize,
    header: &str,
    end: usize,
) -> Result<(Value, usize), FrontmatterError> {
    let literal = header.starts_with('|');
    let indicators = strip_comment(&header[1..]).trim();
    let mut chomp = ' ';
    let mut explicit_indent = None;
    for c in indicators.chars() {
        match c {
            '+' | '-' if chomp == ' ' => chomp = c,
            '1'..='9' if explicit_indent.is_none() => {
                explicit_indent = c.to_digit(10).map(|d| d as usize)
            }
            _ => return Err(err(i, "invalid block scalar header")),
        }
    }
    let body = &lines[i + 1..end];
    let indent = match explicit_indent {
        Some(n) => n,
        None => body
            .iter()
            .find(|l| !l.trim().is_empty())
            .map(|l| indent_of(l))
            .unwrap_or(0),
    };
    let mut content_lines: Vec<&str> = Vec::new();
    for (offset, line) in body.iter().enumerate() {
        if line.trim().is_empty() {
            content_lines.push("");
        } else if indent_of(line) < indent {
            return Err(err(i + 1 + offset, "bad indentation in a block scalar"));
        } else {
            content_lines.push(&line[indent..]);
        }
    }
    // Trailing blank lines are subject to chomping.
    let mut trailing = 0;
    while content_lines.last().is_some_and(|l| l.is_empty()) {
        content_lines.pop();
        trailing += 1;
    }
    let mut text = if literal {
        content_lines.join("\n")
    } else {
        fold(&content_lines)
    };
    if !content_lines.is_empty() {
        match chomp {
            '-' => {}
            '+' => text.push_str(&"\n".repeat(trailing + 1)),
            _ => text.push('\n'),
        }
    } else if chomp == '+' {
        text.push_str(&"\n".repeat(trailing));
    }
    Ok((Value::String(text), end))
}

/// Folds the lines of a `>` block: line breaks between text lines become spaces, blank lines
/// stay as line breaks, and more-indented lines keep their breaks.
fn fold(lines: &[&str]) -> String {
    let mut out = String::new();
    let mut prev: Option<&str> = None;
    let mut blanks = 0;
    for line in lines {
        if line.is_empty() {
            blanks += 1;
            continue;
        }
        if let Some(p) = prev {
            let indented = line.starts_with(' ') || p.starts_with(' ');
            if blanks > 0 {
                out.push_str(&"\n".repeat(if indented { blanks + 1 } else { blanks }));
            } else if indented {
                out.push('\n');
            } else {
                out.push(' ');
            }
        } else if blanks > 0 {
            out.push_str(&"\n".repeat(blanks));
        }
        blanks = 0;
        out.push_str(line);
        prev = Some(line);
    }
    out
}

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

fn double_quoted(lines: &[&str], i: usize, rest: &str) -> Result<(Value, usize), FrontmatterError> {
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

fn single_quoted(lines: &[&str], i: usize, rest: &str) -> Result<(Value, usize), FrontmatterError> {
    let (raw, after, last) = quoted_span(lines, i, rest, '\'')?;
    after_quote(last, after)?;
    let value = fold_quoted(&raw, false).replace("''", "'");
    Ok((Value::String(value), last + 1))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn fm(doc: &str) -> Frontmatter {
        parse(doc).unwrap().frontmatter
    }

    #[test]
    fn no_frontmatter_keeps_the_whole_text_untrimmed() {
        let p = parse("  hello\r\nworld\n").unwrap();
        assert!(p.frontmatter.fields.is_empty());
        assert_eq!(p.body, "  hello\nworld\n");
        // An opening line without a closing one is no frontmatter either.
        let p = parse("---\nname: x\nbody").unwrap();
        assert!(p.frontmatter.fields.is_empty());
        assert_eq!(p.body, "---\nname: x\nbody");
    }

    #[test]
    fn simple_keys_and_trimmed_body() {
        let p =
            parse("---\nname: my-skill\ndescription: Does things.\n---\n\n# Title\n\n").unwrap();
        assert_eq!(p.frontmatter.get_str("name"), Some("my-skill"));
        assert_eq!(p.frontmatter.get_str("description"), Some("Does things."));
        assert_eq!(p.body, "# Title");
        let p = parse("---\n---\nbody").unwrap();
        assert!(p.frontmatter.fields.is_empty());
        assert_eq!(p.body, "body");
    }

    #[test]
    fn scalar_types() {
        let f = fm(
            "---\na: true\nb: False\nc: 42\nd: ~\ne:\nf: 'it''s'\ng: \"tab\\tnew\\nline \\u00e9\"\nh: yes\ni: 1.5e3\n---\n",
        );
        assert_eq!(f.get_bool("a"), Some(true));
        assert_eq!(f.get_bool("b"), Some(false));
        assert_eq!(f.get("c"), Some(&Value::Number("42".into())));
        assert_eq!(f.get("d"), Some(&Value::Null));
        assert_eq!(f.get("e"), Some(&Value::Null));
        assert_eq!(f.get_str("f"), Some("it's"));
        assert_eq!(f.get_str("g"), Some("tab\tnew\nline é"));
        assert_eq!(f.get_str("h"), Some("yes"));
        assert_eq!(f.get("i"), Some(&Value::Number("1.5e3".into())));
    }

    #[test]
    fn comments_and_quoted_keys() {
        let f = fm("---\n# leading\nname: x # trailing\n\"argument-hint\": \"<url>\" # c\n---\n");
        assert_eq!(f.get_str("name"), Some("x"));
        assert_eq!(f.get_str("argument-hint"), Some("<url>"));
        let f = fm("---\nurl: http://example.com/a#b\n---\n");
        assert_eq!(f.get_str("url"), Some("http://example.com/a#b"));
    }

    #[test]
    fn block_scalars() {
        let f = fm("---\nd: |\n  line one\n  line two\n\nnext: x\n---\n");
        assert_eq!(f.get_str("d"), Some("line one\nline two\n"));
        assert_eq!(f.get_str("next"), Some("x"));
        let f = fm("---\nd: >-\n  folded\n  text\n\n  para\n---\n");
        assert_eq!(f.get_str("d"), Some("folded text\npara"));
        let f = fm("---\nd: |+\n  keep\n\n---\n");
        assert_eq!(f.get_str("d"), Some("keep\n"));
        let f = fm("---\nd: |+\n  keep\n\n\nx: 1\n---\n");
        assert_eq!(f.get_str("d"), Some("keep\n\n\n"));
        let f = fm("---\nd: &a !!str  anchored\n---\n");
        assert_eq!(f.get_str("d"), Some("anchored"));
        let f = fm("---\nd: >\n  a\n    indented\n  b\n---\n");
        assert_eq!(f.get_str("d"), Some("a\n  indented\nb\n"));
    }

    #[test]
    fn multi_line_plain_and_quoted() {
        let f = fm("---\ndescription: first part\n  second part\n\n  new para\nname: n\n---\n");
        assert_eq!(
            f.get_str("description"),
            Some("first part second part\nnew para")
        );
        assert_eq!(f.get_str("name"), Some("n"));
        let f = fm("---\nd: \"one\n  two\\\n  three\"\ne: 'a\n  b'\n---\n");
        assert_eq!(f.get_str("d"), Some("one twothree"));
        assert_eq!(f.get_str("e"), Some("a b"));
    }

    #[test]
    fn values_may_start_on_the_next_line() {
        let f = fm(
            "---\ndescription:\n  A long\n  description.\nquoted:\n  \"q\"\nlist:\n  - a\nempty:\n# c\nname: n\n---\n",
        );
        assert_eq!(f.get_str("description"), Some("A long description."));
        assert_eq!(f.get_str("quoted"), Some("q"));
        assert_eq!(f.get("list"), Some(&Value::Other));
        assert_eq!(f.get("empty"), Some(&Value::Null));
        assert_eq!(f.get_str("name"), Some("n"));
        // A document that is a plain scalar or a list has no fields.
        assert!(fm("---\njust text\n---\nbody").fields.is_empty());
        assert!(fm("---\n- a\n- b\n---\nbody").fields.is_empty());
        assert_eq!(
            fm("---\n  name: x\n  d: |\n    t\n---\n").get_str("d"),
            Some("t\n")
        );
    }

    #[test]
    fn nested_values_are_other() {
        let f = fm(
            "---\nmetadata:\n  author: me\n  version: 1\ntags:\n- a\n- b\nallowed-tools: [read, \"bash\"]\nm: {a: 1,\n  b: 2}\nname: z\n---\n",
        );
        assert_eq!(f.get("metadata"), Some(&Value::Other));
        assert_eq!(f.get("tags"), Some(&Value::Other));
        assert_eq!(f.get("allowed-tools"), Some(&Value::Other));
        assert_eq!(f.get("m"), Some(&Value::Other));
        assert_eq!(f.get_str("name"), Some("z"));
    }

    #[test]
    fn errors() {
        for bad in [
            "---\ndescription: Use when: asked\n---\n",
            "---\nd: \"open\n---\n",
            "---\nname: a\nname: b\n---\n",
            "---\njust text\nname: x\n---\n",
            "---\nname: x\n  indented: x\n---\n",
            "---\n  name: x\n bad: y\n---\n",
            "---\nd: @at\n---\n",
            "---\nd: - item\n---\n",
            "---\nd: ? what\n---\n",
            "---\nd: *alias\n---\n",
            "---\nd: 'x' trailing\n---\n",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} should fail");
        }
        assert!(strip("---\nd: 'x' trailing\n---\nbody").is_err());
        assert_eq!(strip("---\nd: x\n---\n body \n").unwrap(), "body");
    }
}
