//! The cost of one bash call, and what ending leftovers adds to it: `true` with and
//! without the end-of-call scan of the process table (keep_background), and a call that
//! leaves a background job to end.

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use pi_coding_agent::tools::bash_process::{RunOptions, run_command};

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let cwd = std::env::temp_dir();
    let mut group = c.benchmark_group("bash_call");
    group
        .sample_size(50)
        .measurement_time(Duration::from_secs(10));
    for (name, keep, command) in [
        ("true_keep_background", true, "true"),
        ("true_end_leftovers", false, "true"),
        ("background_job_ended", false, "sleep 30 & echo started"),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| {
                let options = RunOptions {
                    keep_background: keep,
                    ..RunOptions::default()
                };
                runtime
                    .block_on(run_command(command, &cwd, options))
                    .unwrap_or_else(|e| panic!("{e}"))
            });
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
