//! Fuzzy matching for completion lists.
