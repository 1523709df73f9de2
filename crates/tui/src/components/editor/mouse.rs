//! A click in the editor (pi 1.6's fullscreen mouse): the cursor goes to the clicked
//! character of the clicked row.

use super::Editor;
use crate::width::visible_width;

impl Editor {
    /// A left click at `row` (0 is the top border) and `column` of the editor drawn
    /// `width` wide. Clicks on the borders change nothing.
    pub fn click(&mut self, row: usize, column: usize, width: usize) {
        if row == 0 || row > self.rendered_rows {
            return;
        }
        let lines = self.build_visual_line_map(self.last_width);
        let index = self.scroll_offset + row - 1;
        let Some(visual) = lines.get(index).copied() else {
            return;
        };
        let logical = &self.state.lines[visual.line];
        let chunk = &logical[visual.start..visual.start + visual.len];
        let padding = self.padding_x.min(width.saturating_sub(1) / 2);
        let target = column.saturating_sub(padding);
        let mut at = chunk.len();
        let mut last = 0;
        let mut col = 0;
        for seg in self.segments(chunk) {
            let next = col + visible_width(seg.text);
            last = seg.index;
            if target < next {
                at = seg.index;
                break;
            }
            col = next;
        }
        // Past the end of a row the line wraps on from: the row's last character.
        let wraps_on = lines.get(index + 1).is_some_and(|n| n.line == visual.line);
        if wraps_on && at == chunk.len() && !chunk.is_empty() {
            at = last;
        }
        self.state.cursor_line = visual.line;
        self.set_cursor_col(visual.start + at);
        self.last_action = None;
        self.history_index = None;
        if self.autocomplete.is_some() {
            self.update_autocomplete();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::component::Component;
    use crate::keybindings::Keybindings;

    fn editor(text: &str) -> Editor {
        let mut editor = Editor::new(Default::default(), Arc::new(Keybindings::default()));
        editor.set_text(text);
        editor
    }

    /// A click puts the cursor on the clicked character; past a line's end, at its end;
    /// the borders change nothing.
    #[test]
    fn a_click_moves_the_cursor_there() {
        let mut editor = editor("first line\nsecond");
        let _ = editor.render(40);
        editor.click(1, 3, 40);
        assert_eq!(editor.cursor(), (0, 3));
        editor.click(2, 30, 40);
        assert_eq!(editor.cursor(), (1, 6));
        editor.click(0, 2, 40);
        editor.click(3, 2, 40);
        assert_eq!(editor.cursor(), (1, 6));
    }
}
