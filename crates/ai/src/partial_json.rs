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
//! - duplicate keys: the last value wins and the key keeps its first position;
//! - containers nest at most [`MAX_DEPTH`] deep (the root object counts): a deeper one makes
//!   the input broken, so arguments stay within what serde_json reads back (128 levels) even
//!   inside a session line, an event or a gateway frame, and never recurse the stack away.

mod lex;

use serde_json::{Map, Value};

use lex::{NumState, NumTok, StrLex, is_number_char, is_whitespace};

/// The deepest nesting of containers a parsed object may have, its root included. Well below
/// serde_json's recursion limit (128), which the message's own wrapping also counts against.
pub const MAX_DEPTH: usize = 64;

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

/// The value under the current key of the innermost object (`None` in an array).
fn slot_value(target: &mut Map<String, Value>, stack: &[Frame]) -> Option<Value> {
    match (navigate(target, stack), &stack.last()?.kind) {
        (Some(Container::Obj(map)), Kind::Object { key }) => map.get(key.as_str()).cloned(),
        _ => None,
    }
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
        if matches!(c, '{' | '[') && self.stack.len() >= MAX_DEPTH {
            return self.fail();
        }
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
                    before: None,
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
            // Unrepresentable (`1e400`; more digits never make it fit): a one-shot parse of
            // the same text never writes it, so what a shorter prefix wrote is undone.
            if num.inserted {
                num.inserted = false;
                num.written_len = 0;
                let before = num.before.take();
                self.restore_slot(target, before);
            }
            return false;
        };
        let fresh = !num.inserted;
        num.inserted = true;
        num.written_len = num.valid_len;
        if fresh {
            num.before = slot_value(target, &self.stack);
        }
        self.write_slot(target, value, fresh);
        true
    }

    /// Undoes a number's writes: the current key gets back `before` (or goes), the array
    /// its pushed element.
    fn restore_slot(&mut self, target: &mut Map<String, Value>, before: Option<Value>) {
        let container = navigate(target, &self.stack);
        let Some(frame) = self.stack.last_mut() else {
            return;
        };
        match (&mut frame.kind, container) {
            (Kind::Object { key }, Some(Container::Obj(map))) => match before {
                Some(value) => {
                    map.insert(key.clone(), value);
                }
                None => {
                    map.shift_remove(key.as_str());
                }
            },
            (Kind::Array { len }, container) => {
                *len = len.saturating_sub(1);
                if let Some(Container::Arr(arr)) = container {
                    arr.pop();
                }
            }
            _ => {}
        }
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
mod tests;
