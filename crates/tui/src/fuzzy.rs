//! Fuzzy matching for completion lists.
//!
//! A query matches when all its characters appear in order in the text (case-insensitive).
//! Scores follow the TypeScript pi: lower is better; consecutive runs, word-boundary hits
//! and exact matches lower the score, gaps and late matches raise it.

/// Score of `query` against `text` when it matches (lower is better), `None` otherwise.
///
/// A query of letters then digits (`"gpt4"`) also tries the swapped order (`"4gpt"`), at a
/// small penalty.
pub fn fuzzy_match(query: &str, text: &str) -> Option<f64> {
    let query_lower: Vec<char> = query.to_lowercase().chars().collect();
    let text_lower: Vec<char> = text.to_lowercase().chars().collect();
    if let Some(score) = match_chars(&query_lower, &text_lower) {
        return Some(score);
    }
    let swapped = swap_alpha_numeric(&query_lower)?;
    match_chars(&swapped, &text_lower).map(|score| score + 5.0)
}

/// `abc12` → `12abc` and `12abc` → `abc12`; `None` for any other shape.
fn swap_alpha_numeric(query: &[char]) -> Option<Vec<char>> {
    let alpha = |c: &char| c.is_ascii_lowercase();
    let digit = |c: &char| c.is_ascii_digit();
    let first = query.first()?;
    let split = if alpha(first) {
        query.iter().position(|c| !alpha(c))?
    } else if digit(first) {
        query.iter().position(|c| !digit(c))?
    } else {
        return None;
    };
    let (head, tail) = query.split_at(split);
    let tail_ok = if alpha(first) {
        tail.iter().all(digit)
    } else {
        tail.iter().all(alpha)
    };
    tail_ok.then(|| tail.iter().chain(head).copied().collect())
}

fn is_boundary(c: char) -> bool {
    c.is_whitespace() || matches!(c, '-' | '_' | '.' | '/' | ':')
}

fn match_chars(query: &[char], text: &[char]) -> Option<f64> {
    if query.is_empty() {
        return Some(0.0);
    }
    if query.len() > text.len() {
        return None;
    }
    let mut qi = 0;
    let mut score = 0.0;
    let mut last_match: Option<usize> = None;
    let mut consecutive = 0u32;
    for (i, &c) in text.iter().enumerate() {
        if qi >= query.len() {
            break;
        }
        if c != query[qi] {
            continue;
        }
        let word_boundary = i == 0 || is_boundary(text[i - 1]);
        match last_match {
            Some(last) if last + 1 == i => {
                consecutive += 1;
                score -= f64::from(consecutive) * 5.0;
            }
            Some(last) => {
                consecutive = 0;
                score += (i - last - 1) as f64 * 2.0;
            }
            None => consecutive = 0,
        }
        if word_boundary {
            score -= 10.0;
        }
        score += i as f64 * 0.1;
        last_match = Some(i);
        qi += 1;
    }
    if qi < query.len() {
        return None;
    }
    if query == text {
        score -= 100.0;
    }
    Some(score)
}

/// Items whose `key` matches every whitespace-separated token of `query`, best first
/// (stable for equal scores); an empty query returns all items unchanged.
pub fn fuzzy_filter<T>(items: Vec<T>, query: &str, key: impl Fn(&T) -> &str) -> Vec<T> {
    let tokens: Vec<&str> = query.split_whitespace().collect();
    if tokens.is_empty() {
        return items;
    }
    let mut scored: Vec<(f64, T)> = items
        .into_iter()
        .filter_map(|item| {
            let text = key(&item);
            let mut total = 0.0;
            for token in &tokens {
                total += fuzzy_match(token, text)?;
            }
            Some((total, item))
        })
        .collect();
    scored.sort_by(|a, b| a.0.total_cmp(&b.0));
    scored.into_iter().map(|(_, item)| item).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_in_order_case_insensitively() {
        assert!(fuzzy_match("mdl", "Model").is_some());
        assert!(fuzzy_match("ldm", "model").is_none());
        assert!(fuzzy_match("", "anything") == Some(0.0));
        assert!(fuzzy_match("toolong", "tool").is_none());
    }

    #[test]
    fn exact_and_consecutive_matches_score_better() {
        let exact = fuzzy_match("model", "model").unwrap_or(f64::MAX);
        let prefix = fuzzy_match("model", "models").unwrap_or(f64::MAX);
        let scattered = fuzzy_match("model", "my-other-delta-label").unwrap_or(f64::MAX);
        assert!(exact < prefix, "{exact} {prefix}");
        assert!(prefix < scattered, "{prefix} {scattered}");
    }

    #[test]
    fn word_boundaries_beat_mid_word_hits() {
        let boundary = fuzzy_match("b", "a-b").unwrap_or(f64::MAX);
        let middle = fuzzy_match("b", "aab").unwrap_or(f64::MAX);
        assert!(boundary < middle, "{boundary} {middle}");
    }

    #[test]
    fn swaps_letters_and_digits() {
        assert!(fuzzy_match("gpt4", "4gpt").is_some());
        assert!(fuzzy_match("4o", "o4-mini").is_some());
        assert!(fuzzy_match("x9", "abc").is_none());
        let direct = fuzzy_match("gpt4", "gpt4").unwrap_or(f64::MAX);
        let swapped = fuzzy_match("4gpt", "gpt4").unwrap_or(f64::MAX);
        assert!(direct < swapped);
    }

    #[test]
    fn filter_sorts_best_first_and_needs_all_tokens() {
        let items = vec!["settings", "session", "model", "share-session"];
        let out = fuzzy_filter(items.clone(), "ses", |s| s);
        assert_eq!(out.first(), Some(&"session"));
        assert!(!out.contains(&"model"));
        assert_eq!(fuzzy_filter(items.clone(), "  ", |s| s), items);
        let out = fuzzy_filter(items, "share ses", |s| s);
        assert_eq!(out, vec!["share-session"]);
    }
}
