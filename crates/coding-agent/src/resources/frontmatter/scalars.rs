//! Plain scalars (possibly spanning lines, read as bool, number, null or string by the YAML
//! 1.2 core schema) and literal (`|`) or folded (`>`) block scalars with chomping.

use std::sync::LazyLock;

use regex::Regex;

use super::{FrontmatterError, Value, err, indent_of, strip_comment};

pub(super) fn plain_scalar(
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

pub(super) fn block_scalar(
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
