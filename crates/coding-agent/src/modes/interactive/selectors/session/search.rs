//! The search box's query: fuzzy tokens, `"exact phrases"` or `re:<regex>`, matched
//! against a session's id, name, messages and cwd (lower scores are better).

use pi_tui::fuzzy::fuzzy_match;

use crate::session::list::SessionInfo;

/// One search token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Token {
    Fuzzy(String),
    Phrase(String),
}

/// A parsed search query.
#[derive(Debug, Clone)]
pub(super) enum Query {
    Tokens(Vec<Token>),
    Regex(regex::Regex),
    /// A `re:` pattern that does not compile: nothing matches.
    Invalid,
}

pub(super) fn parse_query(query: &str) -> Query {
    let trimmed = query.trim();
    if let Some(pattern) = trimmed.strip_prefix("re:") {
        let pattern = pattern.trim();
        if pattern.is_empty() {
            return Query::Invalid;
        }
        return regex::RegexBuilder::new(pattern)
            .case_insensitive(true)
            .build()
            .map_or(Query::Invalid, Query::Regex);
    }
    let mut tokens = Vec::new();
    let mut buf = String::new();
    let mut in_quote = false;
    let flush = |buf: &mut String, tokens: &mut Vec<Token>, phrase: bool| {
        let value = buf.trim().to_owned();
        buf.clear();
        if !value.is_empty() {
            tokens.push(if phrase {
                Token::Phrase(value)
            } else {
                Token::Fuzzy(value)
            });
        }
    };
    for c in trimmed.chars() {
        if c == '"' {
            flush(&mut buf, &mut tokens, in_quote);
            in_quote = !in_quote;
        } else if !in_quote && c.is_whitespace() {
            flush(&mut buf, &mut tokens, false);
        } else {
            buf.push(c);
        }
    }
    if in_quote {
        // Unbalanced quotes: plain whitespace tokens.
        return Query::Tokens(
            trimmed
                .split_whitespace()
                .map(|t| Token::Fuzzy(t.to_owned()))
                .collect(),
        );
    }
    flush(&mut buf, &mut tokens, false);
    Query::Tokens(tokens)
}

fn normalize(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// The match score of a session (lower is better), `None` when it does not match.
pub(super) fn match_session(session: &SessionInfo, query: &Query) -> Option<f64> {
    let text = format!(
        "{} {} {} {}",
        session.id,
        session.name.as_deref().unwrap_or(""),
        session.all_messages_text,
        session.cwd
    );
    match query {
        Query::Invalid => None,
        Query::Regex(re) => re.find(&text).map(|m| m.start() as f64 * 0.1),
        Query::Tokens(tokens) => {
            let mut total = 0.0;
            let mut normalized: Option<String> = None;
            for token in tokens {
                match token {
                    Token::Phrase(phrase) => {
                        let haystack = normalized.get_or_insert_with(|| normalize(&text));
                        let phrase = normalize(phrase);
                        if phrase.is_empty() {
                            continue;
                        }
                        total += haystack.find(&phrase)? as f64 * 0.1;
                    }
                    Token::Fuzzy(value) => total += fuzzy_match(value, &text)?,
                }
            }
            Some(total)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_parsing() {
        let Query::Tokens(tokens) = parse_query(r#"foo "node cve" bar"#) else {
            panic!("tokens expected");
        };
        assert_eq!(
            tokens,
            vec![
                Token::Fuzzy("foo".into()),
                Token::Phrase("node cve".into()),
                Token::Fuzzy("bar".into())
            ]
        );
        let Query::Tokens(tokens) = parse_query(r#"foo "open"#) else {
            panic!("tokens expected");
        };
        assert_eq!(tokens.len(), 2);
        assert!(matches!(parse_query("re:"), Query::Invalid));
        assert!(matches!(parse_query("re:a+"), Query::Regex(_)));
    }
}
