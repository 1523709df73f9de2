//! Prompt-template arguments as pi 1.6.0 reads them: the words after `/name` (quotes group
//! words only at a word's start, `\"` inside quotes is a quote, an unclosed quote is a
//! plain character) and the placeholders that take them (`$1`, `$@`, `$ARGUMENTS`,
//! `${@:N}`, `${@:N:L}`, and `${N:-default}` / `${@:-default}` / `${ARGUMENTS:-default}`),
//! replaced in one pass so a value is never read as a placeholder.

/// Splits the text after a template's name into its arguments.
pub fn parse_command_args(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut current = String::new();
    let mut has_token = false;
    let mut quote: Option<(char, usize)> = None;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match quote {
            Some((q, _)) if c == '\\' && chars.get(i + 1) == Some(&q) => {
                current.push(q);
                i += 1;
            }
            Some((q, _)) if c == q => quote = None,
            Some(_) => current.push(c),
            None if (c == '"' || c == '\'') && !has_token => {
                quote = Some((c, i));
                has_token = true;
            }
            None if c.is_whitespace() => {
                if has_token {
                    out.push(std::mem::take(&mut current));
                    has_token = false;
                }
            }
            None => {
                current.push(c);
                has_token = true;
            }
        }
        // A quote still open at the end was a plain character: read on from just after it.
        if let Some((q, start)) = quote
            && i + 1 >= chars.len()
        {
            quote = None;
            current = q.to_string();
            i = start;
        }
        i += 1;
    }
    if has_token {
        out.push(current);
    }
    out
}

/// The ASCII digits at the start of `text`.
fn leading_digits(text: &str) -> &str {
    let end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    &text[..end]
}

/// The argument numbered `number` (from 1), if there is one.
fn numbered<'a>(args: &'a [String], number: &str) -> Option<&'a str> {
    let n: usize = number.parse().ok()?;
    args.get(n.checked_sub(1)?).map(String::as_str)
}

/// Reads one placeholder at the start of `text` (just after its `$`): its value and the
/// length it spans, or `None` when the `$` starts no placeholder.
fn placeholder(text: &str, args: &[String], all: &str) -> Option<(String, usize)> {
    if let Some(body) = text.strip_prefix('{') {
        let close = body.find('}')?;
        let inner = &body[..close];
        let span = close + 2;
        // ${N:-default}, ${@:-default}, ${ARGUMENTS:-default}
        if let Some((target, default)) = inner.split_once(":-") {
            let value = match target {
                "@" | "ARGUMENTS" => Some(all),
                t if !t.is_empty() && leading_digits(t) == t => numbered(args, t),
                _ => return slice(inner, args).map(|v| (v, span)),
            };
            let value = value.filter(|v| !v.is_empty()).unwrap_or(default);
            return Some((value.to_owned(), span));
        }
        return slice(inner, args).map(|v| (v, span));
    }
    if text.starts_with("ARGUMENTS") {
        return Some((all.to_owned(), "ARGUMENTS".len()));
    }
    if text.starts_with('@') {
        return Some((all.to_owned(), 1));
    }
    let digits = leading_digits(text);
    if digits.is_empty() {
        return None;
    }
    Some((
        numbered(args, digits).unwrap_or_default().to_owned(),
        digits.len(),
    ))
}

/// `@:N` or `@:N:L` (the inside of `${…}`): arguments from N (1-based) on, at most L.
fn slice(inner: &str, args: &[String]) -> Option<String> {
    let spec = inner.strip_prefix("@:")?;
    let (start, length) = match spec.split_once(':') {
        Some((start, length)) => (start, Some(length)),
        None => (spec, None),
    };
    if start.is_empty() || leading_digits(start) != start {
        return None;
    }
    if length.is_some_and(|l| l.is_empty() || leading_digits(l) != l) {
        return None;
    }
    let from = start
        .parse::<usize>()
        .unwrap_or(usize::MAX)
        .saturating_sub(1)
        .min(args.len());
    let to = match length {
        None => args.len(),
        Some(l) => from
            .saturating_add(l.parse::<usize>().unwrap_or(usize::MAX))
            .min(args.len()),
    };
    Some(args[from..to].join(" "))
}

/// Replaces the placeholders of `content` with `args`, in one pass.
pub fn substitute_args(content: &str, args: &[String]) -> String {
    let all = args.join(" ");
    let mut out = String::with_capacity(content.len());
    let mut rest = content;
    while let Some(pos) = rest.find('$') {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        match placeholder(after, args, &all) {
            Some((value, span)) => {
                out.push_str(&value);
                rest = &after[span..];
            }
            None => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    /// Each expectation is pi 1.6.0's `parseCommandArgs` output for the same text.
    #[test]
    fn words_and_quotes_as_pi_16() {
        assert_eq!(
            parse_command_args("Button \"click handler\"\t'it is'  x"),
            ["Button", "click handler", "it is", "x"]
        );
        assert_eq!(parse_command_args("a\"b c\"d"), ["a\"b", "c\"d"]);
        assert_eq!(parse_command_args("  \"\"  "), [""]);
        assert_eq!(
            parse_command_args("\"unterminated arg"),
            ["\"unterminated", "arg"]
        );
        assert_eq!(
            parse_command_args("  \"\"  'it''s' a\"b c\"d"),
            ["", "it's'", "a\"b", "c\"d"]
        );
        assert_eq!(parse_command_args("don't stop"), ["don't", "stop"]);
        assert_eq!(
            parse_command_args("say \"hi \\\"there\\\"\" now"),
            ["say", "hi \"there\"", "now"]
        );
        assert_eq!(
            parse_command_args("one\ntwo  three"),
            ["one", "two", "three"]
        );
        assert_eq!(parse_command_args("'a b' \"\" c"), ["a b", "", "c"]);
    }

    /// Each expectation is pi 1.6.0's `substituteArgs` output for the same text.
    #[test]
    fn placeholders_as_pi_16() {
        let a = args(&["one", "two", "three"]);
        assert_eq!(substitute_args("$1-$2-$3-$4-$0", &a), "one-two-three--");
        assert_eq!(
            substitute_args("all: $@ / $ARGUMENTS", &a),
            "all: one two three / one two three"
        );
        assert_eq!(substitute_args("${@:2}", &a), "two three");
        assert_eq!(substitute_args("${@:0}", &a), "one two three");
        assert_eq!(
            substitute_args("${@:2:1}|${@:3:9}|${@:9}", &a),
            "two|three|"
        );
        assert_eq!(
            substitute_args("${@:x} $ $$ ${@:1:}", &a),
            "${@:x} $ $$ ${@:1:}"
        );
        assert_eq!(substitute_args("$10$99999999999999999999999", &a), "");
        assert_eq!(
            substitute_args("${1:-dflt} ${4:-four} ${@:-none} ${ARGUMENTS:-x}", &a),
            "one four one two three one two three"
        );
        assert_eq!(substitute_args("${2:-} ${9:-nine}", &a), "two nine");
        let ten = args(&["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]);
        assert_eq!(substitute_args("$10$01", &ten), "ja");
        assert_eq!(
            substitute_args("${@:1:0}|$@$ARGUMENTS", &args(&["a", "b c"])),
            "|a b ca b c"
        );
        assert_eq!(
            substitute_args("$1", &args(&["$ARGUMENTS", "z"])),
            "$ARGUMENTS"
        );
        assert_eq!(substitute_args("$1 $2", &args(&["$2", "x"])), "$2 x");
        assert_eq!(substitute_args("${@:-none}|${1:-d}", &[]), "none|d");
        assert_eq!(substitute_args("${1:-d}", &args(&[""])), "d");
    }
}
