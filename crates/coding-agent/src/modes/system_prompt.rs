//! The system prompt sent with every request.

use std::path::Path;

/// Today's date in UTC as `YYYY-MM-DD`.
pub fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    // Civil date from days since the epoch (Howard Hinnant's algorithm).
    let z = secs.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The default prompt (no tools are enabled yet in this build), or `custom`, followed by the
/// appended texts (a path to an existing file contributes the file's contents), the date
/// and the working directory.
pub fn build(custom: Option<&str>, append: &[String], cwd: &Path) -> String {
    let mut prompt = match custom {
        Some(text) => text.to_owned(),
        None => "You are an expert coding assistant operating inside pi, a coding agent harness. \
You help users understand and change code: explain clearly, show file paths when you refer to \
files, and be concise."
            .to_owned(),
    };
    for extra in append {
        let text = std::fs::read_to_string(extra).unwrap_or_else(|_| extra.clone());
        prompt.push_str("\n\n");
        prompt.push_str(&text);
    }
    prompt.push_str(&format!("\nCurrent date: {}", today()));
    prompt.push_str(&format!("\nCurrent working directory: {}", cwd.display()));
    prompt
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_ends_with_date_and_cwd() {
        let p = build(Some("Custom."), &["More.".into()], Path::new("/tmp/work"));
        assert!(p.starts_with("Custom.\n\nMore.\nCurrent date: 20"));
        assert!(p.ends_with("\nCurrent working directory: /tmp/work"));
        assert_eq!(today().len(), 10);
    }
}
