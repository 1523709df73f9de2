//! Emacs-style kill ring: killed text, yank and yank-pop.

/// Killed text, most recent last; consecutive kills can accumulate into one entry.
#[derive(Debug, Clone, Default)]
pub struct KillRing {
    ring: Vec<String>,
}

impl KillRing {
    /// Add killed text; with `accumulate`, merge into the last entry (`prepend` for
    /// backward kills).
    pub fn push(&mut self, text: &str, prepend: bool, accumulate: bool) {
        if text.is_empty() {
            return;
        }
        match self.ring.last_mut() {
            Some(last) if accumulate => {
                if prepend {
                    last.insert_str(0, text);
                } else {
                    last.push_str(text);
                }
            }
            _ => self.ring.push(text.to_string()),
        }
    }

    /// The most recent entry.
    pub fn peek(&self) -> Option<&str> {
        self.ring.last().map(String::as_str)
    }

    /// Move the most recent entry to the front (yank-pop cycling).
    pub fn rotate(&mut self) {
        if self.ring.len() > 1
            && let Some(last) = self.ring.pop()
        {
            self.ring.insert(0, last);
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.ring.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accumulates_and_rotates() {
        let mut ring = KillRing::default();
        ring.push("world", false, false);
        ring.push("hello ", true, true);
        assert_eq!(ring.peek(), Some("hello world"));
        ring.push("other", false, false);
        ring.rotate();
        assert_eq!(ring.peek(), Some("hello world"));
        assert_eq!(ring.len(), 2);
    }
}
