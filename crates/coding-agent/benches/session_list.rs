//! Listing sessions for the resume picker: 200 session files of about 1.5 MB each (300 MB:
//! chat text, tool calls and one base64 image per file) under two project folders, as
//! `pi -r` and `/resume` list them. The files are generated once into
//! target/bench-session-list. Measured cold (no listing index) and warm (the index the
//! last listing left).

use criterion::{Criterion, criterion_group, criterion_main};
use pi_coding_agent::session::list::{INDEX_FILE, list_all_sessions};

const FILES: usize = 200;

fn write_sessions(root: &std::path::Path) {
    if root.join("done").exists() {
        return;
    }
    let image = "iVBORw0KGgo".repeat(40_000);
    let text = "The parser reads the file and builds the tree. ".repeat(40);
    for n in 0..FILES {
        let dir = root.join(format!("--project-{}--", n % 2));
        let _ = std::fs::create_dir_all(&dir);
        let mut lines = vec![format!(
            r#"{{"type":"session","version":3,"id":"s{n}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}}"#
        )];
        lines.push(format!(
            r#"{{"type":"message","id":"u0","parentId":null,"timestamp":"t","message":{{"role":"user","content":[{{"type":"text","text":"question {n}"}},{{"type":"image","data":"{image}","mimeType":"image/png"}}],"timestamp":1}}}}"#
        ));
        for m in 0..200 {
            lines.push(format!(
                r#"{{"type":"message","id":"a{m}","parentId":"u0","timestamp":"t","message":{{"role":"assistant","content":[{{"type":"text","text":"{text}"}},{{"type":"toolCall","id":"c{m}","name":"read","arguments":{{"path":"src/{m}.rs"}}}}],"api":"a","provider":"p","model":"m","usage":{{"input":1,"output":1}},"stopReason":"toolUse","timestamp":2}}}}"#
            ));
            lines.push(format!(
                r#"{{"type":"message","id":"t{m}","parentId":"a{m}","timestamp":"t","message":{{"role":"toolResult","toolCallId":"c{m}","toolName":"read","content":[{{"type":"text","text":"{text}"}}],"isError":false,"timestamp":3}}}}"#
            ));
        }
        let _ = std::fs::write(dir.join(format!("s{n}.jsonl")), lines.join("\n"));
    }
    let _ = std::fs::write(root.join("done"), "");
}

fn remove_indexes(root: &std::path::Path) {
    for n in 0..2 {
        let _ = std::fs::remove_file(root.join(format!("--project-{n}--")).join(INDEX_FILE));
    }
}

fn bench(c: &mut Criterion) {
    let root =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-session-list");
    write_sessions(&root);
    let mut group = c.benchmark_group("session_list");
    group.sample_size(10);
    // Cold: every folder's listing index removed first, so each file is read whole.
    group.bench_function("list_all_sessions_200_files_300MB_cold", |b| {
        b.iter_batched(
            || remove_indexes(&root),
            |()| {
                let list = list_all_sessions(&root);
                assert_eq!(list.len(), FILES);
            },
            criterion::BatchSize::PerIteration,
        )
    });
    // Warm: the indexes the last listing left; unchanged files are not read.
    group.bench_function("list_all_sessions_200_files_300MB_warm", |b| {
        b.iter(|| {
            let list = list_all_sessions(&root);
            assert_eq!(list.len(), FILES);
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
