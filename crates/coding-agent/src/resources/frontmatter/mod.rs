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

mod mapping;
mod quoted;
mod scalars;
#[cfg(test)]
mod tests;

use std::collections::HashMap;

use mapping::parse_yaml;

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
