//! Tables: column widths shared out from what each column wants and its longest word,
//! cells wrapped inside box-drawing borders (the raw source when even that cannot fit).

use super::super::tree::Inline;
use super::{Ctx, Renderer, wrap};
use crate::width::visible_width;

/// Table columns may break words longer than this to fit the width.
const MAX_UNBROKEN_WORD: usize = 30;

impl Renderer<'_> {
    pub(super) fn table(
        &mut self,
        head: &[Vec<Inline>],
        rows: &[Vec<Vec<Inline>>],
        raw: &str,
        width: usize,
        ctx: &Ctx,
    ) -> Vec<String> {
        let cols = head.len();
        if cols == 0 {
            return Vec::new();
        }
        // "│ " + cells joined by " │ " + " │"
        let overhead = 3 * cols + 1;
        if width < overhead + cols {
            return wrap(raw, width);
        }
        let available = width - overhead;
        let head_text: Vec<String> = head.iter().map(|c| self.inlines(c, ctx)).collect();
        let row_text: Vec<Vec<String>> = rows
            .iter()
            .map(|r| {
                (0..cols)
                    .map(|i| r.get(i).map(|c| self.inlines(c, ctx)).unwrap_or_default())
                    .collect()
            })
            .collect();

        let longest_word = |s: &str| {
            s.split_whitespace()
                .map(visible_width)
                .max()
                .unwrap_or(0)
                .min(MAX_UNBROKEN_WORD)
        };
        let mut natural = vec![0usize; cols];
        let mut min_word = vec![1usize; cols];
        for row in std::iter::once(&head_text).chain(row_text.iter()) {
            for (i, cell) in row.iter().enumerate() {
                natural[i] = natural[i].max(visible_width(cell));
                min_word[i] = min_word[i].max(longest_word(cell));
            }
        }

        let mut min_cols = min_word.clone();
        let mut min_sum: usize = min_cols.iter().sum();
        if min_sum > available {
            // Words do not fit: share the space by how much each column wants.
            min_cols = vec![1; cols];
            let remaining = available - cols;
            let weight: usize = min_word.iter().map(|w| w - 1).sum();
            for (c, w) in min_cols.iter_mut().zip(&min_word) {
                *c += ((w - 1) * remaining).checked_div(weight).unwrap_or(0);
            }
            let mut leftover = available.saturating_sub(min_cols.iter().sum());
            for c in min_cols.iter_mut() {
                if leftover == 0 {
                    break;
                }
                *c += 1;
                leftover -= 1;
            }
            min_sum = min_cols.iter().sum();
        }

        let widths: Vec<usize> = if natural.iter().sum::<usize>() + overhead <= width {
            natural
                .iter()
                .zip(&min_cols)
                .map(|(n, m)| (*n).max(*m))
                .collect()
        } else {
            let potential: usize = natural
                .iter()
                .zip(&min_cols)
                .map(|(n, m)| n.saturating_sub(*m))
                .sum();
            let extra = available.saturating_sub(min_sum);
            let mut widths: Vec<usize> = natural
                .iter()
                .zip(&min_cols)
                .map(|(n, m)| {
                    m + (n.saturating_sub(*m) * extra)
                        .checked_div(potential)
                        .unwrap_or(0)
                })
                .collect();
            let mut remaining = available.saturating_sub(widths.iter().sum());
            while remaining > 0 {
                let mut grew = false;
                for (w, n) in widths.iter_mut().zip(&natural) {
                    if remaining > 0 && *w < *n {
                        *w += 1;
                        remaining -= 1;
                        grew = true;
                    }
                }
                if !grew {
                    break;
                }
            }
            widths
        };

        let border = |left: &str, mid: &str, right: &str| {
            let cells: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
            format!("{left}─{}─{right}", cells.join(&format!("─{mid}─")))
        };
        let bold = self.theme.bold;
        let cell_rows = |cells: &[String], header: bool| -> Vec<String> {
            let wrapped: Vec<Vec<String>> = cells
                .iter()
                .zip(&widths)
                .map(|(c, w)| wrap(c, *w))
                .collect();
            let height = wrapped.iter().map(Vec::len).max().unwrap_or(1);
            (0..height)
                .map(|line| {
                    let parts: Vec<String> = wrapped
                        .iter()
                        .zip(&widths)
                        .map(|(cell, w)| {
                            let text = cell.get(line).map_or("", String::as_str);
                            let padded = format!(
                                "{text}{}",
                                " ".repeat(w.saturating_sub(visible_width(text)))
                            );
                            if header { bold.paint(&padded) } else { padded }
                        })
                        .collect();
                    format!("│ {} │", parts.join(" │ "))
                })
                .collect()
        };

        let mut lines = vec![border("┌", "┬", "┐")];
        lines.extend(cell_rows(&head_text, true));
        let separator = border("├", "┼", "┤");
        lines.push(separator.clone());
        for (i, row) in row_text.iter().enumerate() {
            lines.extend(cell_rows(row, false));
            if i + 1 < row_text.len() {
                lines.push(separator.clone());
            }
        }
        lines.push(border("└", "┴", "┘"));
        lines
    }
}
