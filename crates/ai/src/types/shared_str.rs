//! Text that the session, the agent and provider requests share: a clone is a count, and
//! text read from JSON can stay in its escaped form until something reads it, so a request
//! body copies it back instead of decoding and re-escaping a whole transcript.

use std::borrow::{Borrow, Cow};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;

use super::stored_text::StoredText;

/// An immutable-by-default string behind an `Arc`; see the module doc.
#[derive(Clone)]
pub struct SharedStr(Arc<Repr>);

#[derive(Clone)]
enum Repr {
    Decoded(String),
    /// A JSON string literal as it was read (quotes and escapes included), decoded on the
    /// first read of its text.
    Raw {
        json: Box<RawValue>,
        /// No escapes: the text is the literal without its quotes.
        plain: bool,
        decoded: OnceLock<String>,
    },
    /// A long literal left in the file it was read from.
    Stored(StoredText),
}

impl SharedStr {
    /// An empty string.
    pub fn new() -> Self {
        Self::from(String::new())
    }

    /// A text held as the JSON string literal `json` (the caller checked it is a string).
    pub(crate) fn from_raw_string(json: Box<RawValue>) -> Self {
        let plain = !json.get().contains('\\');
        Self(Arc::new(Repr::Raw {
            json,
            plain,
            decoded: OnceLock::new(),
        }))
    }

    /// The text (decoding a raw literal on first use).
    pub fn as_str(&self) -> &str {
        match &*self.0 {
            Repr::Decoded(text) => text,
            Repr::Raw {
                json, plain: true, ..
            } => unquote(json.get()),
            Repr::Raw { json, decoded, .. } => decoded.get_or_init(|| decode(json.get())),
            Repr::Stored(stored) => stored.text(),
        }
    }

    /// A text read from JSON: left in its source when it is long and the reader was told
    /// where the JSON lies (see [`super::stored_text::reading_from`]), else kept as read.
    pub(crate) fn from_literal(literal: Literal<'_>) -> Self {
        if let Literal::Borrowed(text) = literal
            && let Some(stored) = StoredText::of(text)
        {
            return Self(Arc::new(Repr::Stored(stored)));
        }
        let json = match literal {
            Literal::Borrowed(text) => RawValue::from_string(text.to_owned()),
            Literal::Owned(text) => RawValue::from_string(text),
        };
        match json {
            Ok(json) => Self::from_raw_string(json),
            Err(_) => Self::new(),
        }
    }

    /// `is_empty()`, answered from a literal's length without reading it.
    pub fn is_empty(&self) -> bool {
        match &*self.0 {
            Repr::Decoded(text) => text.is_empty(),
            Repr::Raw { json, .. } => json.get().len() <= 2,
            Repr::Stored(stored) => stored.literal_len() <= 2,
        }
    }

    /// The JSON string literal this text was read from, while it is still held that way.
    pub fn raw_json(&self) -> Option<&str> {
        match &*self.0 {
            Repr::Raw { json, .. } => Some(json.get()),
            Repr::Decoded(_) | Repr::Stored(_) => None,
        }
    }

    /// The text to change in place; a shared or raw text is copied out first.
    pub fn make_mut(&mut self) -> &mut String {
        let repr = Arc::make_mut(&mut self.0);
        match repr {
            Repr::Raw { json, decoded, .. } => {
                let text = decoded.take().unwrap_or_else(|| decode(json.get()));
                *repr = Repr::Decoded(text);
            }
            Repr::Stored(stored) => {
                let text = match stored.take_decoded() {
                    Some(text) => text,
                    None => stored.text().to_owned(),
                };
                *repr = Repr::Decoded(text);
            }
            Repr::Decoded(_) => {}
        }
        match repr {
            Repr::Decoded(text) => text,
            Repr::Raw { .. } | Repr::Stored(_) => unreachable!("converted above"),
        }
    }

    /// Appends `text`.
    pub fn push_str(&mut self, text: &str) {
        self.make_mut().push_str(text);
    }

    /// Appends a character.
    pub fn push(&mut self, c: char) {
        self.make_mut().push(c);
    }

    /// The text as an owned `String` (no copy when this is its only holder).
    pub fn into_string(self) -> String {
        match Arc::try_unwrap(self.0) {
            Ok(Repr::Decoded(text)) => text,
            Ok(Repr::Raw { json, decoded, .. }) => {
                decoded.into_inner().unwrap_or_else(|| decode(json.get()))
            }
            Ok(Repr::Stored(mut stored)) => match stored.take_decoded() {
                Some(text) => text,
                None => stored.text().to_owned(),
            },
            Err(shared) => Self(shared).as_str().to_owned(),
        }
    }

