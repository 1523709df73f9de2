//! pi 1.6.0's `registerEntryRenderer` and `registerToolRenderer` in the interactive UI,
//! ours and pi 1.6.0 (`PI_TS16`) side by side in tmux: the `entry-renderer.ts` example's
//! `/status-card` card (collapsed, expanded with Ctrl+O, and again on resume), and a
//! resolver that redraws the built-in `read` call through `next()` and an unregistered
//! tool name. The transcript must read the same (colors aside: the color modes differ).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::time::Duration;

use mock_llm::{MockServer, Script};
use serde_json::json;
use support::rpc::Env;
use support::tmux::{self, Tmux};
use support::ts16::{pis, program_path};

const COLS: u16 = 90;
const ROWS: u16 = 50;
const WAIT: Duration = Duration::from_secs(30);

/// Redraws `read` calls (pi's own result stays) and an unregistered tool's calls.
const RESOLVER: &str = r#"import { Text } from "@earendil-works/pi-tui";

export default function (pi: any) {
	pi.registerToolRenderer((toolName: string, next: () => any) => {
		if (toolName === "read") {
			const base = next();
			return {
				...base,
				renderCall: (args: any, theme: any) =>
					new Text(`${theme.fg("toolTitle", theme.bold("READ"))} ${theme.fg("accent", args.path)} ${base ? "(over pi's)" : ""}`, 0, 0),
			};
		}
		if (toolName.startsWith("remote__")) {
			return next() ?? { renderCall: (args: any, theme: any) => new Text(theme.fg("warning", `remote ${toolName.slice(8)}: ${args.q}`), 0, 0) };
		}
		return next();
	});
}
"#;

fn entry_example() -> String {
    let ts16 = support::ts16::ts16().expect("PI_TS16");
    let dir = ts16.parent().unwrap().parent().unwrap();
    dir.join("pi-coding-agent/examples/extensions/entry-renderer.ts")
        .display()
        .to_string()
}

/// The transcript: from the redrawn `read` call (pi 1.6.0 may show its tmux warning
/// above) to the last non-blank row above the editor, without colors (the color modes
/// differ), right-trimmed, dates masked.
fn transcript(screen: &str) -> Vec<String> {
    let rows: Vec<String> = screen
        .lines()
        .map(|r| strip(r).trim_end().to_owned())
        .collect();
    let start = rows
        .iter()
        .position(|r| r.contains("READ"))
        .unwrap_or_else(|| panic!("no read call:\n{screen}"));
    let end = rows[start..]
        .iter()
        .position(|r| r.starts_with('─'))
        .map_or(rows.len(), |i| start + i);
    let end = rows[..end]
        .iter()
        .rposition(|r| !r.trim().is_empty())
        .map_or(end, |i| i + 1);
    let digits = regex::Regex::new(r"[0-9]{1,4}[/.:-][0-9]{1,2}[/.:-][0-9]{1,4}").unwrap();
    rows[start..end]
        .iter()
        .map(|r| digits.replace_all(r, "<d>").into_owned())
        .collect()
}

fn strip(row: &str) -> String {
    regex::Regex::new("\x1b\\[[0-9;:]*m")
        .unwrap()
        .replace_all(row, "")
        .into_owned()
}

/// Waits until the plain screen holds `needle` and drawing has stopped; the colored screen.
fn settled(tmux: &Tmux, what: &str, needle: &str) -> String {
    tmux.wait(what, WAIT, |s| s.contains(needle));
    let mut last = tmux.colored_screen();
    for _ in 0..20 {
        std::thread::sleep(Duration::from_millis(250));
        let now = tmux.colored_screen();
        if now == last {
            break;
        }
        last = now;
    }
    last
}

struct Screens {
    collapsed: Vec<String>,
    expanded: Vec<String>,
    resumed: Vec<String>,
}

fn run(server: &MockServer, name: &str, wrapper: &Option<std::path::PathBuf>) -> Screens {
    server.push(Script::tool_call("read", json!({"path": "a.txt"})));
    server.push(Script::tool_call("remote__lookup", json!({"q": "weather"})));
    server.push(Script::text("Done."));
    let env = Env::new(server, 128_000, json!({"tuiMode": "regular"}));
    std::fs::write(env.work.join("a.txt"), "alpha\nbeta\n").unwrap();
    let resolver = env.work.join("resolver.ts");
    std::fs::write(&resolver, RESOLVER).unwrap();
    let pi = program_path(wrapper);
    let host = support::ext_host::host_dir()
        .map(|h| h.display().to_string())
        .unwrap_or_default();
    let vars = [
        ("PI_OFFLINE", "1"),
        ("PI_EXTENSION_HOST_DIR", host.as_str()),
        ("TZ", "UTC"),
    ];
    let example = entry_example();
    let resolver = resolver.display().to_string();
    let args = ["-e", example.as_str(), "-e", resolver.as_str()];
    let mut first = args.to_vec();
    first.push("Go.");
    let tmux = Tmux::start_program(&env, &pi, &vars, &first, COLS, ROWS);
    tmux.wait(&format!("{name}: the answer"), WAIT, |s| {
        s.contains("Done.")
    });
    tmux.type_text("/status-card hello");
    tmux.keys(&["Enter"]);
    let collapsed = transcript(&settled(
        &tmux,
        &format!("{name}: the card"),
        "[status] hello",
    ));
    tmux.keys(&["C-o"]);
    std::thread::sleep(Duration::from_millis(300));
    let expanded = transcript(&settled(
        &tmux,
        &format!("{name}: expanded"),
        "[status] hello",
    ));
    tmux.keys(&["C-d"]);
    tmux.wait_exit(WAIT);
    let mut again = args.to_vec();
    again.push("-c");
    let tmux = Tmux::start_program(&env, &pi, &vars, &again, COLS, ROWS);
    let resumed = transcript(&settled(
        &tmux,
        &format!("{name}: resumed"),
        "[status] hello",
    ));
    tmux.keys(&["C-d"]);
    tmux.wait_exit(WAIT);
    Screens {
        collapsed,
        expanded,
        resumed,
    }
}

#[test]
fn entry_and_tool_renderers_draw_as_16() {
    if !tmux::available() || support::ts16::ts16().is_none() {
        eprintln!("tmux or PI_TS16 missing: skipped");
        return;
    }
    assert!(Path::new(&entry_example()).exists());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let mut all = Vec::new();
    for (name, wrapper) in pis() {
        all.push((name, run(&server, name, &wrapper)));
    }
    let (_, ours) = &all[0];
    let text = ours.collapsed.join("\n");
    assert!(text.contains("READ a.txt (over pi's)"), "{text}");
    assert!(text.contains("remote lookup: weather"), "{text}");
    assert!(text.contains("[status] hello"), "{text}");
    for (name, theirs) in &all[1..] {
        for (what, a, b) in [
            ("collapsed", &ours.collapsed, &theirs.collapsed),
            ("expanded", &ours.expanded, &theirs.expanded),
            ("resumed", &ours.resumed, &theirs.resumed),
        ] {
            assert_eq!(
                a,
                b,
                "{what}: ours and {name}\nours:\n{}\n{name}:\n{}",
                a.join("\n"),
                b.join("\n")
            );
        }
    }
}
