//! The cost of crossing to the node extension host, in process: one `ping` round trip and
//! one `tool_call` event through the runtime to a no-op TypeScript handler and back (the
//! state sync a bound session adds is not included). Needs node and npm; the host's
//! packages install into target/bench-ext-host/agent on the first run.

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use pi_coding_agent::extension_loader::{LoadOptions, load};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn bench(c: &mut Criterion) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-ext-host");
    let work = root.join("work");
    let _ = std::fs::create_dir_all(&work);
    let ext = work.join("noop.ts");
    let _ = std::fs::write(
        &ext,
        "export default function (pi) { pi.on(\"tool_call\", async () => undefined); }\n",
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    let loaded = rt.block_on(load(
        LoadOptions {
            cwd: work.clone(),
            agent_dir: root.join("agent"),
            mode: "print".into(),
            cli_paths: vec![ext.display().to_string()],
            no_extensions: true,
            approve: None,
            ask_trust: None,
            theme: "dark".into(),
        },
        Vec::new(),
    ));
    if let Some(fatal) = loaded.fatal {
        eprintln!("extension_hook: skipped, the host did not start: {fatal}");
        return;
    }
    let runtime = Arc::clone(&loaded.runtime);
    c.bench_function("extension host ping round trip", |b| {
        b.iter(|| rt.block_on(runtime.host_call("ping", json!({}))))
    });
    c.bench_function("no-op tool_call handler", |b| {
        b.iter(|| {
            rt.block_on(runtime.emit_tool_call(
                "read",
                "call_1",
                None,
                json!({"path": "a.txt"}),
                CancellationToken::new(),
            ))
        })
    });
    rt.block_on(runtime.shutdown());
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(50);
    targets = bench
}
criterion_main!(benches);
