//! Incremental, error-tolerant parsing of a JSON object that arrives in fragments.
//!
//! Providers stream a tool call's arguments as JSON text in small pieces. Re-parsing the whole
//! accumulated text on every fragment is quadratic, so [`PartialJsonParser`] consumes each
//! fragment once and updates the caller's arguments map in place: string characters are appended
//! to the string already in the tree, keys are inserted when their value begins, array elements
//! are pushed when they begin. The cost of a push is O(fragment length + nesting depth).
//!
//! The best-known value of an incomplete document follows the npm `partial-json` package (with
//! `Allow.ALL`) plus pi's escape repair:
//! - incomplete strings hold the characters seen so far; an escape cut at the end of the text is
//!   left out until it completes; invalid escapes such as `\x` are kept literally (backslash and
//!   character); lone or mismatched `\uXXXX` surrogates become U+FFFD;
//! - a key appears once its value begins; incomplete containers hold what they have so far;
//! - a partial number is its longest valid prefix (`1.` is 1, `1.5e-` is 1.5, `-` is omitted);
//!   a finished number is exactly serde_json's parse of its text;
//! - a partial literal (`t`, `fa`, `nu`) counts as `true`/`false`/`null`;
//! - duplicate keys: the last value wins and the key keeps its first position.

use serde_json::{Map, Value};

const REPLACEMENT: char = '\u{FFFD}';

/// Incremental, error-tolerant parser for a JSON object that arrives in fragments.
#[derive(Debug, Default, Clone)]
pub struct PartialJsonParser {
    /// All text pushed so far.
    text: String,
    /// Open containers, outermost (the root object) first.
    stack: Vec<Frame>,
    /// The scalar token being lexed, if any.
    token: Token,
    /// Decoded characters of the key being lexed.
    key_buf: String,
    /// Decoded characters of the current string value not yet written to the target.
    pending: String,
    broken: bool,
    complete: bool,
}

/// One open container.
#[derive(Debug, Clone)]
struct Frame {
    kind: Kind,
    expect: Expect,
    /// Where this container sits in its parent (`None` for the root object).
    seg: Option<Seg>,
}

#[derive(Debug, Clone)]
enum Kind {
    /// An object; `key` is the key of the member whose value is being parsed.
    Object { key: String },
    /// An array; `len` is the number of elements started so far.
    Array { len: usize },
}

/// What a container expects next (whitespace is always allowed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// Just opened: first key / first value, or the closing bracket.
    Start,
    /// Object, after a comma: a key (a trailing comma before `}` is tolerated).
    Key,
    /// Object, after a key.
    Colon,
    /// After a colon (object) or a comma (array).
    Value,
    /// After a value: a comma or the closing bracket.
    Comma,
}

/// A step of the path from the root object to a nested container.
#[derive(Debug, Clone)]
enum Seg {
    Key(String),
    Index(usize),
}

#[derive(Debug, Default, Clone)]
enum Token {
    #[default]
    None,
    /// An object key; decoded into `key_buf`.
    Key(StrLex),
    /// A string value; decoded into `pending`.
    Str(StrLex),
    Num(NumTok),
    /// `true`, `false` or `null`; `matched` bytes seen so far.
    Lit {
        word: &'static str,
        matched: usize,
    },
}

/// Decoding state inside a string literal.
#[derive(Debug, Default, Clone, Copy)]
struct StrLex {
    esc: Esc,
    /// A decoded high surrogate waiting for its low half.
    high: Option<u32>,
}

#[derive(Debug, Default, Clone, Copy)]
enum Esc {
    #[default]
    None,
    /// After a backslash.
    Backslash,
    /// After `\u` and `len` hex digits (kept in `raw` in case the escape turns out invalid).
    Unicode {
        len: usize,
        code: u32,
        raw: [char; 4],
    },
}

impl StrLex {
    /// Feeds one character of the string body, writing decoded text to `out`.
    /// Returns true when `c` is the closing quote.
    fn feed(&mut self, c: char, out: &mut String) -> bool {
        match self.esc {
            Esc::None => match c {
                '"' => {
                    self.flush_high(out);
                    return true;
                }
                '\\' => self.esc = Esc::Backslash,
                _ => self.emit(c, out),
            },
            Esc::Backslash => {
                self.esc = Esc::None;
                let decoded = match c {
                    '"' => '"',
                    '\\' => '\\',
                    '/' => '/',
                    'b' => '\u{8}',
                    'f' => '\u{c}',
                    'n' => '\n',
                    'r' => '\r',
                    't' => '\t',
                    'u' => {
                        self.esc = Esc::Unicode {
                            len: 0,
                            code: 0,
                            raw: ['0'; 4],
                        };
                        return false;
                    }
                    _ => {
                        // Invalid escape: keep the backslash and the character.
                        self.emit('\\', out);
                        out.push(c);
                        return false;
                    }
                };
                self.emit(decoded, out);
            }
            Esc::Unicode { len, code, mut raw } => match c.to_digit(16) {
                Some(digit) => {
                    let code = code * 16 + digit;
                    if len == 3 {
                        self.esc = Esc::None;
                        self.emit_code(code, out);
                    } else {
                        raw[len] = c;
                        self.esc = Esc::Unicode {
                            len: len + 1,
                            code,
                            raw,
                        };
                    }
                }
                None => {
                    // Invalid `\u` escape: keep it literally, then treat `c` normally.
                    self.esc = Esc::None;
                    self.emit('\\', out);
                    out.push('u');
                    out.extend(&raw[..len]);
                    return self.feed(c, out);
                }
            },
        }
        false
    }

