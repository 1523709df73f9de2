//! The text of a user's `!` command (and RPC `bash`) as pi 1.6.0 keeps it: escape
//! sequences stripped, other control characters and carriage returns dropped. Streamed
//! chunks hold back an escape sequence cut at their end until the next chunk completes it,
//! so no fragment of a colour code (a stray `m`) is left behind.

use std::sync::{Arc, LazyLock, Mutex};

use regex::Regex;

use crate::tools::bash_process::ChunkFn;

/// String terminators: BEL, `ESC \`, ST.
const ST: &str = r"(?:\x07|\x1B\x5C|\x{9C})";
/// CSI and related introducers with their parameters (pi's `CSI_START`).
const CSI_START: &str =
    r"(?:(?:\x1B\[|\x{9B})[<=>]|[\x1B\x{9B}][\[\]()#;?]*)(?:[0-9]{1,4}(?:[;:][0-9]{0,4})*)?";
/// The final byte of a CSI sequence.
const CSI_FINAL: &str = r"[0-9A-PR-TZcf-nq-uy=><~]";
/// The longest unfinished sequence held back between chunks.
const MAX_PENDING: usize = 256;

static COMPLETE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(&format!(r"(?s)(?:\x1B\].*?{ST})|{CSI_START}{CSI_FINAL}")).ok());

static UNFINISHED_AT_END: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?:\x1B\](?:[^\x07\x{{9C}}\x1B]|\x1B+[^\\\x07\x{{9C}}\x1B])*\x1B*|{CSI_START})$"
    ))
    .ok()
});

fn has_escape(text: &str) -> bool {
    text.contains('\u{1b}') || text.contains('\u{9b}')
}

/// `text` without escape sequences.
pub fn strip_ansi(text: &str) -> String {
    match COMPLETE.as_ref() {
        Some(re) if has_escape(text) => re.replace_all(text, "").into_owned(),
        _ => text.to_owned(),
    }
}

/// Splits `text` into what can be stripped now and an unfinished escape sequence at its end.
pub fn split_unfinished_suffix(text: &str) -> (&str, &str) {
    if !has_escape(text) {
        return (text, "");
    }
    let mut window = text.len().saturating_sub(MAX_PENDING);
    while !text.is_char_boundary(window) {
        window += 1;
    }
    match UNFINISHED_AT_END
        .as_ref()
        .and_then(|re| re.find(&text[window..]))
    {
        Some(found) => text.split_at(window + found.start()),
        None => (text, ""),
    }
}

/// Output text as the session keeps it: escape sequences stripped, other control
/// characters (tab and newline aside) and carriage returns dropped.
pub fn sanitize(text: &str) -> String {
    strip_ansi(text)
        .chars()
        .filter(|&c| !matches!(c, '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{fff9}'..='\u{fffb}'))
        .collect()
}

/// Wraps a chunk callback so each chunk arrives sanitized, with escape sequences split
/// across chunks held back until complete.
pub fn sanitized_chunks(on_chunk: ChunkFn) -> (ChunkFn, impl Fn()) {
    let pending = Arc::new(Mutex::new(String::new()));
    let send = {
        let pending = Arc::clone(&pending);
        let on_chunk = Arc::clone(&on_chunk);
        Arc::new(move |chunk: &str| {
            let complete = {
                let mut pending = pending.lock().unwrap_or_else(|p| p.into_inner());
                let joined = std::mem::take(&mut *pending) + chunk;
                let (complete, rest) = split_unfinished_suffix(&joined);
                let complete = complete.to_owned();
                *pending = rest.to_owned();
                complete
            };
            let text = sanitize(&complete);
            if !text.is_empty() {
                on_chunk(&text);
            }
        }) as ChunkFn
    };
    let flush = move || {
        let rest = std::mem::take(&mut *pending.lock().unwrap_or_else(|p| p.into_inner()));
        let text = sanitize(&rest);
        if !text.is_empty() {
            on_chunk(&text);
        }
    };
    (send, flush)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_codes_hyperlinks_and_control_characters_go() {
        assert_eq!(
            sanitize("\x1b[31mred\x1b[0m\r\n\x1b]8;;http://x\x07link\x1b]8;;\x07 \x08ok\t"),
            "red\nlink ok\t"
        );
        assert_eq!(strip_ansi("plain"), "plain");
    }

    #[test]
    fn a_code_cut_at_the_end_waits_for_the_rest() {
        assert_eq!(split_unfinished_suffix("ab\x1b[3"), ("ab", "\x1b[3"));
        assert_eq!(
            split_unfinished_suffix("ab\x1b]8;;ht"),
            ("ab", "\x1b]8;;ht")
        );
        assert_eq!(split_unfinished_suffix("ab\x1b[31m"), ("ab\x1b[31m", ""));
        let seen = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&seen);
        let (send, flush) = sanitized_chunks(Arc::new(move |t: &str| {
            sink.lock().unwrap().push_str(t);
        }));
        send("one \x1b[3");
        send("1mtwo\x1b[0");
        send("m three");
        flush();
        assert_eq!(*seen.lock().unwrap(), "one two three");
    }
}