    /// `trim().is_empty()`, answered from a raw literal's first characters when it can be.
    pub fn is_blank(&self) -> bool {
        match &*self.0 {
            Repr::Raw { json, decoded, .. } if decoded.get().is_none() => {
                if let Some(answer) = raw_is_blank(json.get()) {
                    return answer;
                }
            }
            Repr::Stored(stored) if stored.decoded().is_none() => {
                if let Some(answer) = stored.blank() {
                    return answer;
                }
            }
            _ => {}
        }
        self.as_str().trim().is_empty()
    }
}

/// Whether a JSON string literal holds only whitespace, when that can be told without
/// decoding it (`None` for `\u` escapes and non-ASCII text, which need the decoded form).
pub(crate) fn raw_is_blank(literal: &str) -> Option<bool> {
    let inner = literal.strip_prefix('"')?.strip_suffix('"')?;
    let bytes = inner.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b' ' => i += 1,
            b'\\' => match bytes.get(i + 1) {
                Some(b'n' | b't' | b'r' | b'f') => i += 2,
                Some(b'u') => return None,
                _ => return Some(false),
            },
            b if b.is_ascii() => return Some(false),
            _ => return None,
        }
    }
    Some(true)
}

/// A literal without escapes, without its quotes.
fn unquote(literal: &str) -> &str {
    literal
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(literal)
}

/// Decodes a JSON string literal; lone surrogates (which JavaScript writes) become U+FFFD.
pub(crate) fn decode(literal: &str) -> String {
    serde_json::from_str::<String>(literal).unwrap_or_else(|_| decode_lossy(literal))
}

fn decode_lossy(literal: &str) -> String {
    let inner = literal
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(literal);
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars().peekable();
    let mut pending_high: Option<u16> = None;
    let hex = |chars: &mut std::iter::Peekable<std::str::Chars>| -> Option<u16> {
        let digits: String = chars.by_ref().take(4).collect();
        u16::from_str_radix(&digits, 16).ok()
    };
    while let Some(c) = chars.next() {
        if c != '\\' {
            if pending_high.take().is_some() {
                out.push('\u{FFFD}');
            }
            out.push(c);
            continue;
        }
        let escaped = match chars.next() {
            Some('u') => {
                let Some(unit) = hex(&mut chars) else {
                    out.push('\u{FFFD}');
                    continue;
                };
                match (pending_high.take(), unit) {
                    (Some(high), 0xDC00..=0xDFFF) => {
                        let code = 0x10000
                            + ((u32::from(high) - 0xD800) << 10)
                            + (u32::from(unit) - 0xDC00);
                        out.push(char::from_u32(code).unwrap_or('\u{FFFD}'));
                    }
                    (previous, 0xD800..=0xDBFF) => {
                        if previous.is_some() {
                            out.push('\u{FFFD}');
                        }
                        pending_high = Some(unit);
                    }
                    (previous, _) => {
                        if previous.is_some() {
                            out.push('\u{FFFD}');
                        }
                        out.push(char::from_u32(u32::from(unit)).unwrap_or('\u{FFFD}'));
                    }
                }
                continue;
            }
            Some('n') => '\n',
            Some('t') => '\t',
            Some('r') => '\r',
            Some('b') => '\u{8}',
            Some('f') => '\u{c}',
            Some(other) => other,
            None => break,
        };
        if pending_high.take().is_some() {
            out.push('\u{FFFD}');
        }
        out.push(escaped);
    }
    if pending_high.is_some() {
        out.push('\u{FFFD}');
    }
    out
}

impl Default for SharedStr {
    fn default() -> Self {
        Self::new()
    }
}

