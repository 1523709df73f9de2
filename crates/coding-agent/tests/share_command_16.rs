//! `/share`: the session as a secret GitHub gist made with `gh` (a stand-in script on
//! PATH here), its viewer link from `PI_SHARE_VIEWER_URL`; `gh` not logged in; Esc on the
//! loader. Ours and pi 1.6.0 (`PI_TS16`) side by side in tmux. The Radius way runs for
//! ours alone: pi 1.6.0 always posts to radius.pi.dev, ours honours `PI_RADIUS_GATEWAY`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use mock_llm::{MockServer, Script};
use serde_json::{Value, json};
use support::http_standin::Standin;
use support::rpc::Env;
use support::tmux::{self, Tmux};
use support::ts16::{pis, program_path};

const WAIT: Duration = Duration::from_secs(20);
/// The terminal's width.
const COLS: u16 = 110;
const GIST: &str = "https://gist.github.com/fakeuser/abc123def456";

const FAKE_GH: &str = r#"#!/bin/sh
echo "$@" >> "$FAKE_GH_DIR/calls"
case "$1 $2" in
  "auth status")
    [ -e "$FAKE_GH_DIR/auth_fail" ] && { echo "not logged in" >&2; exit 1; }
    exit 0;;
  "gist create")
    for a; do last="$a"; done
    cp "$last" "$FAKE_GH_DIR/shared.html"
    [ -e "$FAKE_GH_DIR/hang" ] && exec sleep 30
    echo "https://gist.github.com/fakeuser/abc123def456"
    exit 0;;
esac
exit 2
"#;

fn command(tmux: &Tmux, name: &str, text: &str) {
    tmux.type_text(text);
    tmux.wait(&format!("{name}: {text} typed"), WAIT, |s| s.contains(text));
    tmux.keys(&["Enter"]);
}

