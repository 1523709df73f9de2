//! The codemode row in the interactive UI, ours and pi 1.6.0 (`PI_TS16`) side by side in
//! tmux (regular mode): the script highlighted, the calls it made with their state, the
//! script's output without the result's header, and the time it took. The row's text must
//! read the same once call times are replaced.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use mock_llm::{MockServer, Script};
use serde_json::json;
use support::rpc::Env;
use support::tmux::{self, Tmux};
use support::ts16::{pis, program_path};

const COLS: u16 = 100;
const ROWS: u16 = 40;

/// The row's lines: from the `codemode` title to the `Took` line, right-trimmed, with
/// times replaced.
fn codemode_row(screen: &str) -> Vec<String> {
    let lines: Vec<&str> = screen.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.trim() == "codemode")
        .unwrap_or_else(|| panic!("no codemode row:\n{screen}"));
    let end = lines[start..]
        .iter()
        .position(|l| l.trim_start().starts_with("Took "))
        .map(|i| start + i)
        .unwrap_or_else(|| panic!("no Took line:\n{screen}"));
    let times = regex::Regex::new(r"\b[0-9]+(\.[0-9]+)?(ms|s)\b").unwrap();
    lines[start..=end]
        .iter()
        .map(|l| times.replace_all(l.trim_end(), "<t>").into_owned())
        .collect()
}

#[test]
fn the_codemode_row_reads_as_16() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let code = "const a = await tools.read({ path: \"a.txt\" });\nconst b = await tools.read({ path: \"missing.txt\" }).catch(() => \"none\");\nconsole.log(\"read\", 2);\nreturn a + b;";
    let mut rows = Vec::new();
    for (name, wrapper) in pis() {
        server.push(Script::tool_call("codemode", json!({ "code": code })));
        server.push(Script::text("All read."));
        let env = Env::new(&server, 128_000, json!({"tuiMode": "regular"}));
        std::fs::write(env.work.join("a.txt"), "alpha\n").unwrap();
        let pi = program_path(&wrapper);
        let tmux = Tmux::start_program(
            &env,
            &pi,
            &[("PI_OFFLINE", "1")],
            &["--tools", "+codemode", "Go."],
            COLS,
            ROWS,
        );
        let screen = tmux.wait(
            &format!("{name}: the answer after the row"),
            Duration::from_secs(20),
            |s| s.contains("All read.") && s.contains("Took "),
        );
        // One more capture once drawing has stopped.
        std::thread::sleep(Duration::from_millis(300));
        let screen = if tmux.screen().contains("All read.") {
            tmux.screen()
        } else {
            screen
        };
        rows.push((name, codemode_row(&screen)));
        tmux.keys(&["C-d"]);
        tmux.wait_exit(Duration::from_secs(15));
    }
    let (_, ours) = &rows[0];
    assert!(
        ours.iter()
            .any(|l| l.contains("✓ read {\"path\":\"a.txt\"}")),
        "{ours:#?}"
    );
    assert!(
        ours.iter()
            .any(|l| l.contains("✗ read {\"path\":\"missing.txt\"}")),
        "{ours:#?}"
    );
    for (name, theirs) in &rows[1..] {
        assert_eq!(ours, theirs, "the codemode row: ours and {name}");
    }
}
