//! Programs that read pi's session files, run on ours and on pi 1.6.0's (issue 36): the
//! same scripted session (a bash call, an answer, token usage) recorded by each pi, then
//! `@ccusage/pi session --json` and `@psg2/pi-transcript` (pinned, installed by
//! `scripts/install-session-readers.sh`) must print the same for both. Without `PI_TS16`
//! only ours runs, against what the readers must find in it. Skipped when the readers are
//! not installed, unless `PI_TEST_REQUIRE_SESSION_READERS=1`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::Env;
use support::ts16::{ours, run, ts16, ts16_pi};

fn readers_dir() -> Option<PathBuf> {
    let dir = support::target_dir().join("session-readers/node_modules/.bin");
    if dir.join("ccusage-pi").is_file() && dir.join("pi-transcript").is_file() {
        return Some(dir);
    }
    assert!(
        std::env::var("PI_TEST_REQUIRE_SESSION_READERS").as_deref() != Ok("1"),
        "the session readers are not installed (scripts/install-session-readers.sh)"
    );
    eprintln!(
        "skipped: the session readers are not installed (scripts/install-session-readers.sh)"
    );
    None
}

/// Records the scripted session with `program` in a fresh agent dir; the env and its file.
async fn record(program: Command) -> (Env, PathBuf, MockServer) {
    let server = MockServer::start().await.unwrap();
    server.push_all([
        Script::tool_call("bash", json!({"command": "echo from the tool"})).with_usage(1200, 40),
        Script::text("The tool said hello.").with_usage(1300, 25),
    ]);
    let env = Env::new(&server, 128_000, json!({}));
    let output = run(&env, program, &["-p", "say hello through bash"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let files = env.session_files();
    assert_eq!(files.len(), 1, "{files:?}");
    let file = files[0].clone();
    (env, file, server)
}

/// `ccusage-pi session --json` over the agent dir's sessions.
fn ccusage(bin: &Path, env: &Env) -> Value {
    let output = Command::new(bin.join("ccusage-pi"))
        .args(["session", "--json", "--piPath"])
        .arg(env.agent.join("sessions"))
        .env("HOME", env.dir.path())
        .env("TZ", "UTC")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// `pi-transcript FILE -o DIR --no-open`: the HTML it wrote.
fn transcript(bin: &Path, env: &Env, file: &Path) -> String {
    let out = env.dir.path().join("transcript");
    let output = Command::new(bin.join("pi-transcript"))
        .arg(file)
        .arg("-o")
        .arg(&out)
        .arg("--no-open")
        .env("HOME", env.dir.path())
        .env("TZ", "UTC")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut pages = Vec::new();
    let mut folders = vec![out.clone()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().filter_map(Result::ok) {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|x| x == "html") {
                pages.push(path);
            }
        }
    }
    pages.sort();
    pages
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

/// What differs by construction between two recordings: the scratch folder, the session
/// id, times and dates.
fn normalize_text(text: &str, env: &Env, file: &Path) -> String {
    let id = file
        .file_stem()
        .and_then(|s| s.to_str())
        .and_then(|s| s.rsplit('_').next())
        .unwrap_or_default()
        .to_owned();
    let root = env.dir.path().display().to_string();
    // Also in the session folder's name: `--tmp-.tmpXXXX-work--`.
    let encoded = root.trim_start_matches('/').replace('/', "-");
    let base = env
        .dir
        .path()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut text = text
        .replace(&root, "<ROOT>")
        .replace(&encoded, "<ROOT>")
        .replace(&base, "<ROOT>");
    if !id.is_empty() {
        text = text.replace(&id, "<ID>");
    }
    let patterns = [
        (
            r"\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}(?:[.-]\d+)?Z?",
            "<ISO>",
        ),
        (r"\b\d{4}-\d{2}-\d{2}\b", "<DATE>"),
        (r"\b\d{1,2}:\d{2}(?::\d{2})?\s?(?:AM|PM)?", "<TIME>"),
        (r"\b1[78]\d{11}\b", "<MS>"),
    ];
    for (pattern, with) in patterns {
        text = regex::Regex::new(pattern)
            .unwrap()
            .replace_all(&text, with)
            .into_owned();
    }
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ccusage_and_pi_transcript_read_our_sessions_as_pi_16s() {
    let Some(bin) = readers_dir() else {
        return;
    };
    let (env, file, _server) = record(ours()).await;
    let usage = ccusage(&bin, &env);
    let sessions = usage["sessions"].as_array().expect("a sessions list");
    assert_eq!(sessions.len(), 1, "{usage:#}");
    assert_eq!(sessions[0]["inputTokens"], 2500, "{usage:#}");
    assert_eq!(sessions[0]["outputTokens"], 65, "{usage:#}");
    let html = transcript(&bin, &env, &file);
    for shown in [
        "say hello through bash",
        "echo from the tool",
        "The tool said hello.",
    ] {
        assert!(
            html.contains(shown),
            "{shown:?} is missing from the transcript"
        );
    }
    let Some(wrapper) = ts16() else {
        return;
    };
    let (theirs_env, theirs_file, _theirs_server) = record(ts16_pi(&wrapper)).await;
    let ours_usage = normalize_text(&usage.to_string(), &env, &file);
    let theirs_usage = normalize_text(
        &ccusage(&bin, &theirs_env).to_string(),
        &theirs_env,
        &theirs_file,
    );
    assert_eq!(ours_usage, theirs_usage);
    let ours_html = normalize_text(&html, &env, &file);
    let theirs_html = normalize_text(
        &transcript(&bin, &theirs_env, &theirs_file),
        &theirs_env,
        &theirs_file,
    );
    let ours_lines: Vec<&str> = ours_html.lines().collect();
    let theirs_lines: Vec<&str> = theirs_html.lines().collect();
    for (i, (a, b)) in ours_lines.iter().zip(&theirs_lines).enumerate() {
        assert_eq!(a, b, "transcript line {i} differs");
    }
    assert_eq!(ours_lines.len(), theirs_lines.len());
}