impl Deref for SharedStr {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for SharedStr {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for SharedStr {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Debug for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq for SharedStr {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.as_str() == other.as_str()
    }
}

impl Eq for SharedStr {}

impl PartialOrd for SharedStr {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for SharedStr {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl Hash for SharedStr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl SharedStr {
    /// Whether the text is `other`; a raw literal whose length rules it out is not decoded
    /// (an escape stands for at most six characters of the literal per byte of text).
    pub fn eq_str(&self, other: &str) -> bool {
        let undecoded = match &*self.0 {
            Repr::Raw {
                json,
                plain,
                decoded,
            } if decoded.get().is_none() => Some((json.get().len(), *plain)),
            Repr::Stored(stored) if stored.decoded().is_none() => {
                Some((stored.literal_len(), stored.plain()))
            }
            _ => None,
        };
        if let Some((literal_len, plain)) = undecoded {
            let inner = literal_len.saturating_sub(2);
            let ruled_out = if plain {
                inner != other.len()
            } else {
                inner < other.len() || inner > other.len().saturating_mul(6)
            };
            if ruled_out {
                return false;
            }
        }
        self.as_str() == other
    }
}

impl PartialEq<str> for SharedStr {
    fn eq(&self, other: &str) -> bool {
        self.eq_str(other)
    }
}

impl PartialEq<&str> for SharedStr {
    fn eq(&self, other: &&str) -> bool {
        self.eq_str(other)
    }
}

impl PartialEq<String> for SharedStr {
    fn eq(&self, other: &String) -> bool {
        self.eq_str(other)
    }
}

impl PartialEq<SharedStr> for str {
    fn eq(&self, other: &SharedStr) -> bool {
        other.eq_str(self)
    }
}

impl PartialEq<SharedStr> for &str {
    fn eq(&self, other: &SharedStr) -> bool {
        other.eq_str(self)
    }
}

impl PartialEq<SharedStr> for String {
    fn eq(&self, other: &SharedStr) -> bool {
        other.eq_str(self)
    }
}

impl From<String> for SharedStr {
    fn from(text: String) -> Self {
        Self(Arc::new(Repr::Decoded(text)))
    }
}

impl From<&str> for SharedStr {
    fn from(text: &str) -> Self {
        Self::from(text.to_owned())
    }
}

impl From<&String> for SharedStr {
    fn from(text: &String) -> Self {
        Self::from(text.clone())
    }
}

impl From<Box<str>> for SharedStr {
    fn from(text: Box<str>) -> Self {
        Self::from(String::from(text))
    }
}

impl From<Cow<'_, str>> for SharedStr {
    fn from(text: Cow<'_, str>) -> Self {
        Self::from(text.into_owned())
    }
}

impl From<char> for SharedStr {
    fn from(c: char) -> Self {
        Self::from(c.to_string())
    }
}

impl From<&SharedStr> for SharedStr {
    fn from(text: &SharedStr) -> Self {
        text.clone()
    }
}

impl From<SharedStr> for String {
    fn from(text: SharedStr) -> Self {
        text.into_string()
    }
}

impl Serialize for SharedStr {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &*self.0 {
            // serde_json writes a raw value verbatim; its Value serializer parses it.
            Repr::Raw { json, .. } => json.serialize(serializer),
            Repr::Decoded(text) => serializer.serialize_str(text),
            Repr::Stored(stored) => match stored.decoded() {
                Some(text) => serializer.serialize_str(text),
                None if super::stored_text::measure_left_out(stored.literal_len()) => {
                    serialize_literal("\"\"", serializer)
                }
                None => {
                    let literal = stored.literal().map_err(serde::ser::Error::custom)?;
                    serialize_literal(&literal, serializer)
                }
            },
        }
    }
}

impl SharedStr {
    /// Serializes `prefix` followed by this text as one JSON string (a `data:` URL around
    /// base64 data), written from the text's literal when it has one, so a long text is not
    /// decoded and kept.
    pub fn serialize_prefixed<S: Serializer>(
        &self,
        prefix: &str,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let quoted = serde_json::to_string(prefix).map_err(serde::ser::Error::custom)?;
        // The opening quote and the escaped prefix, without the closing quote.
        let head = &quoted[..quoted.len() - 1];
        let joined = |literal: &str| format!("{head}{}", &literal[1..]);
        match &*self.0 {
            Repr::Raw { json, .. } => serialize_literal(&joined(json.get()), serializer),
            Repr::Decoded(text) => serializer.collect_str(&format_args!("{prefix}{text}")),
            Repr::Stored(stored) => match stored.decoded() {
                Some(text) => serializer.collect_str(&format_args!("{prefix}{text}")),
                None if super::stored_text::measure_left_out(
                    stored.literal_len() + head.len() - 1,
                ) =>
                {
                    serialize_literal("\"\"", serializer)
                }
                None => {
                    let literal = stored.literal().map_err(serde::ser::Error::custom)?;
                    serialize_literal(&joined(&literal), serializer)
                }
            },
        }
    }
}

/// Writes a JSON literal the way serde_json's `RawValue` does: verbatim to serde_json's
/// writer, parsed by its `Value` serializer (the literal is known to be valid JSON).
fn serialize_literal<S: Serializer>(literal: &str, serializer: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeStruct;
    let mut raw = serializer.serialize_struct(RAW_VALUE_TOKEN, 1)?;
    raw.serialize_field(RAW_VALUE_TOKEN, literal)?;
    raw.end()
}

/// serde_json's name for a raw value: asked for under it, serde_json's own deserializers
/// hand over the literal unparsed; every other deserializer gives a plain string.
pub(crate) const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

struct SharedStrVisitor;

impl<'de> Visitor<'de> for SharedStrVisitor {
    type Value = SharedStr;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<SharedStr, E> {
        Ok(SharedStr::from(text))
    }