/// A `gh` stand-in in `dir/bin`; returns the PATH to run pi with.
fn fake_gh(dir: &Path) -> String {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let gh = bin.join("gh");
    std::fs::write(&gh, FAKE_GH).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// The rows from the border above `first` to the next full-width border, trimmed, with
/// the spinner frame replaced by `*`; `None` while they are not drawn whole.
fn block(screen: &str, first: &str) -> Option<Vec<String>> {
    let rows: Vec<String> = screen.lines().map(|r| r.trim_end().to_owned()).collect();
    let at = rows.iter().position(|r| r.contains(first))?;
    let start = rows[..at].iter().rposition(|r| r.starts_with('─'))?;
    let hint = at + rows[at..].iter().position(|r| r.contains("cancel"))?;
    let end = hint + rows[hint..].iter().position(|r| r.starts_with('─'))?;
    // A frame caught half drawn has a shorter border.
    let whole = |r: &String| r.chars().count() == usize::from(COLS);
    if !whole(&rows[start]) || !whole(&rows[end]) {
        return None;
    }
    Some(
        rows[start..=end]
            .iter()
            .map(|r| {
                r.chars()
                    .map(|c| {
                        if ('\u{2800}'..='\u{28ff}').contains(&c) {
                            '*'
                        } else {
                            c
                        }
                    })
                    .collect()
            })
            .collect(),
    )
}

/// Waits until `done` holds (at most [`WAIT`]); panics with `what` otherwise.
fn wait_until(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + WAIT;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn share_as_gist_as_16() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let mut seen = Vec::new();
    for (name, wrapper) in pis() {
        server.push(Script::text("An answer to share."));
        let env = Env::new(&server, 128_000, json!({"tuiMode": "regular"}));
        let gh_dir = env.dir.path().join("gh");
        std::fs::create_dir_all(&gh_dir).unwrap();
        let path = fake_gh(env.dir.path());
        let gh = gh_dir.display().to_string();
        let tmux = Tmux::start_program(
            &env,
            &program_path(&wrapper),
            &[
                ("PI_OFFLINE", "1"),
                ("PATH", &path),
                ("FAKE_GH_DIR", &gh),
                ("PI_SHARE_VIEWER_URL", "https://viewer.example/s/"),
                ("RADIUS_API_KEY", ""),
            ],
            &["A question to share."],
            COLS,
            40,
        );
        tmux.wait(&format!("{name}: answered"), WAIT, |s| {
            s.contains("An answer to share.") && !s.contains("Working")
        });

        // gh is not logged in.
        std::fs::write(gh_dir.join("auth_fail"), "").unwrap();
        command(&tmux, name, "/share");
        tmux.wait(&format!("{name}: not logged in"), WAIT, |s| {
            s.contains("GitHub CLI is not logged in. Run 'gh auth login' first.")
        });
        std::fs::remove_file(gh_dir.join("auth_fail")).unwrap();

        // The gist is made; the viewer's link and the gist's are shown.
        command(&tmux, name, "/share");
        let shown = tmux.wait(&format!("{name}: shared"), WAIT, |s| {
            s.contains(&format!("Gist: {GIST}")) && s.contains("Share URL:")
        });
        let status: Vec<String> = shown
            .lines()
            .filter(|l| l.contains("Share URL:") || l.contains("Gist:"))
            .map(|l| l.trim_end().to_owned())
            .collect();
        assert_eq!(
            status,
            [
                " Share URL: https://viewer.example/s/#abc123def456",
                &format!(" Gist: {GIST}"),
            ],
            "{name}"
        );
        let calls = std::fs::read_to_string(gh_dir.join("calls")).unwrap();
        let calls: Vec<&str> = calls.lines().collect();
        assert_eq!(calls.len(), 3, "{name}: {calls:?}");
        let file = calls[2]
            .strip_prefix("gist create --public=false ")
            .unwrap_or_else(|| panic!("{name}: {calls:?}"));
        assert!(
            file.ends_with("/session.html")
                && Path::new(file)
                    .parent()
                    .and_then(|d| d.file_name())
                    .is_some_and(|d| d.to_string_lossy().starts_with("pi-share-")),
            "{name}: {file}"
        );
        let html = std::fs::read_to_string(gh_dir.join("shared.html")).unwrap();
        assert!(
            html.trim_start()
                .to_lowercase()
                .starts_with("<!doctype html"),
            "{name}: the HTML export was given to gh"
        );
        // The temporary folder goes once the gist is made.
        wait_until(&format!("{name}: the temporary folder removed"), || {
            !Path::new(file).exists()
        });

        // Esc while gh works: the share is cancelled.
        std::fs::write(gh_dir.join("hang"), "").unwrap();
        command(&tmux, name, "/share");
        let loader = tmux.wait(&format!("{name}: creating the gist"), WAIT, |s| {
            block(s, "Creating gist...").is_some()
        });
        let loader = block(&loader, "Creating gist...").unwrap();
        tmux.keys(&["Escape"]);
        tmux.wait(&format!("{name}: cancelled"), WAIT, |s| {
            s.contains("Share cancelled") && !s.contains("Creating gist...")
        });
        let calls = std::fs::read_to_string(gh_dir.join("calls")).unwrap();
        let calls: Vec<String> = calls
            .lines()
            .map(|l| l.split(" /").next().unwrap_or(l).to_owned())
            .collect();
        seen.push((calls, loader));
    }
    if let [ours, theirs] = &seen[..] {
        assert_eq!(ours, theirs, "gh's calls and the loader");
    }
}

/// Ours alone: with a Radius key the session goes to the gateway as an artifact.
#[test]
fn share_to_radius_standin() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    server.push(Script::text("An answer to share."));
    let standin = Standin::start(vec![(
        200,
        r#"{"artifact":{"canonical_url":"https://radius.example/a/1"}}"#.into(),
    )]);
    let env = Env::new(&server, 128_000, json!({"tuiMode": "regular"}));
    let tmux = Tmux::start_with(
        &env,
        &[
            ("PI_OFFLINE", "1"),
            ("RADIUS_API_KEY", "rk-secret-1"),
            ("PI_RADIUS_GATEWAY", &standin.url()),
        ],
        &["A question to share."],
        110,
        40,
    );
    tmux.wait("answered", WAIT, |s| {
        s.contains("An answer to share.") && !s.contains("Working")
    });
    command(&tmux, "ours", "/share");
    tmux.wait("shared", WAIT, |s| {
        s.contains("Share URL: https://radius.example/a/1")
    });
    let requests = standin.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.method, "POST");
    assert_eq!(
        request.target,
        "/v1/artifacts?visibility=organization&title=Pi+session"
    );
    assert_eq!(request.headers["authorization"], "Bearer rk-secret-1");
    assert_eq!(request.headers["content-type"], "application/x-ndjson");
    let lines: Vec<Value> = String::from_utf8(request.body.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["type"], "session");
    let last = lines.last().unwrap();
    let keys: Vec<&String> = last.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["type", "customType", "id", "parentId", "timestamp", "data"]
    );
    assert_eq!(last["customType"], "pi.share");
    assert_eq!(last["parentId"], lines[lines.len() - 2]["id"]);
    assert!(
        last["data"]["systemPrompt"]
            .as_str()
            .is_some_and(|p| !p.is_empty())
    );
    assert!(last["data"]["tools"].as_array().is_some_and(|t| {
        t.iter().any(|t| {
            t["name"] == "read" && t["parameters"].is_object() && t["description"].is_string()
        })
    }));

    // A refusal is shown with the gateway's error.
    standin.set_replies(vec![(400, r#"{"error":"quota exceeded"}"#.into())]);
    command(&tmux, "ours", "/share");
    tmux.wait("refused", WAIT, |s| {
        s.contains("Failed to upload Radius artifact: quota exceeded")
    });
}

/// `sessionShareDestination: "radius"` without a Radius credential: pi 1.6's error, and no
/// gist.
#[test]
fn share_to_radius_without_login_as_16() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    for (name, wrapper) in pis() {
        server.push(Script::text("An answer to share."));
        let env = Env::new(
            &server,
            128_000,
            json!({"tuiMode": "regular", "sessionShareDestination": "radius"}),
        );
        let gh_dir = env.dir.path().join("gh");
        std::fs::create_dir_all(&gh_dir).unwrap();
        let path = fake_gh(env.dir.path());
        let gh = gh_dir.display().to_string();
        let tmux = Tmux::start_program(
            &env,
            &program_path(&wrapper),
            &[
                ("PI_OFFLINE", "1"),
                ("PATH", &path),
                ("FAKE_GH_DIR", &gh),
                ("RADIUS_API_KEY", ""),
            ],
            &["A question to share."],
            COLS,
            40,
        );
        tmux.wait(&format!("{name}: answered"), WAIT, |s| {
            s.contains("An answer to share.") && !s.contains("Working")
        });
        command(&tmux, name, "/share");
        tmux.wait(&format!("{name}: not configured"), WAIT, |s| {
            s.contains("Radius authentication is not configured. Run '/login radius' first.")
        });
        assert!(!gh_dir.join("calls").exists(), "{name}: gh was not run");
    }
}
