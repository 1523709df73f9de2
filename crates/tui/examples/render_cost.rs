//! What streaming a long reply costs: bytes written to the terminal and CPU time per
//! token, differential rendering against a full redraw on every token.
//!
//! Scene: a 100×40 screen, 300 lines of earlier history, the reply being streamed
//! (~2,000 tokens of markdown-like prose, re-wrapped after each token) and a 4-line
//! footer with the editor cursor. Run: `cargo run -p pi-tui --release --example render_cost`

use std::time::{Duration, Instant};

use pi_tui::{CURSOR_MARKER, Renderer, VirtualTerminal, wrap_text_with_ansi};

pub const COLS: usize = 100;
pub const ROWS: usize = 40;
pub const HISTORY_LINES: usize = 300;
pub const TOKENS: usize = 2000;

/// Deterministic pseudo-random numbers, so every run streams the same text.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

const WORDS: &[&str] = &[
    "the",
    "renderer",
    "writes",
    "only",
    "lines",
    "that",
    "changed",
    "since",
    "last",
    "frame",
    "terminal",
    "scrollback",
    "keeps",
    "finished",
    "output",
    "while",
    "a",
    "reply",
    "streams",
    "in",
    "token",
    "by",
    "and",
    "cursor",
    "moves",
    "up",
    "to",
    "rewrite",
    "tail",
    "of",
    "text",
    "width",
    "wrapping",
    "paragraph",
    "because",
    "every",
    "byte",
    "costs",
    "time",
    "over",
    "ssh",
];

/// The tokens of a markdown-like reply: words, some bold or as code, paragraph breaks.
pub fn reply_tokens(count: usize) -> Vec<String> {
    let mut rng = Lcg(0x5eed);
    let mut tokens = Vec::with_capacity(count);
    let mut since_break = 0;
    for _ in 0..count {
        let word = WORDS[rng.below(WORDS.len())];
        let token = match rng.below(20) {
            0 => format!(" \x1b[1m{word}\x1b[22m"),
            1 => format!(" \x1b[36m`{word}()`\x1b[39m"),
            2 => format!("{word}."),
            _ => format!(" {word}"),
        };
        since_break += 1;
        if since_break > 60 && rng.below(10) == 0 {
            since_break = 0;
            tokens.push(format!("\n\n{}", token.trim_start()));
        } else {
            tokens.push(token);
        }
    }
    tokens
}

/// Earlier conversation above the reply.
pub fn history() -> Vec<String> {
    (0..HISTORY_LINES)
        .map(|i| match i % 7 {
            0 => format!("\x1b[1m\x1b[35m## Section {i}\x1b[39m\x1b[22m"),
            3 => format!("  \x1b[32m$ cargo test --workspace\x1b[39m  # run {i}"),
            _ => format!(
                "Line {i} of earlier output: a sentence long enough to look like real prose \
                 in the log."
            ),
        })
        .collect()
}

/// The editor and status lines under the reply.
pub fn footer() -> Vec<String> {
    vec![
        "─".repeat(COLS),
        format!("> summarize the diff{CURSOR_MARKER}"),
        "─".repeat(COLS),
        "\x1b[2m~/work/main (main)   claude-sonnet   12.3k/200k tokens\x1b[22m".to_string(),
    ]
}

/// Everything on screen after `text` has streamed in.
pub fn frame(history: &[String], text: &str, footer: &[String]) -> Vec<String> {
    let mut lines = Vec::with_capacity(history.len() + footer.len() + 64);
    lines.extend_from_slice(history);
    lines.push(String::new());
    lines.extend(wrap_text_with_ansi(text, COLS));
    lines.push(String::new());
    lines.extend_from_slice(footer);
    lines
}

/// A renderer on a virtual 100×40 terminal that counts bytes but keeps none.
pub fn renderer(always_full: bool) -> Renderer<VirtualTerminal> {
    let mut term = VirtualTerminal::new(COLS, ROWS);
    term.set_keep_output(false);
    let mut r = Renderer::new(term);
    r.set_always_full(always_full);
    r
}

/// Totals of one streamed reply.
pub struct Outcome {
    pub tokens: usize,
    pub bytes: u64,
    pub full_redraws: u64,
    pub render_time: Duration,
    pub total_time: Duration,
}

/// Stream `tokens` one by one, rebuilding and rendering the frame after each.
pub fn stream(always_full: bool, tokens: &[String]) -> std::io::Result<Outcome> {
    let (history, footer) = (history(), footer());
    let mut r = renderer(always_full);
    let mut text = String::new();
    r.render(frame(&history, &text, &footer))?;
    let start_bytes = r.stats().bytes;
    let start_full = r.stats().full_redraws;
    let mut render_time = Duration::ZERO;
    let started = Instant::now();
    for token in tokens {
        text.push_str(token);
        let lines = frame(&history, &text, &footer);
        let t = Instant::now();
        r.render(lines)?;
        render_time += t.elapsed();
    }
    Ok(Outcome {
        tokens: tokens.len(),
        bytes: r.stats().bytes - start_bytes,
        full_redraws: r.stats().full_redraws - start_full,
        render_time,
        total_time: started.elapsed(),
    })
}

fn main() -> std::io::Result<()> {
    let tokens = reply_tokens(TOKENS);
    println!(
        "streaming {} tokens into {COLS}x{ROWS} below {HISTORY_LINES} lines of history",
        tokens.len()
    );
    println!(
        "{:<13} {:>7} {:>13} {:>12} {:>14} {:>13} {:>7}",
        "mode", "tokens", "total bytes", "bytes/token", "render µs/tok", "total µs/tok", "full"
    );
    for (name, always_full) in [("differential", false), ("full redraw", true)] {
        let o = stream(always_full, &tokens)?;
        let per = |d: Duration| d.as_secs_f64() * 1e6 / o.tokens as f64;
        println!(
            "{:<13} {:>7} {:>13} {:>12.0} {:>14.1} {:>13.1} {:>7}",
            name,
            o.tokens,
            o.bytes,
            o.bytes as f64 / o.tokens as f64,
            per(o.render_time),
            per(o.total_time),
            o.full_redraws
        );
    }
    Ok(())
}
