//! Empty lines.

use crate::component::Component;

/// `n` empty lines, for vertical spacing between components.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spacer(pub usize);

impl Component for Spacer {
    fn render(&mut self, _width: usize) -> Vec<String> {
        vec![String::new(); self.0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_n_empty_lines() {
        assert_eq!(Spacer(2).render(10), vec!["", ""]);
        assert!(Spacer(0).render(10).is_empty());
    }
}
