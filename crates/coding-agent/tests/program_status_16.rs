//! OSC 7501 program status, as pi 1.6 reports it: idle at start, working during a run, done
//! after it (with the session name once there is one), error with the failure's first
//! line, blocked while an extension dialog waits, clear on exit. tmux does not answer the
//! support query, so `PI_PROGRAM_STATUS=1` forces reports, and `pipe-pane` records the
//! bytes from before pi starts. Ours and pi 1.6.0 (`PI_TS16`) side by side.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::time::Duration;

use base64::Engine;
use mock_llm::{MockServer, Script};
use serde_json::json;
use support::rpc::Env;
use support::tmux::{self, Tmux};
use support::ts16::{pis, program_path};

const WAIT: Duration = Duration::from_secs(20);

/// The reports in `bytes`, each as `state[ kind][: message]`.
fn reports(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    text.split("\x1b]7501;")
        .skip(1)
        .filter_map(|rest| rest.split("\x1b\\").next())
        .filter(|body| !body.starts_with('?'))
        .map(|body| {
            let mut state = String::new();
            let mut kind = String::new();
            let mut message = String::new();
            for pair in body.split(':') {
                match pair.split_once('=') {
                    Some(("state", v)) => state = v.to_owned(),
                    Some(("kind", v)) => kind = format!(" {v}"),
                    Some(("msg", v)) => {
                        let bytes = base64::engine::general_purpose::STANDARD
                            .decode(v)
                            .unwrap_or_default();
                        message = format!(": {}", String::from_utf8_lossy(&bytes));
                    }
                    Some(("app", v)) => assert_eq!(v, "pi"),
                    _ => {}
                }
            }
            format!("{state}{kind}{message}")
        })
        .collect()
}

fn reports_when(file: &Path, what: &str, check: impl Fn(&[String]) -> bool) -> Vec<String> {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let seen = reports(&std::fs::read(file).unwrap_or_default());
        if check(&seen) {
            return seen;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never saw {what}: {seen:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

const CONFIRM: &str = r#"
export default function (pi) {
  pi.registerCommand("ask", {
    description: "Ask something",
    handler: async (_args, ctx) => {
      const ok = await ctx.ui.confirm("Deploy now?", "It goes live.");
      ctx.ui.notify(ok ? "deployed" : "kept", "info");
    },
  });
}
"#;

fn submit(tmux: &Tmux, name: &str, text: &str) {
    tmux.type_text(text);
    tmux.wait(&format!("{name}: typed {text}"), WAIT, |s| s.contains(text));
    tmux.keys(&["Enter"]);
}

#[test]
fn runs_dialogs_and_exit_are_reported_as_16() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let host = support::ext_host::host_dir();
    let mut all = Vec::new();
    for (name, wrapper) in pis() {
        let env = Env::new(&server, 128_000, json!({"tuiMode": "regular"}));
        let extension = env.dir.path().join("ask.ts");
        std::fs::write(&extension, CONFIRM).unwrap();
        let go = env.dir.path().join("go");
        let pi = program_path(&wrapper);
        // pi starts once the recording runs, so its first report is in it.
        let script = format!(
            "while [ ! -e '{}' ]; do sleep 0.02; done; exec '{pi}' -e '{}'",
            go.display(),
            extension.display()
        );
        let host_dir = host.as_ref().map(|h| h.display().to_string());
        let mut vars = vec![("PI_OFFLINE", "1"), ("PI_PROGRAM_STATUS", "1")];
        if wrapper.is_none()
            && let Some(dir) = host_dir.as_deref()
        {
            vars.push(("PI_EXTENSION_HOST_DIR", dir));
        }
        let tmux = Tmux::start_program(&env, "sh", &vars, &["-c", &script], 100, 30);
        let raw = env.dir.path().join("output.bin");
        tmux.record_output(&raw);
        std::fs::write(&go, "").unwrap();
        tmux.wait(&format!("{name}: started"), WAIT, |s| {
            s.contains("mock-model")
        });
        reports_when(&raw, "idle", |r| r.first().is_some_and(|f| f == "idle"));

        server.push(Script::text("All good."));
        submit(&tmux, name, "hello");
        tmux.wait(&format!("{name}: answered"), WAIT, |s| {
            s.contains("All good.") && !s.contains("Working")
        });
        reports_when(&raw, "done", |r| r.last().is_some_and(|l| l == "done"));

        submit(&tmux, name, "/name demo");
        reports_when(&raw, "the name", |r| {
            r.last().is_some_and(|l| l == "done: demo")
        });

        submit(&tmux, name, "/ask");
        tmux.wait(&format!("{name}: dialog"), WAIT, |s| {
            s.contains("Deploy now?")
        });
        reports_when(&raw, "blocked", |r| {
            r.last().is_some_and(|l| l.starts_with("blocked"))
        });
        tmux.keys(&["Escape"]);
        tmux.wait(&format!("{name}: kept"), WAIT, |s| s.contains("kept"));
        reports_when(&raw, "unblocked", |r| {
            r.last().is_some_and(|l| l == "done: demo")
        });

        server.push(Script::http_error(400));
        submit(&tmux, name, "fail please");
        reports_when(&raw, "error", |r| {
            r.last().is_some_and(|l| l.starts_with("error"))
        });

        tmux.keys(&["C-d"]);
        tmux.wait_exit(WAIT);
        let seen = reports_when(&raw, "clear", |r| r.last().is_some_and(|l| l == "clear"));
        // Errors are worded by each provider client: only their state is compared.
        let seen: Vec<String> = seen
            .into_iter()
            .map(|r| {
                if r.starts_with("error") {
                    "error".to_owned()
                } else {
                    r
                }
            })
            .collect();
        all.push((name, seen));
    }
    if let [(_, ours), (_, theirs)] = &all[..] {
        assert_eq!(ours, theirs, "the reports, in order");
    }
}
