//! Escaping for HTML, and how times, counts and token numbers are written.

/// `<time>` for an ISO timestamp, shown as `YYYY-MM-DD HH:MM:SS UTC` (the script localizes it).
pub(super) fn time(iso: &str) -> String {
    let bytes = iso.as_bytes();
    let shown = if iso.is_ascii() && bytes.len() >= 19 && bytes[10] == b'T' {
        format!("{} {} UTC", &iso[..10], &iso[11..19])
    } else {
        iso.to_owned()
    };
    format!("<time datetime=\"{}\">{}</time>", esc(iso), esc(&shown))
}

/// `1 line`, `2 lines`, `1,000 lines`: the count with its noun in singular or plural.
pub(super) fn count(n: u64, one: &str, many: &str) -> String {
    let noun = if n == 1 { one } else { many };
    format!("{} {noun}", group_digits(n))
}

/// `1234567` → `1,234,567`.
pub(super) fn group_digits(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Compact token counts: `950`, `1.4k`, `14k`, `1.2M`.
pub(super) fn format_tokens(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..10_000 => format!("{:.1}k", n as f64 / 1_000.0),
        10_000..1_000_000 => format!("{}k", (n as f64 / 1_000.0).round()),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

/// Escapes text for HTML content and attribute values.
pub(super) fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
