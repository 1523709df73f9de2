//! Comparing secrets (tokens, passwords) in time that does not depend on where they differ,
//! so a client cannot find a token byte by byte from response times.

/// Whether `a` and `b` are equal, looking at every byte of the longer one.
pub fn same_secret(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut diff = a.len() ^ b.len();
    for i in 0..a.len().max(b.len()) {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0);
        diff |= usize::from(x ^ y);
    }
    diff == 0
}

/// The principal of `secret` among `tokens` (token → principal), comparing with every
/// token whatever matches first.
pub fn principal_of<'a>(
    tokens: impl IntoIterator<Item = (&'a String, &'a String)>,
    secret: &str,
) -> Option<String> {
    let mut found = None;
    for (token, principal) in tokens {
        if same_secret(token, secret) && found.is_none() {
            found = Some(principal.clone());
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abc", "abd"));
        assert!(!same_secret("abc", "abcd"));
        assert!(!same_secret("", "a"));
        let tokens: std::collections::HashMap<String, String> =
            [("t1".to_owned(), "alice".to_owned())].into();
        assert_eq!(principal_of(&tokens, "t1").as_deref(), Some("alice"));
        assert_eq!(principal_of(&tokens, "t2"), None);
    }
}