    /// Writes `c`, first resolving a pending high surrogate as U+FFFD.
    fn emit(&mut self, c: char, out: &mut String) {
        self.flush_high(out);
        out.push(c);
    }

    fn flush_high(&mut self, out: &mut String) {
        if self.high.take().is_some() {
            out.push(REPLACEMENT);
        }
    }

    /// Writes the code unit of a complete `\uXXXX` escape, pairing surrogates.
    fn emit_code(&mut self, code: u32, out: &mut String) {
        match code {
            0xD800..=0xDBFF => {
                self.flush_high(out);
                self.high = Some(code);
            }
            0xDC00..=0xDFFF => match self.high.take() {
                Some(high) => {
                    let combined = 0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00);
                    out.push(char::from_u32(combined).unwrap_or(REPLACEMENT));
                }
                None => out.push(REPLACEMENT),
            },
            _ => self.emit(char::from_u32(code).unwrap_or(REPLACEMENT), out),
        }
    }
}

/// A number being lexed.
#[derive(Debug, Clone)]
struct NumTok {
    text: String,
    state: NumState,
    /// Length of the longest prefix of `text` that is a complete JSON number.
    valid_len: usize,
    /// `valid_len` when the value was last written to the target.
    written_len: usize,
    /// Whether the value has been written to its slot at all.
    inserted: bool,
}

/// States of the JSON number grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NumState {
    Minus,
    Zero,
    Int,
    Dot,
    Frac,
    Exp,
    ExpSign,
    ExpInt,
}

impl NumState {
    fn start(c: char) -> Option<Self> {
        match c {
            '-' => Some(Self::Minus),
            '0' => Some(Self::Zero),
            '1'..='9' => Some(Self::Int),
            _ => None,
        }
    }

    fn step(self, c: char) -> Option<Self> {
        match (self, c) {
            (Self::Minus, '0') => Some(Self::Zero),
            (Self::Minus, '1'..='9') | (Self::Int, '0'..='9') => Some(Self::Int),
            (Self::Zero | Self::Int, '.') => Some(Self::Dot),
            (Self::Dot | Self::Frac, '0'..='9') => Some(Self::Frac),
            (Self::Zero | Self::Int | Self::Frac, 'e' | 'E') => Some(Self::Exp),
            (Self::Exp, '+' | '-') => Some(Self::ExpSign),
            (Self::Exp | Self::ExpSign | Self::ExpInt, '0'..='9') => Some(Self::ExpInt),
            _ => None,
        }
    }

    fn is_final(self) -> bool {
        matches!(self, Self::Zero | Self::Int | Self::Frac | Self::ExpInt)
    }
}

fn is_number_char(c: char) -> bool {
    matches!(c, '0'..='9' | '-' | '+' | '.' | 'e' | 'E')
}

fn is_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// A mutable view of a container in the target tree.
enum Container<'t> {
    Obj(&'t mut Map<String, Value>),
    Arr(&'t mut Vec<Value>),
}

/// Follows the path of `stack` from the root object to the innermost open container.
fn navigate<'t>(target: &'t mut Map<String, Value>, stack: &[Frame]) -> Option<Container<'t>> {
    let mut current = Container::Obj(target);
    for frame in stack.iter().skip(1) {
        let child = match (current, frame.seg.as_ref()?) {
            (Container::Obj(map), Seg::Key(key)) => map.get_mut(key.as_str())?,
            (Container::Arr(arr), Seg::Index(index)) => arr.get_mut(*index)?,
            _ => return None,
        };
        current = match child {
            Value::Object(map) => Container::Obj(map),
            Value::Array(arr) => Container::Arr(arr),
            _ => return None,
        };
    }
    Some(current)
}

impl PartialJsonParser {
    /// Creates a parser that has seen no text.
    pub fn new() -> Self {
        Self::default()
    }

    /// Consumes `fragment` and updates `target` (the root object) to the best-known value of
    /// everything seen so far.
    pub fn push(&mut self, fragment: &str, target: &mut Map<String, Value>) {
        self.text.push_str(fragment);
        if !self.broken && !self.complete {
            for c in fragment.chars() {
                if !self.feed(c, target) {
                    break;
                }
            }
        }
        self.sync(target);
    }

    /// All text pushed so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether the parser stopped at input it could not make sense of (the rest is ignored).
    pub fn is_broken(&self) -> bool {
        self.broken
    }

