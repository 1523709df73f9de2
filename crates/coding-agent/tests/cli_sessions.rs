//! The real `pi` binary with tools and sessions, against mock-llm, as a user runs it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use mock_llm::{Item, MockServer, Script};
use serde_json::{Value, json};

struct Env {
    _root: tempfile::TempDir,
    agent: PathBuf,
    work: PathBuf,
}

fn env(server: &MockServer) -> Env {
    let root = tempfile::tempdir().unwrap();
    let agent = root.path().join("agent");
    let work = root.path().join("work");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    let models = json!({"providers": {"mock": {"baseUrl": server.openai_base_url(), "api": "openai-completions",
        "apiKey": "mock-key", "models": [{"id": "mock-model", "name": "Mock Model", "contextWindow": 128000, "maxTokens": 16384}]}}});
    std::fs::write(agent.join("models.json"), models.to_string()).unwrap();
    std::fs::write(
        agent.join("settings.json"),
        r#"{"defaultProvider":"mock","defaultModel":"mock-model"}"#,
    )
    .unwrap();
    std::fs::write(
        work.join("hello.txt"),
        "Hello from the anchor test file!\nSecond line.\n",
    )
    .unwrap();
    Env {
        _root: root,
        agent,
        work,
    }
}

fn pi(env: &Env, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pi"))
        .args(args)
        .current_dir(&env.work)
        .env("PI_CODING_AGENT_DIR", &env.agent)
        .env("HOME", env.agent.parent().unwrap_or(Path::new("/")))
        .env_remove("PI_CODING_AGENT_SESSION_DIR")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("pi runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn session_files(env: &Env) -> Vec<PathBuf> {
    let mut files = Vec::new();
    if let Ok(dirs) = std::fs::read_dir(env.agent.join("sessions")) {
        for dir in dirs.flatten() {
            for f in std::fs::read_dir(dir.path()).unwrap().flatten() {
                files.push(f.path());
            }
        }
    }
    files
}

fn shape(kinds: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for k in kinds {
        if k == "message_update" && out.last().is_some_and(|l| l == "message_update") {
            continue;
        }
        out.push(k);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_then_answer_writes_a_session_like_the_reference() {
    let server = MockServer::start().await.unwrap();
    let env = env(&server);
    let out = pi(&env, &["-p", "read hello.txt"]);
    assert_eq!(
        text(&out.stdout),
        "done: Hello from the ancho\n",
        "{}",
        text(&out.stderr)
    );
    let files = session_files(&env);
    assert_eq!(files.len(), 1);
    let lines: Vec<Value> = std::fs::read_to_string(&files[0])
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "session",
            "model_change",
            "thinking_level_change",
            "message",
            "message",
            "message",
            "message",
            "message"
        ]
    );
    // The system message pi 1.5.2 writes before the first prompt, in its key order.
    let system = &lines[3]["message"];
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        keys(system),
        ["role", "content", "sections", "timestamp", "toolsAdded"]
    );
    assert_eq!(lines[4]["parentId"], lines[3]["id"]);
    // The other entries have the shapes of 0.73.1's file.
    let reference: Vec<Value> = include_str!("../../ai/tests/fixtures/pi-ts-session.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let without_system: Vec<&Value> = lines
        .iter()
        .filter(|l| l["message"]["role"] != "system")
        .collect();
    for (ours, theirs) in without_system.iter().zip(&reference) {
        assert_eq!(keys(ours), keys(theirs), "entry shape");
    }
    let result = &lines[6]["message"];
    assert_eq!(
        result["content"][0]["text"],
        "Hello from the anchor test file!\nSecond line.\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_mode_has_the_reference_event_order_and_fields() {
    let server = MockServer::start().await.unwrap();
    let env = env(&server);
    let out = pi(&env, &["--mode", "json", "read hello.txt"]);
    assert!(out.status.success());
    let ours: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // pi 1.5.2's trace, its persisted system message included.
    let theirs: Vec<Value> = include_str!("fixtures/pi-1.5-json-mode.jsonl")
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .collect();
    let kinds = |v: &[Value]| {
        shape(
            v.iter()
                .map(|e| e["type"].as_str().unwrap().to_owned())
                .collect(),
        )
    };
    assert_eq!(kinds(&ours), kinds(&theirs));
    // Same field names per event type.
    for event in &ours {
        let kind = event["type"].as_str().unwrap();
        let reference = theirs.iter().find(|t| t["type"] == kind).unwrap();
        let keys = |v: &Value| {
            let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
            k.sort();
            k
        };
        assert_eq!(keys(event), keys(reference), "{kind}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_and_session_flags_resume_with_the_whole_history() {
    let server = MockServer::start().await.unwrap();
    let env = env(&server);
    assert!(pi(&env, &["-p", "read hello.txt"]).status.success());
    let out = pi(&env, &["-c", "-p", "and now?"]);
    assert_eq!(text(&out.stdout), "ok: and now?\n");
    let requests = server.requests();
    // system + user + assistant(tool call) + tool result + assistant + new user
    assert_eq!(
        requests.last().unwrap().body["messages"]
            .as_array()
            .unwrap()
            .len(),
        6
    );
    let file = session_files(&env).pop().unwrap();
    let out = pi(&env, &["--session", file.to_str().unwrap(), "-p", "third"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        server.requests().last().unwrap().body["messages"]
            .as_array()
            .unwrap()
            .len(),
        8
    );
    // By id prefix.
    let id = file
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .split('_')
        .nth(1)
        .unwrap()[..8]
        .to_owned();
    let out = pi(&env, &["--session", &id, "-p", "fourth"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        server.requests().last().unwrap().body["messages"]
            .as_array()
            .unwrap()
            .len(),
        10
    );
    assert_eq!(session_files(&env).len(), 1, "all runs used the same file");
    // A fork copies the history into a new file.
    let out = pi(&env, &["--fork", file.to_str().unwrap(), "-p", "forked"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(session_files(&env).len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_session_writes_nothing() {
    let server = MockServer::start().await.unwrap();
    let env = env(&server);
    let out = pi(&env, &["--no-session", "-p", "hi"]);
    assert_eq!(text(&out.stdout), "ok: hi\n");
    assert!(session_files(&env).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edit_changes_exactly_the_requested_bytes() {
    let server = MockServer::start().await.unwrap();
    let env = env(&server);
    std::fs::write(
        env.work.join("code.txt"),
        "fn main() {\r\n    println!(\u{201c}hi\u{201d});\r\n}\r\n",
    )
    .unwrap();
    server.push(Script::new(vec![Item::tool_call(
        "edit",
        json!({"path": "code.txt", "edits": [{"oldText": "println!(\"hi\");", "newText": "println!(\"bye\");"}]}),
    )]));
    server.push(Script::text("edited"));
    let out = pi(&env, &["-p", "change it"]);
    assert_eq!(text(&out.stdout), "edited\n", "{}", text(&out.stderr));
    // The smart-quoted line was matched tolerantly; CRLF and the other lines are untouched.
    assert_eq!(
        std::fs::read_to_string(env.work.join("code.txt")).unwrap(),
        "fn main() {\r\n    println!(\"bye\");\r\n}\r\n"
    );
    let tool_result = &server.requests()[1].body["messages"][3];
    assert_eq!(tool_result["role"], "tool");
    assert!(
        tool_result["content"]
            .as_str()
            .unwrap()
            .starts_with("Successfully replaced 1 block")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_output_streams_as_updates() {
    let server = MockServer::start().await.unwrap();
    let env = env(&server);
    server.push(Script::new(vec![Item::tool_call(
        "bash",
        json!({"command": "printf 'a\\n'; sleep 0.4; printf 'b\\n'"}),
    )]));
    server.push(Script::text("ran"));
    let out = pi(&env, &["--mode", "json", "run it"]);
    let events: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let updates: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_execution_update")
        .collect();
    assert!(
        updates
            .iter()
            .any(|u| u["partialResult"]["content"][0]["text"] == "a\n"),
        "{updates:?}"
    );
    let end = events
        .iter()
        .find(|e| e["type"] == "tool_execution_end")
        .unwrap();
    assert_eq!(end["result"]["content"][0]["text"], "a\nb\n");
    assert_eq!(end["isError"], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gives_clear_errors() {
    let server = MockServer::start().await.unwrap();
    let env = env(&server);
    // A missing file is an error result the model sees; the run goes on.
    server.push(Script::new(vec![Item::tool_call(
        "read",
        json!({"path": "nope.txt"}),
    )]));
    server.push(Script::text("it is missing"));
    let out = pi(&env, &["-p", "read nope"]);
    assert_eq!(text(&out.stdout), "it is missing\n");
    let result = &server.requests()[1].body["messages"][3]["content"];
    assert!(result.as_str().unwrap().contains("ENOENT"), "{result}");
    // Unknown model and missing key: exit 1 with one clear line.
    let out = pi(&env, &["--model", "nope/none", "-p", "x"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("Model not found: nope/none"));
    let out = pi(&env, &["--model", "anthropic/claude-haiku-4-5", "-p", "x"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("No API key found"),
        "{}",
        text(&out.stderr)
    );
    // Unreachable provider.
    let models = json!({"providers": {"mock": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions",
        "apiKey": "k", "models": [{"id": "mock-model"}]}}});
    std::fs::write(env.agent.join("models.json"), models.to_string()).unwrap();
    std::fs::write(
        env.agent.join("settings.json"),
        r#"{"defaultProvider":"mock","defaultModel":"mock-model","retry":{"baseDelayMs":10}}"#,
    )
    .unwrap();
    let out = pi(&env, &["--no-session", "-p", "x"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr).trim(),
        "Connection error.: connect ECONNREFUSED 127.0.0.1:9"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_session_line_is_reported_and_kept() {
    let server = MockServer::start().await.unwrap();
    let env = env(&server);
    let mut reference = include_str!("../../ai/tests/fixtures/pi-ts-session.jsonl")
        .replace("<ROOT>/work", env.work.to_str().unwrap());
    reference.push_str("{broken line\n");
    let file = env.work.join("old.jsonl");
    std::fs::write(&file, &reference).unwrap();
    let out = pi(
        &env,
        &["--session", file.to_str().unwrap(), "-p", "continue"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("not a JSON object"),
        "{}",
        text(&out.stderr)
    );
    // The reference conversation reached the model.
    assert_eq!(
        server.requests()[0].body["messages"]
            .as_array()
            .unwrap()
            .len(),
        6
    );
    let after = std::fs::read_to_string(&file).unwrap();
    assert!(after.starts_with(&reference), "nothing lost or rewritten");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_arguments_are_inlined_and_images_attached() {
    let server = MockServer::start().await.unwrap();
    let env = env(&server);
    std::fs::write(env.work.join("notes.md"), "remember this").unwrap();
    // A real PNG: an image that cannot be decoded is left out with a note (pi 1.6).
    let mut png = std::io::Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(image::RgbImage::new(2, 2))
        .write_to(&mut png, image::ImageFormat::Png)
        .unwrap();
    std::fs::write(env.work.join("pic.png"), png.into_inner()).unwrap();
    let models = json!({"providers": {"mock": {"baseUrl": server.openai_base_url(), "api": "openai-completions",
        "apiKey": "mock-key", "models": [{"id": "mock-model", "input": ["text", "image"]}]}}});
    std::fs::write(env.agent.join("models.json"), models.to_string()).unwrap();
    let out = pi(&env, &["-p", "@notes.md", "@pic.png", "what is this?"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let content = &server.requests()[0].body["messages"][1]["content"];
    let first = content[0]["text"].as_str().unwrap();
    assert!(
        first.contains("<file name=\"") && first.contains("notes.md\">\nremember this\n</file>\n"),
        "{first}"
    );
    assert!(first.ends_with("what is this?"), "{first}");
    assert!(
        content[1]["image_url"]["url"]
            .as_str()
            .unwrap()
            .starts_with("data:image/png;base64,")
    );
    let missing = pi(&env, &["-p", "@nope.txt", "x"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(text(&missing.stderr).contains("File not found"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_aborts_a_running_bash_command_and_leaves_no_process() {
    let server = MockServer::start().await.unwrap();
    let env = env(&server);
    server.push(Script::new(vec![Item::tool_call(
        "bash",
        json!({"command": "echo $$ > shell.pid; sleep 300"}),
    )]));
    let mut child = Command::new(env!("CARGO_BIN_EXE_pi"))
        .args(["-p", "run forever"])
        .current_dir(&env.work)
        .env("PI_CODING_AGENT_DIR", &env.agent)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid_file = env.work.join("shell.pid");
    for _ in 0..200 {
        if std::fs::read_to_string(&pid_file).is_ok_and(|s| !s.trim().is_empty()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    let shell: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let pi_pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pi_pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let status = tokio::task::spawn_blocking(move || child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(143));
    // The shell ran in its own process group, led by itself: nothing of it may survive.
    assert!(
        !pi_coding_agent::tools::bash_process::group_alive(nix::unistd::Pid::from_raw(shell)),
        "process group {shell} survived"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_json_is_created_private_and_bash_times_out_by_settings() {
    use std::os::unix::fs::PermissionsExt;
    let server = MockServer::start().await.unwrap();
    let env = env(&server);
    std::fs::write(
        env.agent.join("settings.json"),
        r#"{"defaultProvider":"mock","defaultModel":"mock-model","bash":{"timeoutSeconds":1}}"#,
    )
    .unwrap();
    server.push(Script::new(vec![Item::tool_call(
        "bash",
        json!({"command": "sleep 30"}),
    )]));
    server.push(Script::text("gave up"));
    let started = std::time::Instant::now();
    let out = pi(&env, &["-p", "wait"]);
    assert_eq!(text(&out.stdout), "gave up\n", "{}", text(&out.stderr));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(25),
        "the default timeout stopped the command"
    );
    let result = server.requests()[1].body["messages"][3]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(result.contains("timed out after 1 seconds"), "{result}");
    let auth = env.agent.join("auth.json");
    assert_eq!(std::fs::read_to_string(&auth).unwrap(), "{}");
    assert_eq!(
        std::fs::metadata(&auth).unwrap().permissions().mode() & 0o777,
        0o600
    );
}

fn fast_retry_settings(env: &Env) {
    std::fs::write(
        env.agent.join("settings.json"),
        r#"{"defaultProvider":"mock","defaultModel":"mock-model","retry":{"baseDelayMs":10}}"#,
    )
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_provider_retries_like_the_reference_trace() {
    let server = MockServer::start().await.unwrap();
    let env = env(&server);
    fast_retry_settings(&env);
    let models = json!({"providers": {"mock": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions",
        "apiKey": "k", "models": [{"id": "mock-model"}]}}});
    std::fs::write(env.agent.join("models.json"), models.to_string()).unwrap();
    let out = pi(&env, &["--mode", "json", "read hello.txt"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "JSON mode exits 0 even when the run failed"
    );
    let ours: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // pi 1.5.2's trace, its persisted system message included.
    let theirs: Vec<Value> = include_str!("fixtures/pi-1.5-json-mode-connection-error.jsonl")
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .collect();
    let kinds = |v: &[Value]| {
        v.iter()
            .map(|e| match e["willRetry"].as_bool() {
                Some(retry) => format!("{}(willRetry {retry})", e["type"].as_str().unwrap()),
                None => e["type"].as_str().unwrap().to_owned(),
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(kinds(&ours), kinds(&theirs));
    let starts: Vec<(u64, u64)> = ours
        .iter()
        .filter(|e| e["type"] == "auto_retry_start")
        .map(|e| {
            (
                e["attempt"].as_u64().unwrap(),
                e["delayMs"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(starts, [(1, 10), (2, 20), (3, 40)]);
    // Each retried failure is left out of the context by a context_edit, announced.
    let edits: Vec<&Value> = ours
        .iter()
        .filter(|e| e["type"] == "entry_appended")
        .map(|e| &e["entry"])
        .collect();
    assert_eq!(edits.len(), 3);
    let failed: Vec<&Value> = ours
        .iter()
        .filter(|e| e["type"] == "message_end" && e["message"]["stopReason"] == "error")
        .collect();
    assert_eq!(failed.len(), 4);
    let file: Vec<Value> = std::fs::read_to_string(session_files(&env).pop().unwrap())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for edit in &edits {
        assert_eq!(edit["type"], "context_edit");
        assert_eq!(edit["replacement"], Value::Null);
        let target = file.iter().find(|l| l["id"] == edit["targetId"]).unwrap();
        assert_eq!(target["message"]["stopReason"], "error");
        assert!(
            file.iter().any(|l| l == *edit),
            "the edit is in the file as announced"
        );
    }
    assert_eq!(
        ours.last().unwrap(),
        &json!({"type": "agent_settled", "aborted": false})
    );
    let end = &ours[ours.len() - 2];
    assert_eq!(end["success"], false);
    assert_eq!(end["attempt"], 3);
    assert_eq!(
        end["finalError"],
        "Connection error.: connect ECONNREFUSED 127.0.0.1:9"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_that_succeeds_ends_the_sequence_and_keeps_the_failure_in_the_session() {
    let server = MockServer::start().await.unwrap();
    let env = env(&server);
    fast_retry_settings(&env);
    // The first attempt fails (the client makes no retries of its own), the retry works.
    server.push(Script::http_error(503));
    let out = pi(&env, &["--mode", "json", "hi"]);
    let events: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let retry: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"].as_str().unwrap().starts_with("auto_retry"))
        .collect();
    assert_eq!(retry.len(), 2, "{retry:?}");
    assert_eq!(retry[1]["success"], true);
    assert_eq!(retry[1]["attempt"], 1);
    let last = events
        .iter()
        .rev()
        .find(|e| e["type"] == "message_end")
        .unwrap();
    assert_eq!(last["message"]["content"][0]["text"], "ok: hi");
    // The retried request does not carry the failed reply; the session file keeps it.
    let requests = server.requests();
    let retried = &requests.last().unwrap().body["messages"];
    assert_eq!(retried.as_array().unwrap().len(), 2);
    let file = session_files(&env).pop().unwrap();
    let saved = std::fs::read_to_string(file).unwrap();
    assert!(saved.contains("\"stopReason\":\"error\""));
}
