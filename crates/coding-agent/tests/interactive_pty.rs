//! Interactive mode through a real pseudo-terminal: the `pi` binary runs in tmux
//! against mock-llm, keys are typed with `send-keys`, and the screen is read back.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use serde_json::{Value, json};

use mock_llm::{Fault, MockServer, Script};
use support::rpc::{Env, read_jsonl, user_texts};
use support::tmux::{self, Tmux};

const WAIT: Duration = Duration::from_secs(20);

/// Starts pi on a 100×30 terminal and waits for the footer.
fn start(env: &Env, args: &[&str]) -> Tmux {
    let tmux = Tmux::start(env, args, 100, 30);
    tmux.wait_for("mock-model");
    tmux
}

fn submit(tmux: &Tmux, text: &str) {
    tmux.type_text(text);
    tmux.keys(&["Enter"]);
}

/// Every message entry of the only session file, after the system message pi 1.5 writes
/// first (checked to be there).
fn session_messages(env: &Env) -> Vec<Value> {
    let files = env.session_files();
    assert_eq!(files.len(), 1, "one session file: {files:?}");
    let mut messages: Vec<Value> = read_jsonl(&files[0])
        .into_iter()
        .filter(|e| e["type"] == "message")
        .collect();
    assert_eq!(messages[0]["message"]["role"], "system");
    messages.remove(0);
    messages
}