    /// Whether a complete top-level value has been parsed.
    pub fn is_complete(&self) -> bool {
        self.complete
    }

    /// Feeds one character; returns false once parsing has stopped (complete or broken).
    fn feed(&mut self, c: char, target: &mut Map<String, Value>) -> bool {
        match &mut self.token {
            Token::None => {}
            Token::Str(lex) => {
                if lex.feed(c, &mut self.pending) {
                    self.token = Token::None;
                    self.flush_pending(target);
                }
                return true;
            }
            Token::Key(lex) => {
                if lex.feed(c, &mut self.key_buf) {
                    self.token = Token::None;
                    self.finish_key();
                }
                return true;
            }
            Token::Lit { word, matched } => {
                if !word.get(*matched..).is_some_and(|rest| rest.starts_with(c)) {
                    return self.fail();
                }
                *matched += c.len_utf8();
                if *matched == word.len() {
                    self.token = Token::None;
                }
                return true;
            }
            Token::Num(num) => {
                if is_number_char(c) {
                    let Some(next) = num.state.step(c) else {
                        return self.fail();
                    };
                    num.state = next;
                    num.text.push(c);
                    if next.is_final() {
                        num.valid_len = num.text.len();
                    }
                    return true;
                }
                // `c` ends the number; it is then handled structurally below.
                if !num.state.is_final() || !self.sync_number(target) {
                    return self.fail();
                }
                self.token = Token::None;
            }
        }
        self.structural(c, target)
    }

    /// Handles a character outside any scalar token.
    fn structural(&mut self, c: char, target: &mut Map<String, Value>) -> bool {
        if is_whitespace(c) {
            return true;
        }
        let Some(frame) = self.stack.last_mut() else {
            if c != '{' {
                return self.fail();
            }
            self.stack.push(Frame {
                kind: Kind::Object { key: String::new() },
                expect: Expect::Start,
                seg: None,
            });
            return true;
        };
        let is_object = matches!(frame.kind, Kind::Object { .. });
        match (is_object, frame.expect, c) {
            (true, Expect::Start | Expect::Key, '"') => {
                self.key_buf.clear();
                self.token = Token::Key(StrLex::default());
                true
            }
            (true, Expect::Colon, ':') => {
                frame.expect = Expect::Value;
                true
            }
            (_, Expect::Comma, ',') => {
                frame.expect = if is_object {
                    Expect::Key
                } else {
                    Expect::Value
                };
                true
            }
            // Trailing commas are tolerated, like `partial-json` does.
            (true, Expect::Start | Expect::Key | Expect::Comma, '}')
            | (false, Expect::Start | Expect::Value | Expect::Comma, ']') => self.close(),
            (true, Expect::Value, _) | (false, Expect::Start | Expect::Value, _) => {
                self.begin_value(c, target)
            }
            _ => self.fail(),
        }
    }

    /// Starts the value beginning with `c` in the innermost container's current slot.
    fn begin_value(&mut self, c: char, target: &mut Map<String, Value>) -> bool {
        let value = match c {
            '"' => {
                self.token = Token::Str(StrLex::default());
                Value::String(String::new())
            }
            '{' => Value::Object(Map::new()),
            '[' => Value::Array(Vec::new()),
            't' => {
                self.token = Token::Lit {
                    word: "true",
                    matched: 1,
                };
                Value::Bool(true)
            }
            'f' => {
                self.token = Token::Lit {
                    word: "false",
                    matched: 1,
                };
                Value::Bool(false)
            }
            'n' => {
                self.token = Token::Lit {
                    word: "null",
                    matched: 1,
                };
                Value::Null
            }
            _ => {
                let Some(state) = NumState::start(c) else {
                    return self.fail();
                };
                // A number is written once a prefix of it is valid (see `sync_number`).
                self.token = Token::Num(NumTok {
                    text: c.to_string(),
                    state,
                    valid_len: if state.is_final() { 1 } else { 0 },
                    written_len: 0,
                    inserted: false,
                });
                self.set_expect(Expect::Comma);
                return true;
            }
        };
        self.set_expect(Expect::Comma);
        self.write_slot(target, value, true);
        let kind = match c {
            '{' => Kind::Object { key: String::new() },
            '[' => Kind::Array { len: 0 },
            _ => return true,
        };
        let seg = self.stack.last().map(|parent| match &parent.kind {
            Kind::Object { key } => Seg::Key(key.clone()),
            Kind::Array { len } => Seg::Index(len.saturating_sub(1)),
        });
        self.stack.push(Frame {
            kind,
            expect: Expect::Start,
            seg,
        });
        true
    }

    fn set_expect(&mut self, expect: Expect) {
        if let Some(frame) = self.stack.last_mut() {
            frame.expect = expect;
        }
    }

    /// Moves the finished key into the innermost object.
    fn finish_key(&mut self) {
        if let Some(Frame {
            kind: Kind::Object { key },
            expect,
            ..
        }) = self.stack.last_mut()
        {
            std::mem::swap(key, &mut self.key_buf);
            *expect = Expect::Colon;
        }
    }

