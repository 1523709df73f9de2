//! JavaScript's `decodeURIComponent`, for the places pi decodes what it was given as a URI
//! part (package sources, JSON Schema `$ref` pointers).

/// `%XX` escapes to UTF-8 text; `None` for a malformed escape or bytes that are not UTF-8.
pub fn decode(value: &str) -> Option<String> {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = value.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}
