//! Mistral tool-call ids: exactly nine letters and digits. Ids from other providers are
//! rewritten the way pi's TypeScript provider does it, so a session moves between the two.

use std::cell::RefCell;
use std::collections::HashMap;

/// The length Mistral requires of a tool-call id.
pub const TOOL_CALL_ID_LENGTH: usize = 9;

/// pi's `shortHash`: a fast deterministic hash (two 32-bit lanes over UTF-16 code units),
/// printed as two base-36 numbers.
pub fn short_hash(text: &str) -> String {
    let mut h1: u32 = 0xdead_beef;
    let mut h2: u32 = 0x41c6_ce57;
    for unit in text.encode_utf16() {
        let ch = u32::from(unit);
        h1 = (h1 ^ ch).wrapping_mul(2_654_435_761);
        h2 = (h2 ^ ch).wrapping_mul(1_597_334_677);
    }
    h1 = (h1 ^ (h1 >> 16)).wrapping_mul(2_246_822_507)
        ^ (h2 ^ (h2 >> 13)).wrapping_mul(3_266_489_909);
    h2 = (h2 ^ (h2 >> 16)).wrapping_mul(2_246_822_507)
        ^ (h1 ^ (h1 >> 13)).wrapping_mul(3_266_489_909);
    let mut out = base36(h2);
    out.push_str(&base36(h1));
    out
}

fn base36(mut value: u32) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut digits = Vec::with_capacity(7);
    loop {
        digits.push(DIGITS[(value % 36) as usize]);
        value /= 36;
        if value == 0 {
            break;
        }
    }
    digits.iter().rev().map(|&b| char::from(b)).collect()
}

/// The Mistral id for `id` on the given collision `attempt`: the id's letters and digits when
/// there are exactly nine of them, else nine characters of a hash of them.
pub fn derive_tool_call_id(id: &str, attempt: u32) -> String {
    let normalized: String = id.chars().filter(char::is_ascii_alphanumeric).collect();
    if attempt == 0 && normalized.len() == TOOL_CALL_ID_LENGTH {
        return normalized;
    }
    let base = if normalized.is_empty() {
        id
    } else {
        normalized.as_str()
    };
    let seed = if attempt == 0 {
        base.to_owned()
    } else {
        format!("{base}:{attempt}")
    };
    short_hash(&seed)
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(TOOL_CALL_ID_LENGTH)
        .collect()
}

/// Maps foreign ids to Mistral ids for one request, giving two different ids two different
/// results (a collision moves to the next attempt).
#[derive(Debug, Default)]
pub struct IdNormalizer {
    forward: RefCell<HashMap<String, String>>,
    reverse: RefCell<HashMap<String, String>>,
}

impl IdNormalizer {
    /// The Mistral id for `id` (the same one every time within this normalizer).
    pub fn normalize(&self, id: &str) -> String {
        if let Some(existing) = self.forward.borrow().get(id) {
            return existing.clone();
        }
        let mut reverse = self.reverse.borrow_mut();
        let mut attempt = 0;
        loop {
            let candidate = derive_tool_call_id(id, attempt);
            let free = reverse.get(&candidate).is_none_or(|owner| owner == id);
            if free {
                reverse.insert(candidate.clone(), id.to_owned());
                self.forward
                    .borrow_mut()
                    .insert(id.to_owned(), candidate.clone());
                return candidate;
            }
            attempt += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_hash_matches_the_typescript_one() {
        // Values printed by pi's `shortHash` under node.
        assert_eq!(short_hash(""), "k4n83c7h0j2b");
        assert_eq!(short_hash("a"), "m8735310ae7sx");
        assert_eq!(short_hash("call_abc123"), "sb0y391xa16ki");
        assert_eq!(short_hash("héllo 🎉"), "6r44vp1dakgxg");
    }

    #[test]
    fn ids_are_derived_as_in_typescript() {
        let cases = [
            ("call_abc123", "9k918q7jl", "23ok4pxpv"),
            ("toolu_01A09q90qw90lq917835lq9", "1q2i7qh1x", "1qk1za11o"),
            ("call_03194b7774af409580db2e5b", "9aue04mmv", "w2vvn1nr7"),
            ("toolcall:0", "toolcall0", "1t6qern11"),
            ("fc_123|call_456", "zrnqf0ksk", "10o2cazsx"),
            ("", "k4n83c7h0", "163jg8k12"),
        ];
        for (id, first, second) in cases {
            assert_eq!(derive_tool_call_id(id, 0), first, "{id}");
            assert_eq!(derive_tool_call_id(id, 1), second, "{id}");
        }
        assert_eq!(derive_tool_call_id("D681PevKs", 0), "D681PevKs");
    }

    #[test]
    fn colliding_ids_get_distinct_results() {
        let normalizer = IdNormalizer::default();
        // Both reduce to the same nine characters.
        let a = normalizer.normalize("abc-def-ghi");
        let b = normalizer.normalize("abc_def_ghi");
        assert_eq!(a, "abcdefghi");
        assert_ne!(a, b);
        assert_eq!(b, derive_tool_call_id("abc_def_ghi", 1));
        assert_eq!(normalizer.normalize("abc-def-ghi"), a);
        assert_eq!(normalizer.normalize("abc_def_ghi"), b);
    }
}