    /// Closes the innermost container; returns false when that completes the document.
    fn close(&mut self) -> bool {
        self.stack.pop();
        if self.stack.is_empty() {
            self.complete = true;
            return false;
        }
        true
    }

    /// Marks the input broken; always returns false.
    fn fail(&mut self) -> bool {
        self.broken = true;
        false
    }

    /// Stores `value` in the innermost container's current slot: inserts (or replaces) the
    /// current key, or pushes a new element (`fresh`) / replaces the last one.
    fn write_slot(&mut self, target: &mut Map<String, Value>, value: Value, fresh: bool) {
        let container = navigate(target, &self.stack);
        let Some(frame) = self.stack.last_mut() else {
            return;
        };
        match (&mut frame.kind, container) {
            (Kind::Object { key }, Some(Container::Obj(map))) => match map.get_mut(key.as_str()) {
                Some(slot) => *slot = value,
                None => {
                    map.insert(key.clone(), value);
                }
            },
            (Kind::Array { len }, container) => {
                if fresh {
                    *len += 1;
                }
                if let Some(Container::Arr(arr)) = container {
                    if fresh {
                        arr.push(value);
                    } else if let Some(last) = arr.last_mut() {
                        *last = value;
                    }
                }
            }
            _ => {}
        }
    }

    /// Appends decoded string characters to the string value in the current slot.
    fn flush_pending(&mut self, target: &mut Map<String, Value>) {
        if self.pending.is_empty() {
            return;
        }
        if let (Some(container), Some(frame)) = (navigate(target, &self.stack), self.stack.last()) {
            let slot = match (container, &frame.kind) {
                (Container::Obj(map), Kind::Object { key }) => map.get_mut(key.as_str()),
                (Container::Arr(arr), Kind::Array { .. }) => arr.last_mut(),
                _ => None,
            };
            if let Some(Value::String(s)) = slot {
                s.push_str(&self.pending);
            }
        }
        self.pending.clear();
    }

    /// Writes the current number token's best-known value if it changed.
    /// Returns false when the number text cannot be represented (e.g. `1e400`).
    fn sync_number(&mut self, target: &mut Map<String, Value>) -> bool {
        let Token::Num(num) = &mut self.token else {
            return true;
        };
        if num.valid_len == 0 || num.valid_len == num.written_len {
            return true;
        }
        let parsed = num
            .text
            .get(..num.valid_len)
            .and_then(|prefix| serde_json::from_str::<Value>(prefix).ok());
        let Some(value @ Value::Number(_)) = parsed else {
            return false;
        };
        let fresh = !num.inserted;
        num.inserted = true;
        num.written_len = num.valid_len;
        self.write_slot(target, value, fresh);
        true
    }

    /// Brings `target` up to date with everything consumed so far.
    fn sync(&mut self, target: &mut Map<String, Value>) {
        self.flush_pending(target);
        self.sync_number(target);
    }
}