macro_rules! require_tmux {
    () => {
        if !tmux::available() {
            eprintln!("tmux is not installed; skipping");
            return;
        }
    };
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_streams_text_then_runs_a_tool() {
    require_tmux!();
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    std::fs::write(env.work.join("hello.txt"), "hello from the file\n").unwrap();
    server.push(Script::tool_call("read", json!({"path": "hello.txt"})));
    // The answer streams in small chunks and pauses half-way, so the partial text shows.
    server.push(
        Script::text("The file greets you politely. It says hello from the file.")
            .with_chunk_size(6)
            .with_fault(Fault::stall(4, 1500)),
    );
    let tmux = start(&env, &[]);
    submit(&tmux, "what does hello.txt say?");

    let partial = tmux.wait("the partial reply", WAIT, |s| {
        s.contains("The file") && !s.contains("from the file.")
    });
    assert!(partial.contains("Working"), "{partial}");
    assert!(partial.contains("read hello.txt"), "tool title: {partial}");
    // pi 1.6 shows a read's content only when tool output is expanded.
    assert!(
        !partial.lines().any(|l| l.trim() == "hello from the file"),
        "tool output stays collapsed: {partial}"
    );

    let done = tmux.wait_for("It says hello from the file.");
    tmux.wait("the loader to stop", WAIT, |s| !s.contains("Working"));
    assert!(done.contains("what does hello.txt say?"));
    // The footer shows usage and the model.
    assert!(done.contains("mock-model"));

    let messages = session_messages(&env);
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["message"]["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "toolResult", "assistant"]);
    assert_eq!(
        messages[2]["message"]["content"][0]["text"],
        "hello from the file\n"
    );
    // Finished messages are written to the scrollback once, not redrawn into it.
    let history = tmux.history();
    assert_eq!(
        tmux::count(&history, "It says hello from the file."),
        1,
        "{history}"
    );
    assert_eq!(
        tmux::count(&history, "what does hello.txt say?"),
        1,
        "{history}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steering_while_a_tool_runs_reaches_the_next_request() {
    require_tmux!();
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    server.push(Script::tool_call(
        "bash",
        json!({"command": "sleep 2; echo slow-done"}),
    ));
    server.push(Script::text("noted the change"));
    let tmux = start(&env, &[]);
    submit(&tmux, "run the slow thing");
    tmux.wait_for("sleep 2; echo slow-done");
    submit(&tmux, "actually use the fast way");
    let pending = tmux.wait_for("Steering: actually use the fast way");
    assert!(pending.contains("to edit all queued messages"), "{pending}");
    tmux.wait_for("noted the change");
    tmux.wait("the pending line to go", WAIT, |s| !s.contains("Steering:"));

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let users = user_texts(&requests[1].body);
    assert_eq!(users, ["run the slow thing", "actually use the fast way"]);
    // The steering message came after the tool result.
    let messages = requests[1].body["messages"].as_array().unwrap();
    let tool_at = messages.iter().position(|m| m["role"] == "tool").unwrap();
    let steer_at = messages.iter().rposition(|m| m["role"] == "user").unwrap();
    assert!(steer_at > tool_at);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_aborts_a_streaming_reply() {
    require_tmux!();
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    server.push(
        Script::text("this reply will never finish because it stalls")
            .with_chunk_size(5)
            .with_fault(Fault::stall(3, 60_000)),
    );
    let tmux = start(&env, &[]);
    submit(&tmux, "tell me a long story");
    tmux.wait_for("Working");
    tmux.wait_for("this reply");
    tmux.keys(&["Escape"]);
    let screen = tmux.wait_for("Operation aborted");
    tmux.wait("the loader to stop", WAIT, |s| !s.contains("Working"));
    assert!(screen.contains("tell me a long story"));
    let messages = session_messages(&env);
    let last = &messages.last().unwrap()["message"];
    assert_eq!(last["role"], "assistant");
    assert_eq!(last["stopReason"], "aborted");
    // The UI keeps working: the next prompt gets an answer.
    submit(&tmux, "still there?");
    tmux.wait_for("ok: still there?");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_picker_switches_the_model() {
    require_tmux!();
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let tmux = start(&env, &[]);
    submit(&tmux, "/model");
    tmux.wait_for("Select Model");
    tmux.type_text("thinker");
    tmux.wait("the filtered list", WAIT, |s| !s.contains("mock-model ["));
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("mock-thinker • ");
    assert!(screen.contains("Model: mock-thinker"), "{screen}");
    submit(&tmux, "hi");
    tmux.wait_for("ok: hi");
    let requests = server.requests();
    assert_eq!(requests.last().unwrap().body["model"], "mock-thinker");
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent.join("settings.json")).unwrap())
            .unwrap();
    assert_eq!(settings["defaultModel"], "mock-thinker");
    // Coming from a model that cannot think, the level stays off (as in pi 1.6.0: no
    // default thinking level is set); Shift+Tab cycles it.
    tmux.keys(&["BTab"]);
    tmux.wait_for("Thinking level: minimal");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tree_branches_from_an_earlier_message() {
    require_tmux!();
    let server = MockServer::start().await.unwrap();
    let env = Env::new(
        &server,
        128_000,
        json!({"branchSummary": {"skipPrompt": true}}),
    );
    let tmux = start(&env, &[]);
    submit(&tmux, "first question");
    tmux.wait_for("ok: first question");
    submit(&tmux, "second question");
    tmux.wait_for("ok: second question");
    submit(&tmux, "/tree");
    tmux.wait_for("first question");
    // Walk up to the first user message (the leaf is the last reply).
    let mut found = false;
    for _ in 0..8 {
        tmux.keys(&["Up"]);
        std::thread::sleep(Duration::from_millis(150));
        let screen = tmux.screen();
        if screen
            .lines()
            .any(|l| l.contains('›') && l.contains("first question") && !l.contains("ok:"))
        {
            found = true;
            break;
        }
    }
    assert!(
        found,
        "the tree shows the first question:\n{}",
        tmux.screen()
    );
    tmux.keys(&["Enter"]);
    tmux.wait_for("Navigated to selected point");
    // The user message goes back to the editor; send it changed.
    tmux.keys(&["C-u"]);
    submit(&tmux, "first question, rephrased");
    tmux.wait_for("ok: first question, rephrased");

    let entries = read_jsonl(&env.session_files()[0]);
    let users: Vec<&Value> = entries
        .iter()
        .filter(|e| e["type"] == "message" && e["message"]["role"] == "user")
        .collect();
    assert_eq!(users.len(), 3);
    // Both versions of the first question hang off the same parent.
    assert_eq!(users[0]["parentId"], users[2]["parentId"], "{entries:#?}");
    let last_request = server.requests().last().unwrap().body.clone();
    assert_eq!(user_texts(&last_request), ["first question, rephrased"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_picker_reopens_a_session() {
    require_tmux!();
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    {
        let tmux = start(&env, &[]);
        submit(&tmux, "remember the word pelican");
        tmux.wait_for("ok: remember the word pelican");
        tmux.keys(&["C-c"]);
        tmux.keys(&["C-c"]);
        assert_eq!(tmux.wait_exit(WAIT), 0);
    }
    let tmux = Tmux::start(&env, &["-r"], 100, 30);
    tmux.wait_for("remember the word pelican");
    tmux.keys(&["Enter"]);
    tmux.wait_for("ok: remember the word pelican");
    submit(&tmux, "what was the word?");
    tmux.wait_for("ok: what was the word?");
    let body = server.requests().last().unwrap().body.clone();
    assert_eq!(
        user_texts(&body),
        ["remember the word pelican", "what was the word?"]
    );
    assert_eq!(env.session_files().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resize_rewraps_without_duplicating_history() {
    require_tmux!();
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let words: Vec<String> = (0..60).map(|i| format!("word{i:02}")).collect();
    server.push(Script::text(words.join(" ")));
    let tmux = start(&env, &[]);
    submit(&tmux, "say many words");
    tmux.wait_for("word59");
    tmux.resize(50, 30);
    let screen = tmux.wait("the narrow layout", WAIT, |s| {
        s.lines().all(|l| l.chars().count() <= 50)
            && s.contains("word59")
            && s.contains("mock-model")
    });
    // Every word is still there exactly once, rewrapped to the new width.
    let history = tmux.history();
    for word in &words {
        assert_eq!(tmux::count(&history, word), 1, "{word} in:\n{history}");
    }
    assert!(screen.contains("ok") || screen.contains("word"));
    tmux.resize(120, 30);
    tmux.wait("the wide layout", WAIT, |s| {
        s.lines()
            .any(|l| l.contains("word00") && l.contains("word10"))
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_twice_exits_and_ctrl_d_exits_when_empty() {
    require_tmux!();
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let tmux = start(&env, &[]);
    tmux.type_text("draft text");
    tmux.wait_for("draft text");
    tmux.keys(&["C-c"]);
    tmux.wait("the editor to clear", WAIT, |s| !s.contains("draft text"));
    std::thread::sleep(Duration::from_millis(700));
    tmux.keys(&["C-c"]);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(tmux.exit_status(), None, "one Ctrl+C only clears");
    tmux.keys(&["C-d"]);
    assert_eq!(tmux.wait_exit(WAIT), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_g_edits_the_prompt_in_the_external_editor() {
    require_tmux!();
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let tmux = Tmux::start_with(&env, &[("VISUAL", "sed -i s/draft/edited/")], &[], 100, 30);
    tmux.wait_for("mock-model");
    tmux.type_text("a draft prompt");
    tmux.wait_for("a draft prompt");
    tmux.keys(&["C-g"]);
    tmux.wait_for("a edited prompt");
    tmux.keys(&["Enter"]);
    tmux.wait_for("ok: a edited prompt");
}

/// The `externalEditor` setting wins over `$VISUAL` (pi 1.6's order: the setting,
/// `$VISUAL`, `$EDITOR`, nano).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_g_uses_the_external_editor_setting_first() {
    require_tmux!();
    let server = MockServer::start().await.unwrap();
    let env = Env::new(
        &server,
        128_000,
        json!({"externalEditor": "sed -i s/draft/configured/"}),
    );
    let tmux = Tmux::start_with(&env, &[("VISUAL", "sed -i s/draft/visual/")], &[], 100, 30);
    tmux.wait_for("mock-model");
    tmux.type_text("a draft prompt");
    tmux.wait_for("a draft prompt");
    tmux.keys(&["C-g"]);
    tmux.wait_for("a configured prompt");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_commands_name_export_session_and_new() {
    require_tmux!();
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let tmux = start(&env, &[]);
    submit(&tmux, "hello there");
    tmux.wait_for("ok: hello there");
    submit(&tmux, "/name refactor work");
    tmux.wait_for("Session name set: refactor work");
    // The footer shows the name next to the directory.
    tmux.wait_for("• refactor work");
    let out = env.work.join("out.html");
    submit(&tmux, &format!("/export {}", out.display()));
    tmux.wait_for("Session exported to:");
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("hello there") && html.contains("ok: hello there"));
    submit(&tmux, "/session");
    let screen = tmux.wait_for("Session Info");
    assert!(screen.contains("User: 1"), "{screen}");
    submit(&tmux, "/new");
    tmux.wait_for("New session started");
    submit(&tmux, "fresh start");
    tmux.wait_for("ok: fresh start");
    let body = server.requests().last().unwrap().body.clone();
    assert_eq!(user_texts(&body), ["fresh start"]);
    assert_eq!(env.session_files().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_templates_complete_and_expand() {
    require_tmux!();
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    std::fs::create_dir_all(env.agent.join("prompts")).unwrap();
    std::fs::write(
        env.agent.join("prompts/review.md"),
        "---\ndescription: Review a file\n---\nPlease review $1 carefully",
    )
    .unwrap();
    let tmux = start(&env, &[]);
    tmux.type_text("/rev");
    let screen = tmux.wait_for("Review a file");
    assert!(screen.contains("review"), "{screen}");
    tmux.keys(&["Tab"]);
    tmux.type_text("main.rs");
    tmux.keys(&["Enter"]);
    tmux.wait_for("ok: Please review main.rs carefully");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn theme_paths_load_and_no_themes_skips_discovery() {
    if !tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({"theme": "sand"}));
    let mut sand: Value =
        serde_json::from_str(pi_coding_agent::modes::interactive::theme::LIGHT_JSON).unwrap();
    sand["name"] = "sand".into();
    let given = env.work.join("given-themes");
    std::fs::create_dir_all(&given).unwrap();
    std::fs::write(given.join("sand.json"), sand.to_string()).unwrap();
    // Discovered in the agent dir: found normally, not with --no-themes.
    let mut ocean = sand.clone();
    ocean["name"] = "ocean".into();
    std::fs::create_dir_all(env.agent.join("themes")).unwrap();
    std::fs::write(env.agent.join("themes/ocean.json"), ocean.to_string()).unwrap();

    let missing = start(&env, &[]);
    let screen = missing.wait_for("mock-model");
    assert!(
        screen.contains("theme \"sand\" not found"),
        "without --theme: {screen}"
    );
    missing.keys(&["C-d"]);

    let given_path = given.display().to_string();
    let loaded = start(&env, &["--theme", &given_path, "--no-themes"]);
    let screen = loaded.wait_for("mock-model");
    assert!(!screen.contains("not found"), "with --theme: {screen}");
    loaded.keys(&["C-d"]);

    std::fs::write(
        env.agent.join("settings.json"),
        json!({"theme": "ocean", "defaultProvider": "mock", "defaultModel": "mock-model"})
            .to_string(),
    )
    .unwrap();
    let skipped = start(&env, &["--theme", &given_path, "--no-themes"]);
    let screen = skipped.wait_for("mock-model");
    assert!(
        screen.contains("theme \"ocean\" not found"),
        "--no-themes: {screen}"
    );
    skipped.keys(&["C-d"]);
}
