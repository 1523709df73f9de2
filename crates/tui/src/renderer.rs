//! The differential renderer: diffs lines against what the terminal shows.
