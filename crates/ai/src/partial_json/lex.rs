//! The lexers of a JSON string's body (escapes, `\uXXXX` and surrogate pairs) and of a number
//! (the JSON number grammar, tracking its longest valid prefix), fed one character at a time.

const REPLACEMENT: char = '\u{FFFD}';

/// Decoding state inside a string literal.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct StrLex {
    esc: Esc,
    /// A decoded high surrogate waiting for its low half.
    high: Option<u32>,
}

#[derive(Debug, Default, Clone, Copy)]
pub(super) enum Esc {
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
    pub(super) fn feed(&mut self, c: char, out: &mut String) -> bool {
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
pub(super) struct NumTok {
    pub(super) text: String,
    pub(super) state: NumState,
    /// Length of the longest prefix of `text` that is a complete JSON number.
    pub(super) valid_len: usize,
    /// `valid_len` when the value was last written to the target.
    pub(super) written_len: usize,
    /// Whether the value has been written to its slot at all.
    pub(super) inserted: bool,
    /// What the slot held before the first write (a duplicate key's earlier value), put
    /// back if the number turns out unrepresentable.
    pub(super) before: Option<serde_json::Value>,
}

/// States of the JSON number grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NumState {
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
    pub(super) fn start(c: char) -> Option<Self> {
        match c {
            '-' => Some(Self::Minus),
            '0' => Some(Self::Zero),
            '1'..='9' => Some(Self::Int),
            _ => None,
        }
    }

    pub(super) fn step(self, c: char) -> Option<Self> {
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

    pub(super) fn is_final(self) -> bool {
        matches!(self, Self::Zero | Self::Int | Self::Frac | Self::ExpInt)
    }
}

pub(super) fn is_number_char(c: char) -> bool {
    matches!(c, '0'..='9' | '-' | '+' | '.' | 'e' | 'E')
}

pub(super) fn is_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}
