//! OSC 8 hyperlinks, as pi 1.6 draws them where the terminal shows them: markdown links
//! link their text (no `(url)` after it) and tool titles link the file. `PI_HYPERLINKS`
//! and `terminal.hyperlinks` override detection (tmux without a client that forwards them
//! has none). tmux drops OSC 8 from its screen, so the bytes pi writes are recorded with
//! `pipe-pane`. Ours and pi 1.6.0 (`PI_TS16`) side by side.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use mock_llm::{MockServer, Script};
use serde_json::json;
use support::rpc::Env;
use support::tmux::{self, Tmux};
use support::ts16::{pis, program_path};

const WAIT: Duration = Duration::from_secs(20);
const REPLY: &str = "See [the docs](https://example.com/docs) for more.";

/// Runs one read of `notes.txt` and a reply with a link; returns the screen and the bytes
/// pi wrote meanwhile.
fn run(
    server: &MockServer,
    name: &str,
    wrapper: &Option<std::path::PathBuf>,
    vars: &[(&str, &str)],
    settings: serde_json::Value,
) -> (String, String, Env) {
    let env = Env::new(server, 128_000, settings);
    std::fs::write(env.work.join("notes.txt"), "some notes\n").unwrap();
    server.push(Script::tool_call("read", json!({"path": "notes.txt"})));
    server.push(Script::text(REPLY));
    let pi = program_path(wrapper);
    let mut all_vars = vec![("PI_OFFLINE", "1")];
    all_vars.extend_from_slice(vars);
    let tmux = Tmux::start_program(&env, &pi, &all_vars, &[], 100, 30);
    tmux.wait(&format!("{name}: started"), WAIT, |s| {
        s.contains("mock-model")
    });
    let raw = env.dir.path().join("output.bin");
    tmux.record_output(&raw);
    tmux.type_text("read the notes");
    tmux.wait(&format!("{name}: typed"), WAIT, |s| {
        s.contains("read the notes")
    });
    tmux.keys(&["Enter"]);
    let screen = tmux.wait(&format!("{name}: answered"), WAIT, |s| {
        s.contains("for more.") && !s.contains("Working")
    });
    let output = Tmux::recorded_until(&raw, WAIT, |text| text.contains("for more."));
    drop(tmux);
    (screen, output, env)
}

#[test]
fn links_are_hyperlinks_when_forced_on_and_text_when_off_as_16() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    for (name, wrapper) in pis() {
        let (screen, output, env) = run(
            &server,
            name,
            &wrapper,
            &[("PI_HYPERLINKS", "1")],
            json!({"tuiMode": "regular"}),
        );
        assert!(
            output.contains("\x1b]8;;https://example.com/docs\x1b\\"),
            "{name}: the link is an OSC 8 hyperlink: {output:?}"
        );
        assert!(
            !screen.contains("(https://example.com/docs)"),
            "{name}: {screen}"
        );
        let notes = std::fs::canonicalize(env.work.join("notes.txt")).unwrap();
        let file_link = format!("\x1b]8;;file://{}\x1b\\", notes.display());
        assert!(
            output.contains(&file_link),
            "{name}: the read title links the file: {output:?}"
        );

        // The setting wins over the variable.
        let (screen, output, _) = run(
            &server,
            name,
            &wrapper,
            &[("PI_HYPERLINKS", "1")],
            json!({"tuiMode": "regular", "terminal": {"hyperlinks": false}}),
        );
        assert!(!output.contains("\x1b]8;;https://"), "{name}: {output:?}");
        assert!(
            screen.contains("the docs (https://example.com/docs) for more."),
            "{name}: {screen}"
        );
    }
}