    fn visit_string<E: de::Error>(self, text: String) -> Result<SharedStr, E> {
        Ok(SharedStr::from(text))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, inner: D) -> Result<SharedStr, D::Error> {
        String::deserialize(inner).map(SharedStr::from)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<SharedStr, A::Error> {
        let literal = read_literal(map)?;
        if !literal.as_str().starts_with('"') {
            return Err(not_a_string_literal(literal.as_str(), &self));
        }
        Ok(SharedStr::from_literal(literal))
    }
}

/// A raw JSON value as serde_json hands it over: borrowed from the input when it can be.
pub(crate) enum Literal<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl Literal<'_> {
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Self::Borrowed(text) => text,
            Self::Owned(text) => text,
        }
    }
}

/// Reads the raw value serde_json hands over as a one-entry map (asked for under
/// [`RAW_VALUE_TOKEN`]), keeping where it lies in the input when the input is borrowed.
pub(crate) fn read_literal<'de, A: MapAccess<'de>>(mut map: A) -> Result<Literal<'de>, A::Error> {
    if map.next_key::<de::IgnoredAny>()?.is_none() {
        return Err(de::Error::custom("expected a raw value"));
    }
    map.next_value_seed(LiteralSeed)
}

struct LiteralSeed;

impl<'de> de::DeserializeSeed<'de> for LiteralSeed {
    type Value = Literal<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Literal<'de>, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for LiteralSeed {
    type Value = Literal<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a raw JSON value")
    }

    fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Literal<'de>, E> {
        Ok(Literal::Borrowed(text))
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Literal<'de>, E> {
        Ok(Literal::Owned(text.to_owned()))
    }

    fn visit_string<E: de::Error>(self, text: String) -> Result<Literal<'de>, E> {
        Ok(Literal::Owned(text))
    }
}

/// The error for a raw value that is not a string.
pub(crate) fn not_a_string_literal<E: de::Error>(json: &str, expected: &dyn de::Expected) -> E {
    let found = match json.chars().next() {
        Some('{') => "map",
        Some('[') => "sequence",
        Some('n') => "null",
        Some('t' | 'f') => "boolean",
        _ => "number",
    };
    de::Error::invalid_type(de::Unexpected::Other(found), expected)
}

impl<'de> Deserialize<'de> for SharedStr {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_newtype_struct(RAW_VALUE_TOKEN, SharedStrVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_read_from_json_stays_raw_until_read_and_writes_back_unchanged() {
        let json = r#"{"t":"a\nb \u00e9 \"q\""}"#;
        #[derive(Deserialize, Serialize)]
        struct Holder {
            t: SharedStr,
        }
        let holder: Holder = serde_json::from_str(json).unwrap();
        assert_eq!(holder.t.raw_json(), Some(r#""a\nb \u00e9 \"q\"""#));
        assert_eq!(serde_json::to_string(&holder).unwrap(), json);
        assert!(holder.t != "a");
        assert!(holder.t.raw_json().is_some());
        assert_eq!(holder.t, "a\nb é \"q\"");
        let value = serde_json::to_value(&holder).unwrap();
        assert_eq!(value["t"], "a\nb é \"q\"");
        let from_value: Holder = serde_json::from_value(value).unwrap();
        assert_eq!(from_value.t, holder.t);
    }

    #[test]
    fn other_deserializers_and_wrong_types() {
        let from_reader: SharedStr = serde_json::from_reader(&b"\"x\\ty\""[..]).unwrap();
        assert_eq!(from_reader, "x\ty");
        let error = serde_json::from_str::<SharedStr>("12").unwrap_err();
        assert!(error.to_string().contains("expected a string"), "{error}");
        assert!(serde_json::from_str::<SharedStr>("{\"a\":1}").is_err());
    }

    #[test]
    fn changes_copy_out_of_shared_and_raw_texts() {
        let mut a: SharedStr = serde_json::from_str("\"ab\"").unwrap();
        let b = a.clone();
        a.push_str("c");
        assert_eq!(a, "abc");
        assert_eq!(b, "ab");
        assert_eq!(a.raw_json(), None);
        assert_eq!(b.as_str(), "ab");
        assert_eq!(b.into_string(), "ab");
    }

    #[test]
    fn blank_checks_and_lossy_surrogates() {
        for (json, blank) in [
            (r#"" \n\t ""#, true),
            (r#""  x""#, false),
            (r#""\u0020""#, true),
            (r#""\u00a0""#, true),
            ("\"\u{3000}a\"", false),
            (r#""""#, true),
        ] {
            let text: SharedStr = serde_json::from_str(json).unwrap();
            assert_eq!(text.is_blank(), blank, "{json}");
        }
        let lone: SharedStr = serde_json::from_str(r#""a\ud83d b \ud83d\ude00""#).unwrap();
        assert_eq!(lone.as_str(), "a\u{FFFD} b 😀");
        assert_eq!(
            serde_json::to_string(&lone).unwrap(),
            r#""a\ud83d b \ud83d\ude00""#
        );
    }
}