/// One-shot tolerant parse of possibly incomplete JSON text into an object (empty if the text is
/// not an object or nothing usable).
pub fn parse_partial_object(text: &str) -> Map<String, Value> {
    let mut target = Map::new();
    PartialJsonParser::new().push(text, &mut target);
    target
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SAMPLE: &str = r#"{"path":"src/main.rs","edits":[{"oldText":"a\"b\\n\u00e9","newText":"line1\nline2"}],"n":-12.5e2,"ok":true,"none":null}"#;

    /// Exercises more of the grammar: whitespace, nesting, surrogates, numbers, duplicates.
    const RICH: &str = concat!(
        " {\n  \"k\\u00e9y\\\"\" : \"v\\ud83d\\ude00\\t\\/\\b\\f\\r😀é\",\n",
        "  \"nums\": [0, -0, 1.0, -1.25E+3, 7e-2, 12345678901234567890, -42, 3],\n",
        "  \"deep\": [[[], {}], {\"x\": [true, false, null]}, \"\"],\n",
        "  \"dup\": 1, \"z\": {\"a\": {\"b\": {\"c\": \"d\"}}}, \"dup\": \"last\" ,\n",
        "  \"empty\": {} , \"t\":true,\"f\":false , \"n\" : null\n}\n"
    );

    /// Pushes `fragments`, checking after every push that the incremental result equals a
    /// one-shot parse of the text so far.
    fn run(fragments: &[&str]) -> (PartialJsonParser, Map<String, Value>) {
        let mut parser = PartialJsonParser::new();
        let mut target = Map::new();
        for fragment in fragments {
            parser.push(fragment, &mut target);
            assert_eq!(
                target,
                parse_partial_object(parser.text()),
                "after {:?}",
                parser.text()
            );
        }
        (parser, target)
    }

    /// Splits `text` into pieces of `next_size()` bytes, moved forward to char boundaries.
    fn split_by(text: &str, mut next_size: impl FnMut() -> usize) -> Vec<&str> {
        let mut pieces = Vec::new();
        let mut start = 0;
        while start < text.len() {
            let mut end = (start + next_size().max(1)).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            pieces.push(&text[start..end]);
            start = end;
        }
        pieces
    }

    /// Deterministic pseudo-random sizes in 1..=7.
    fn lcg_sizes(seed: u64) -> impl FnMut() -> usize {
        let mut state = seed;
        move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            usize::try_from(state >> 61).unwrap_or(0) % 7 + 1
        }
    }

    fn assert_final(fragments: &[&str], full: &str) {
        let (parser, target) = run(fragments);
        let expected: Value = serde_json::from_str(full).unwrap();
        assert_eq!(
            Value::Object(target.clone()),
            expected,
            "fragments {fragments:?}"
        );
        let keys: Vec<&String> = target.keys().collect();
        let expected_keys: Vec<&String> = expected.as_object().unwrap().keys().collect();
        assert_eq!(keys, expected_keys);
        assert!(parser.is_complete());
        assert!(!parser.is_broken());
        assert_eq!(parser.text(), full);
    }

    #[test]
    fn one_char_fragments_give_the_full_value() {
        for text in [SAMPLE, RICH] {
            let fragments: Vec<&str> = text
                .char_indices()
                .map(|(i, c)| &text[i..i + c.len_utf8()])
                .collect();
            assert_final(&fragments, text);
        }
    }

    #[test]
    fn two_fragments_at_every_boundary_give_the_full_value() {
        for text in [SAMPLE, RICH] {
            for split in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
                assert_final(&[&text[..split], &text[split..]], text);
            }
        }
    }

    #[test]
    fn fixed_and_pseudo_random_chunk_sizes_give_the_full_value() {
        for text in [SAMPLE, RICH] {
            for size in 1..=7 {
                assert_final(&split_by(text, || size), text);
            }
            for seed in 0..20 {
                assert_final(&split_by(text, lcg_sizes(seed)), text);
            }
        }
    }

    #[test]
    fn sample_prefixes_are_best_known_values() {
        let cases = [
            (r#"{"path":"src/ma"#, json!({"path": "src/ma"})),
            (
                r#"{"path":"src/main.rs","edits":[{"oldText":"a\"b\\"#,
                json!({"path": "src/main.rs", "edits": [{"oldText": "a\"b\\"}]}),
            ),
            (
                r#"{"path":"src/main.rs","edits":[{"oldText":"a\"b\\n\u00"#,
                json!({"path": "src/main.rs", "edits": [{"oldText": "a\"b\\n"}]}),
            ),
            (
                r#"{"path":"src/main.rs","edits":[{"oldText":""#,
                json!({"path": "src/main.rs", "edits": [{"oldText": ""}]}),
            ),
            (
                r#"{"path":"src/main.rs","edits":[{"oldText""#,
                json!({"path": "src/main.rs", "edits": [{}]}),
            ),
            (
                r#"{"path":"src/main.rs","edits":[{"#,
                json!({"path": "src/main.rs", "edits": [{}]}),
            ),
            (
                &SAMPLE[..SAMPLE.find("-12").unwrap() + 1],
                json!({"path": "src/main.rs", "edits": [{"oldText": "a\"b\\né", "newText": "line1\nline2"}]}),
            ),
            (
                &SAMPLE[..SAMPLE.find("-12").unwrap() + 4],
                json!({"path": "src/main.rs", "edits": [{"oldText": "a\"b\\né", "newText": "line1\nline2"}], "n": -12}),
            ),
            (
                &SAMPLE[..SAMPLE.find("-12").unwrap() + 6],
                json!({"path": "src/main.rs", "edits": [{"oldText": "a\"b\\né", "newText": "line1\nline2"}], "n": -12.5}),
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(
                Value::Object(parse_partial_object(text)),
                expected,
                "{text}"
            );
        }
    }

    #[test]
    fn incomplete_strings_and_keys() {
        let cases = [
            (r#"{"path": "hel"#, json!({"path": "hel"})),
            (r#"{"path": ""#, json!({"path": ""})),
            (r#"{"path""#, json!({})),
            (r#"{"path":"#, json!({})),
            (r#"{"path": "#, json!({})),
            (r#"{"pa"#, json!({})),
            (r#"{""#, json!({})),
            ("{", json!({})),
            ("", json!({})),
            ("   ", json!({})),
            (r#"{"a":"x","b"#, json!({"a": "x"})),
            (r#"{"a":"x","#, json!({"a": "x"})),
        ];
        for (text, expected) in cases {
            assert_eq!(
                Value::Object(parse_partial_object(text)),
                expected,
                "{text}"
            );
        }
    }

    #[test]
    fn incomplete_containers_hold_what_they_have() {
        let cases = [
            (r#"{"a": [1, {"b": "x"#, json!({"a": [1, {"b": "x"}]})),
            (r#"{"edits": ["#, json!({"edits": []})),
            (r#"{"a": {"#, json!({"a": {}})),
            (r#"{"a": [1, -"#, json!({"a": [1]})),
            (r#"{"a": [1,"#, json!({"a": [1]})),
            (r#"{"a": [[["#, json!({"a": [[[]]]})),
            (
                r#"{"a": [{"b": [{"c": tr"#,
                json!({"a": [{"b": [{"c": true}]}]}),
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(
                Value::Object(parse_partial_object(text)),
                expected,
                "{text}"
            );
        }
    }

    #[test]
    fn partial_numbers_use_the_longest_valid_prefix() {
        let cases = [
            (r#"{"n": 12"#, json!({"n": 12})),
            (r#"{"n": -"#, json!({})),
            (r#"{"n": 1."#, json!({"n": 1})),
            (r#"{"n": 1e"#, json!({"n": 1})),
            (r#"{"n": 1.5e-"#, json!({"n": 1.5})),
            (r#"{"n": 1.5e-3"#, json!({"n": 0.0015})),
            (r#"{"n": -0"#, serde_json::from_str(r#"{"n": -0}"#).unwrap()),
            (r#"{"n": 1,"m": -"#, json!({"n": 1})),
        ];
        for (text, expected) in cases {
            assert_eq!(
                Value::Object(parse_partial_object(text)),
                expected,
                "{text}"
            );
        }
    }

    #[test]
    fn finished_numbers_match_serde_json_exactly() {
        let text = r#"{"i":12,"f":1.0,"u":12345678901234567890,"neg":-7,"e":1E+2,"z":-0.0}"#;
        let expected: Map<String, Value> = serde_json::from_str(text).unwrap();
        for size in 1..=4 {
            let (_, target) = run(&split_by(text, || size));
            assert_eq!(target, expected);
            assert!(target["i"].is_i64());
            assert!(target["f"].is_f64());
            assert_eq!(target["f"].to_string(), "1.0");
            assert!(target["u"].is_u64());
            assert!(target["e"].is_f64());
        }
        let mut parser = PartialJsonParser::new();
        let mut target = Map::new();
        parser.push(r#"{"f": 1"#, &mut target);
        assert!(target["f"].is_u64());
        parser.push(".", &mut target);
        assert_eq!(target["f"], json!(1));
        parser.push("0", &mut target);
        assert!(target["f"].is_f64());
        parser.push("}", &mut target);
        assert_eq!(target["f"].to_string(), "1.0");
    }

    #[test]
    fn partial_literals() {
        let cases = [
            (r#"{"a": t"#, json!({"a": true})),
            (r#"{"a": tru"#, json!({"a": true})),
            (r#"{"a": fa"#, json!({"a": false})),
            (r#"{"a": nu"#, json!({"a": null})),
            (r#"{"a": [n"#, json!({"a": [null]})),
            (r#"{"a": false}"#, json!({"a": false})),
        ];
        for (text, expected) in cases {
            assert_eq!(
                Value::Object(parse_partial_object(text)),
                expected,
                "{text}"
            );
        }
    }

    #[test]
    fn escapes_split_across_fragments() {
        let mut parser = PartialJsonParser::new();
        let mut target = Map::new();
        parser.push(r#"{"s": "a\"#, &mut target);
        assert_eq!(target["s"], "a");
        parser.push(r#"nb\u00"#, &mut target);
        assert_eq!(target["s"], "a\nb");
        parser.push("e", &mut target);
        assert_eq!(target["s"], "a\nb");
        parser.push(r#"9\\"#, &mut target);
        assert_eq!(target["s"], "a\nbé\\");
        parser.push(r#"\"#, &mut target);
        assert_eq!(target["s"], "a\nbé\\");
        parser.push(r#""x"}"#, &mut target);
        assert_eq!(target["s"], "a\nbé\\\"x");
        assert!(parser.is_complete());
    }

    #[test]
    fn escapes_in_keys() {
        let text = r#"{"k\"e\u00e9\\y\n": 1}"#;
        assert_eq!(
            Value::Object(parse_partial_object(text)),
            json!({"k\"eé\\y\n": 1})
        );
        for split in 1..text.len() {
            let (_, target) = run(&[&text[..split], &text[split..]]);
            assert_eq!(Value::Object(target), json!({"k\"eé\\y\n": 1}));
        }
    }

    #[test]
    fn surrogate_pairs_split_across_fragments() {
        let text = r#"{"s":"a\ud83d\ude00b"}"#;
        for split in 1..text.len() {
            let (parser, target) = run(&[&text[..split], &text[split..]]);
            assert_eq!(target["s"], "a😀b", "split at {split}");
            assert!(parser.is_complete());
        }
        let mut parser = PartialJsonParser::new();
        let mut target = Map::new();
        parser.push(r#"{"s":"a\ud83d"#, &mut target);
        assert_eq!(target["s"], "a", "a high surrogate waits for its pair");
        parser.push(r#"\ude"#, &mut target);
        assert_eq!(target["s"], "a");
        parser.push(r#"00"#, &mut target);
        assert_eq!(target["s"], "a😀");
    }

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        let cases = [
            (r#"{"s":"\ud83dx"}"#, "\u{FFFD}x"),
            (r#"{"s":"\ude00"}"#, "\u{FFFD}"),
            (r#"{"s":"\ud83d"}"#, "\u{FFFD}"),
            (r#"{"s":"\ud83d\ud83d\ude00"}"#, "\u{FFFD}😀"),
            (r#"{"s":"\ud83d\n"}"#, "\u{FFFD}\n"),
            (r#"{"s":"\ud83d\u0041"}"#, "\u{FFFD}A"),
        ];
        for (text, expected) in cases {
            let parser_result = parse_partial_object(text);
            assert_eq!(parser_result["s"], expected, "{text}");
        }
    }

    #[test]
    fn invalid_escapes_are_kept_literally() {
        let text = r#"{"s":"C:\dir\x\u12g\uZ","t":1}"#;
        let expected = json!({"s": "C:\\dir\\x\\u12g\\uZ", "t": 1});
        assert_eq!(Value::Object(parse_partial_object(text)), expected);
        for split in 1..text.len() {
            let (parser, target) = run(&[&text[..split], &text[split..]]);
            assert_eq!(Value::Object(target), expected, "split at {split}");
            assert!(parser.is_complete());
        }
        assert_eq!(parse_partial_object(r#"{"s":"a\u12"}"#)["s"], "a\\u12");
    }

    #[test]
    fn raw_control_characters_in_strings_are_accepted() {
        let text = "{\"s\": \"line1\nline2\tend\r\"}";
        let (parser, target) = run(&split_by(text, || 3));
        assert_eq!(target["s"], "line1\nline2\tend\r");
        assert!(parser.is_complete());
        assert!(!parser.is_broken());
    }

    #[test]
    fn trailing_input_after_completion_is_ignored() {
        let mut parser = PartialJsonParser::new();
        let mut target = Map::new();
        parser.push(r#"{"a": 1} "#, &mut target);
        assert!(parser.is_complete());
        parser.push(r#"garbage {"b": 2}"#, &mut target);
        assert_eq!(Value::Object(target), json!({"a": 1}));
        assert!(parser.is_complete());
        assert!(!parser.is_broken());
        assert_eq!(parser.text(), r#"{"a": 1} garbage {"b": 2}"#);
        assert_eq!(parse_partial_object(r#"{"a":[1]}]]"#)["a"], json!([1]));
    }

    #[test]
    fn broken_input_keeps_prior_values() {
        let cases = [
            (r#"{"x":"y","a" 1"#, json!({"x": "y"})),
            (r#"{,"#, json!({})),
            (r#"{"a":1]"#, json!({"a": 1})),
            (r#"{"a":tx"#, json!({"a": true})),
            (r#"{"a":12x"#, json!({"a": 12})),
            (r#"{"a":01"#, json!({"a": 0})),
            (r#"{"a":1.}"#, json!({"a": 1})),
            (r#"{"a":1.5.2"#, json!({"a": 1.5})),
            (r#"{"a":"b" "c":1}"#, json!({"a": "b"})),
            (r#"{"a":[1 2]}"#, json!({"a": [1]})),
            (r#"{"a":x}"#, json!({})),
            (r#"{"a":1e400}"#, json!({})),
        ];
        for (text, expected) in cases {
            let mut parser = PartialJsonParser::new();
            let mut target = Map::new();
            parser.push(text, &mut target);
            assert!(parser.is_broken(), "{text}");
            assert!(!parser.is_complete(), "{text}");
            assert_eq!(Value::Object(target.clone()), expected, "{text}");
            parser.push(r#","z":"late"}"#, &mut target);
            assert_eq!(Value::Object(target), expected, "{text}");
            assert!(parser.text().ends_with(r#""late"}"#));
        }
    }

    #[test]
    fn text_before_the_object_or_non_object_top_level_is_broken() {
        for text in [
            "]",
            "abc{\"a\":1}",
            "[1,2]",
            "\"x\"",
            "42",
            "true",
            "\u{feff}{}",
        ] {
            let mut parser = PartialJsonParser::new();
            let mut target = Map::new();
            parser.push(text, &mut target);
            assert!(target.is_empty(), "{text}");
            assert!(parser.is_broken(), "{text}");
            assert!(!parser.is_complete(), "{text}");
            assert!(parse_partial_object(text).is_empty());
        }
    }

    #[test]
    fn parse_partial_object_on_prefixes() {
        let expected_final: Map<String, Value> = serde_json::from_str(SAMPLE).unwrap();
        assert_eq!(parse_partial_object(SAMPLE), expected_final);
        assert_eq!(
            Value::Object(parse_partial_object(&SAMPLE[..=SAMPLE.find('[').unwrap()])),
            json!({"path": "src/main.rs", "edits": []})
        );
        assert_eq!(
            Value::Object(parse_partial_object(
                &SAMPLE[..SAMPLE.find(r"\\n").unwrap()]
            )),
            json!({"path": "src/main.rs", "edits": [{"oldText": "a\"b"}]})
        );
        // Every prefix is a valid object whose keys are a prefix of the final key order.
        let final_keys: Vec<&String> = expected_final.keys().collect();
        for end in 0..=SAMPLE.len() {
            let partial = parse_partial_object(&SAMPLE[..end]);
            let keys: Vec<&String> = partial.keys().collect();
            assert_eq!(keys, final_keys[..keys.len()], "prefix {}", &SAMPLE[..end]);
        }
    }

    #[test]
    fn duplicate_keys_last_wins_in_first_position() {
        let text = r#"{"a":1,"b":2,"a":"x","c":{"d":1},"c":[2]}"#;
        let target = parse_partial_object(text);
        assert_eq!(
            Value::Object(target.clone()),
            json!({"a": "x", "b": 2, "c": [2]})
        );
        assert_eq!(target.keys().collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(
            target,
            serde_json::from_str::<Map<String, Value>>(text).unwrap()
        );
        let pending = parse_partial_object(r#"{"a":1,"b":2,"a":-"#);
        assert_eq!(Value::Object(pending), json!({"a": 1, "b": 2}));
    }

    #[test]
    fn keys_keep_source_order() {
        let target = parse_partial_object(r#"{"zeta":1,"alpha":2,"mid":{"y":1,"b":2},"beta":3"#);
        assert_eq!(
            target.keys().collect::<Vec<_>>(),
            ["zeta", "alpha", "mid", "beta"]
        );
        assert_eq!(
            target["mid"]
                .as_object()
                .unwrap()
                .keys()
                .collect::<Vec<_>>(),
            ["y", "b"]
        );
    }

    #[test]
    fn whitespace_and_trailing_commas_are_tolerated() {
        let text = " \n\t{ \"a\" :\r [ 1 , 2 , ] , \"b\" : { } , } \n";
        let (parser, target) = run(&split_by(text, || 2));
        assert_eq!(Value::Object(target), json!({"a": [1, 2], "b": {}}));
        assert!(parser.is_complete());
        assert!(!parser.is_broken());
    }

    #[test]
    fn updates_the_callers_map_in_place() {
        let mut parser = PartialJsonParser::new();
        let mut target = Map::new();
        parser.push(r#"{"a":"x"#, &mut target);
        // Values added by the caller outside the parsed paths are left alone.
        target.insert("extra".into(), json!(true));
        parser.push(r#"yz","b":[1"#, &mut target);
        assert_eq!(
            Value::Object(target.clone()),
            json!({"a": "xyz", "extra": true, "b": [1]})
        );
        let clone = parser.clone();
        parser.push("]}", &mut target);
        assert!(parser.is_complete());
        assert!(!clone.is_complete());
        assert_eq!(clone.text(), r#"{"a":"xyz","b":[1"#);
    }

    /// Builds a JSON document with one large string value, returning it and the decoded value.
    fn big_document(target_len: usize) -> (String, String) {
        let pieces: [(&str, &str); 12] = [
            ("fn main() { println!(", "fn main() { println!("),
            (r#"\"hello\""#, "\"hello\""),
            (r#"\n"#, "\n"),
            (r#"\\"#, "\\"),
            (r#"\u00e9"#, "é"),
            (r#"\ud83d\ude00"#, "😀"),
            ("é", "é"),
            ("😀", "😀"),
            (r#"\t"#, "\t"),
            (r#"\/"#, "/"),
            ("    let x = 42; ", "    let x = 42; "),
            ("}", "}"),
        ];
        let mut json_text = String::from(r#"{"path":"src/big.rs","content":""#);
        let mut decoded = String::new();
        let mut next = lcg_sizes(7);
        let mut i = 0;
        while json_text.len() < target_len {
            let (raw, value) = pieces[(next() + i) % pieces.len()];
            json_text.push_str(raw);
            decoded.push_str(value);
            i += 1;
        }
        json_text.push_str(r#"","overwrite":true}"#);
        (json_text, decoded)
    }

    fn push_big(target_len: usize, fragment_len: usize) {
        let (text, decoded) = big_document(target_len);
        let mut parser = PartialJsonParser::new();
        let mut target = Map::new();
        for fragment in split_by(&text, || fragment_len) {
            parser.push(fragment, &mut target);
        }
        assert!(parser.is_complete());
        assert!(!parser.is_broken());
        assert_eq!(target["content"].as_str(), Some(decoded.as_str()));
        assert_eq!(target["overwrite"], json!(true));
        assert_eq!(
            target,
            serde_json::from_str::<Map<String, Value>>(&text).unwrap()
        );
        assert_eq!(parser.text(), text);
    }

    #[test]
    fn large_string_in_8_byte_fragments() {
        push_big(50 * 1024, 8);
    }

    #[test]
    fn very_large_string_in_7_byte_fragments_stays_linear() {
        push_big(200 * 1024, 7);
    }
}
