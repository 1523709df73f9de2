//! The transcript's rendered rows without copying them: the settled rows (cached by the
//! chat) followed by the rows of items that can still change. Fullscreen takes only the
//! rows it shows, so a scroll costs the same in a short session as in a long one.

/// A borrowed view of the transcript's rows.
pub(crate) struct ChatRows<'a> {
    pub(crate) settled: &'a [String],
    pub(crate) live: Vec<String>,
}

impl ChatRows<'_> {
    pub(crate) fn len(&self) -> usize {
        self.settled.len() + self.live.len()
    }

    pub(crate) fn get(&self, row: usize) -> Option<&str> {
        match self.settled.get(row) {
            Some(line) => Some(line),
            None => self.live.get(row - self.settled.len()).map(String::as_str),
        }
    }

    /// Rows `start..end` (clamped), copied.
    pub(crate) fn slice(&self, start: usize, end: usize) -> Vec<String> {
        let end = end.min(self.len());
        (start.min(end)..end)
            .filter_map(|row| self.get(row).map(str::to_owned))
            .collect()
    }

    /// Every row, copied (a search looking through all of them).
    pub(crate) fn to_vec(&self) -> Vec<String> {
        self.slice(0, self.len())
    }

    pub(crate) fn last(&self) -> Option<&str> {
        self.len().checked_sub(1).and_then(|row| self.get(row))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_run_from_the_settled_into_the_live_ones() {
        let settled = vec!["a".to_owned(), "b".to_owned()];
        let rows = ChatRows {
            settled: &settled,
            live: vec!["c".to_owned()],
        };
        assert_eq!(rows.len(), 3);
        assert_eq!(rows.get(2), Some("c"));
        assert_eq!(rows.get(3), None);
        assert_eq!(rows.slice(1, 9), vec!["b", "c"]);
        assert_eq!(rows.last(), Some("c"));
    }
}
