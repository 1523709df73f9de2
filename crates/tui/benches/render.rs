//! Per-token cost of streaming a reply: differential rendering vs. a full redraw each time.
//!
//! The scene (100×40 screen, 300 history lines, re-wrapped reply, 4-line footer) comes
//! from the `render_cost` example, which prints the same comparison as a table.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

#[allow(dead_code)]
#[path = "../examples/render_cost.rs"]
mod render_cost;

fn stream_token(c: &mut Criterion) {
    let tokens = render_cost::reply_tokens(render_cost::TOKENS);
    let (history, footer) = (render_cost::history(), render_cost::footer());
    let mut group = c.benchmark_group("stream_token");
    group.throughput(Throughput::Elements(1));
    for (name, always_full) in [("differential", false), ("full_redraw", true)] {
        let mut r = render_cost::renderer(always_full);
        let mut text = String::new();
        let mut next = 0;
        group.bench_function(name, |b| {
            b.iter(|| {
                // One more token, rebuild the frame, render; start over at the end.
                if next == tokens.len() {
                    text.clear();
                    next = 0;
                }
                text.push_str(&tokens[next]);
                next += 1;
                r.render(render_cost::frame(&history, &text, &footer))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, stream_token);
criterion_main!(benches);
