//! Every fault on every wire API, through the real `pi` in print, JSON and RPC modes
//! against mock-llm: each cell ends in a recovery or in one clear error, with the right
//! exit code, no panic, no hang, and a session file that reloads. Every key carries a
//! canary, and no output, session file or other file pi writes may contain it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine;
use mock_llm::{Fault, Item, MockServer, Script};
use serde_json::{Value, json};

/// No cell may take longer than this (the slowest waits out a stall past a 1 s idle
/// timeout; a retry-after of 1 s is not waited for, as in pi 1.6.0).
const GUARD: Duration = Duration::from_secs(40);
/// What a recovered run answers.
const RECOVERED: &str = "recovered after the fault";
/// The reply the fault interrupts.
const FIRST_REPLY: &str = "a first reply that the fault interrupts part of the way through";
/// The answer to the turn before an overflow (so that there is something to compact).
const EARLIER_REPLY: &str = "an earlier answer";
/// The compaction's summary, when an overflow makes pi compact before retrying.
const SUMMARY: &str = "The user said hello.";
/// The summary of the split turn's start: with the failed attempt left out of the context,
/// keeping one token cuts inside the last turn (as pi 1.6.0 cuts, auto_compaction_16.rs).
const TURN_SUMMARY: &str = "The user then said hi.";

/// Part of every secret the runs are given; it must show up nowhere pi writes.
const CANARY: &str = "CANARYx7f3a9c";

/// A key carrying the canary.
fn key(kind: &str) -> String {
    format!("sk-{kind}-{CANARY}-0123456789abcdef")
}

/// The ten wire APIs: (provider name, api, base URL below the mock's root, API key).
fn apis(url: &str) -> Vec<(&'static str, &'static str, String, String)> {
    let gemini_cli_key = json!({"token": key("oauth"), "projectId": "my-project"}).to_string();
    let at = |path: &str| format!("{url}{path}");
    vec![
        (
            "p-completions",
            "openai-completions",
            at("/v1"),
            key("openai"),
        ),
        ("p-anthropic", "anthropic-messages", at(""), key("ant")),
        ("p-responses", "openai-responses", at("/v1"), key("resp")),
        (
            "p-azure",
            "azure-openai-responses",
            at("/openai/v1"),
            key("azure"),
        ),
        ("p-codex", "openai-codex-responses", at(""), codex_token()),
        (
            "p-gemini",
            "google-generative-ai",
            at("/v1beta"),
            key("gemini"),
        ),
        ("p-vertex", "google-vertex", at("/v1"), key("vertex")),
        ("p-gemini-cli", "google-gemini-cli", at(""), gemini_cli_key),
        // The key is the Bedrock API key (bearer token), as in pi 1.6.0.
        (
            "p-bedrock",
            "bedrock-converse-stream",
            at(""),
            key("bedrock"),
        ),
        (
            "p-mistral",
            "mistral-conversations",
            at("/mistral"),
            key("mistral"),
        ),
    ]
}

/// A ChatGPT-style OAuth token carrying an account id, as the Codex backend needs.
fn codex_token() -> String {
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let payload = json!({"https://api.openai.com/auth": {"chatgpt_account_id": "acct-123"}});
    format!(
        "{}.{}.{CANARY}",
        engine.encode(r#"{"alg":"none"}"#),
        engine.encode(payload.to_string())
    )
}

/// The faults of the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Case {
    RateLimited,
    Status(u16),
    Refused,
    DropMidStream,
    MalformedChunk,
    StallPastIdle,
    ContextOverflow,
    InStreamError,
    TruncatedFinal,
}

const CASES: [Case; 12] = [
    Case::RateLimited,
    Case::Status(500),
    Case::Status(502),
    Case::Status(503),
    Case::Status(529),
    Case::Refused,
    Case::DropMidStream,
    Case::MalformedChunk,
    Case::StallPastIdle,
    Case::ContextOverflow,
    Case::InStreamError,
    Case::TruncatedFinal,
];

/// How a cell must end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    /// The retry got the answer: exit 0, the answer printed.
    Recovery,
    /// One clear error: exit 1, the error said once.
    Error,
}

impl Case {
    fn expected(self, api: &str) -> Ending {
        match (self, api) {
            // As in pi 1.6.0, whose Codex client words a cut chunk as node does
            // ("Unterminated string in JSON …"), which auto-retry takes as transient
            // (codex_sse_16.rs compares it).
            (Case::MalformedChunk, "openai-codex-responses") => Ending::Recovery,
            // As in pi, a chunk that is not JSON is not retried.
            (Case::Refused | Case::MalformedChunk, _) => Ending::Error,
            // As in pi 1.6.0, whose clients make no request retries of their own by default:
            // what the failure says is all auto-retry goes by, and these say nothing
            // transient ("You have hit your ChatGPT usage limit.", "Bad gateway.", a 529
            // "Mock error", "Truncated event message received.").
            (
                Case::RateLimited | Case::Status(500) | Case::Status(502),
                "openai-codex-responses",
            )
            | (Case::Status(529), "google-generative-ai" | "google-vertex")
            | (Case::TruncatedFinal, "bedrock-converse-stream") => Ending::Error,
            _ => Ending::Recovery,
        }
    }

    /// The scripts the cell's server answers with, in order.
    fn scripts(self, api: &str) -> Vec<Script> {
        let reply = || Script::new(vec![Item::text(FIRST_REPLY)]);
        let faulty = match self {
            Case::RateLimited => Script::default().with_fault(Fault::HttpError {
                status: 429,
                retry_after: Some("1".into()),
                retry_after_ms: None,
                body: None,
            }),
            Case::Status(status) => Script::http_error(status),
            Case::Refused => return Vec::new(),
            Case::DropMidStream => reply().with_fault(Fault::drop_after(2)),
            Case::MalformedChunk => reply().with_fault(Fault::malformed_after(2)),
            Case::StallPastIdle => reply().with_fault(Fault::stall(1, 4_000)),
            Case::ContextOverflow => Script::default().with_fault(Fault::HttpError {
                status: 400,
                retry_after: None,
                retry_after_ms: None,
                body: Some(overflow_body(api)),
            }),
            Case::InStreamError => reply().with_fault(Fault::StreamError {
                after_events: 2,
                message: Some("Overloaded: the server is busy, try again".into()),
            }),
            Case::TruncatedFinal => reply().with_fault(Fault::TruncatedEnd),
        };
        // An earlier turn is answered; at the overflow pi compacts (the history and the
        // split turn's start), then retries, and the retry is answered.
        if self == Case::ContextOverflow {
            return vec![
                Script::text(EARLIER_REPLY),
                faulty,
                Script::text(SUMMARY),
                Script::text(TURN_SUMMARY),
                Script::text(RECOVERED),
            ];
        }
        vec![faulty, Script::text(RECOVERED)]
    }

    /// The prompts of the cell: an overflow needs an earlier turn to compact (an overflow
    /// on the first prompt has nothing to compact and is not retried, as in pi 1.6.0).
    fn prompts(self) -> &'static [&'static str] {
        match self {
            Case::ContextOverflow => &["hello", "hi"],
            _ => &["hi"],
        }
    }
}

/// A context-overflow error body in the API's own shape.
fn overflow_body(api: &str) -> String {
    match api {
        "bedrock-converse-stream" => json!({"__type": "ValidationException",
            "message": "Input is too long for requested model."}),
        _ => json!({"error": {"type": "invalid_request_error", "code": 400,
            "message": "prompt is too long: 250000 tokens > 128000 maximum"}}),
    }
    .to_string()
}

/// The modes of the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Print,
    Json,
    Rpc,
}

/// A scratch agent dir with every API as a provider on `url`.
struct Cell {
    dir: tempfile::TempDir,
}

impl Cell {
    fn new(url: &str) -> Cell {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("agent")).unwrap();
        std::fs::create_dir_all(dir.path().join("work")).unwrap();
        let mut providers = serde_json::Map::new();
        for (name, api, base_url, key) in apis(url) {
            providers.insert(
                name.into(),
                json!({"baseUrl": base_url, "api": api, "apiKey": key,
                       "models": [{"id": "m1", "contextWindow": 128000, "maxTokens": 4096}]}),
            );
        }
        let agent = dir.path().join("agent");
        std::fs::write(
            agent.join("models.json"),
            json!({"providers": providers}).to_string(),
        )
        .unwrap();
        // Keeping 1 token leaves the turn before an overflow to compact (with everything
        // kept, pi 1.6.0 has nothing to compact and gives up).
        let settings = json!({"retry": {"baseDelayMs": 10, "maxRetries": 3},
                              "compaction": {"keepRecentTokens": 1},
                              "httpIdleTimeoutMs": 1000});
        std::fs::write(agent.join("settings.json"), settings.to_string()).unwrap();
        Cell { dir }
    }

    /// pi on `model` in `mode`; print and JSON modes get the prompts as arguments (RPC
    /// ones are sent by [`run`]).
    fn command(&self, model: &str, mode: Mode, prompts: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_pi"));
        command.args(["--model", model]);
        match mode {
            Mode::Print => command.arg("-p").args(prompts),
            Mode::Json => command.args(["--mode", "json"]).args(prompts),
            Mode::Rpc => command.args(["--mode", "rpc"]),
        };
        command
            .current_dir(self.dir.path().join("work"))
            .env("PI_CODING_AGENT_DIR", self.dir.path().join("agent"))
            .env("HOME", self.dir.path())
            .env("AWS_BEARER_TOKEN_BEDROCK", key("bedrock"))
            .env("AWS_REGION", "us-east-1")
            .env_remove("AWS_ACCESS_KEY_ID")
            .env_remove("AWS_PROFILE")
            .env_remove("PI_CODING_AGENT_SESSION_DIR")
            .stdin(if mode == Mode::Rpc {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    fn session_files(&self) -> Vec<PathBuf> {
        let mut found = Vec::new();
        let mut stack = vec![self.dir.path().join("agent/sessions")];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "jsonl") {
                    found.push(path);
                }
            }
        }
        found
    }
}

/// What one run did.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

/// Runs `command` (for RPC: sends `rpc_prompts` one run after the other, and closes stdin
/// once the last run is over), killing it at [`GUARD`].
fn run(mut command: Command, rpc_prompts: Option<&[&str]>) -> Run {
    let rpc = rpc_prompts.is_some();
    let mut waiting = rpc_prompts.unwrap_or_default().iter();
    let started = Instant::now();
    let mut child = command.spawn().unwrap();
    let mut stdin = child.stdin.take();
    let stdout = child.stdout.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    let err_reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut BufReader::new(stderr), &mut text);
        text
    });
    let send = |stdin: &mut Option<std::process::ChildStdin>, message: &str| {
        if let Some(stdin) = stdin.as_mut() {
            let line = json!({"id": "p", "type": "prompt", "message": message});
            writeln!(stdin, "{line}").unwrap();
        }
    };
    if let Some(first) = waiting.next() {
        send(&mut stdin, first);
    }
    let (lines_tx, lines_rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines_tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut out = String::new();
    loop {
        let left = GUARD.saturating_sub(started.elapsed());
        match lines_rx.recv_timeout(left.min(Duration::from_millis(200))) {
            Ok(line) => {
                // RPC: a run is over at `agent_settled` (after retries and compaction).
                if rpc && is_settled(&line) {
                    match waiting.next() {
                        Some(next) => send(&mut stdin, next),
                        None => drop(stdin.take()),
                    }
                }
                out.push_str(&line);
                out.push('\n');
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
        }
        if started.elapsed() >= GUARD {
            let _ = child.kill();
            break;
        }
    }
    let status = child.wait().unwrap();
    Run {
        code: status.code(),
        stdout: out,
        stderr: err_reader.join().unwrap(),
        elapsed: started.elapsed(),
    }
}

fn is_settled(line: &str) -> bool {
    serde_json::from_str::<Value>(line).is_ok_and(|v| v["type"] == "agent_settled")
}

/// The last lines of an output, for failure messages.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let kept = &lines[lines.len().saturating_sub(8)..];
    kept.iter()
        .map(|l| {
            let cut: String = l.chars().take(400).collect();
            cut
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The last assistant message of a JSON or RPC run's output.
fn last_assistant(stdout: &str) -> Option<Value> {
    stdout
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["type"] == "message_end" && v["message"]["role"] == "assistant")
        .map(|v| v["message"].clone())
}

/// Checks one cell; the error names what went wrong.
fn check_cell(api: &str, case: Case, mode: Mode, run: &Run, cell: &Cell) -> Result<(), String> {
    let at = format!("{api} {case:?} {mode:?}");
    if run.elapsed >= GUARD {
        return Err(format!("{at}: hung (killed after {GUARD:?})"));
    }
    if run.stderr.contains("panicked") || run.stderr.contains("RUST_BACKTRACE") {
        return Err(format!("{at}: panic: {}", run.stderr));
    }
    let expected = case.expected(api);
    // As in pi, only print mode reports a failed run in its exit code.
    let want_code = match (mode, expected) {
        (Mode::Print, Ending::Error) => 1,
        _ => 0,
    };
    if run.code != Some(want_code) {
        return Err(format!(
            "{at}: exit {:?}, wanted {want_code}\nstdout: {}\nstderr: {}",
            run.code,
            tail(&run.stdout),
            tail(&run.stderr)
        ));
    }
    let ended = match mode {
        Mode::Print => None,
        Mode::Json | Mode::Rpc => Some(
            last_assistant(&run.stdout)
                .ok_or_else(|| format!("{at}: no assistant message\n{}", tail(&run.stdout)))?,
        ),
    };
    match expected {
        Ending::Recovery => {
            let said = match &ended {
                None => run.stdout.trim().to_owned(),
                Some(message) => message["content"][0]["text"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned(),
            };
            // A cut `[DONE]` loses nothing: the first reply was whole.
            let whole_first = case == Case::TruncatedFinal && said == FIRST_REPLY;
            if said != RECOVERED && !whole_first {
                return Err(format!(
                    "{at}: no recovery: {said:?}\nstdout: {}\nstderr: {}",
                    tail(&run.stdout),
                    tail(&run.stderr)
                ));
            }
        }
        Ending::Error => {
            let message = match &ended {
                None => {
                    let lines: Vec<&str> = run.stderr.lines().filter(|l| !l.is_empty()).collect();
                    if lines.len() != 1 || !run.stdout.is_empty() {
                        return Err(format!(
                            "{at}: not one clear error\nstdout: {}\nstderr: {}",
                            tail(&run.stdout),
                            tail(&run.stderr)
                        ));
                    }
                    lines[0].to_owned()
                }
                Some(message) => {
                    if message["stopReason"] != "error" {
                        return Err(format!("{at}: ended {message}"));
                    }
                    message["errorMessage"].as_str().unwrap_or("").to_owned()
                }
            };
            if message.trim().is_empty() || message.len() > 2_000 {
                return Err(format!("{at}: unclear error {message:?}"));
            }
        }
    }
    check_session_reloads(cell).map_err(|e| format!("{at}: {e}"))?;
    check_no_secret(run, cell).map_err(|e| format!("{at}: {e}"))
}

/// The canary is in no output and in no file under the run's home but models.json,
/// which holds the keys.
fn check_no_secret(run: &Run, cell: &Cell) -> Result<(), String> {
    for (what, text) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
        if let Some(line) = text.lines().find(|l| l.contains(CANARY)) {
            let shown: String = line.chars().take(400).collect();
            return Err(format!("a key in {what}: {shown}"));
        }
    }
    let models = cell.dir.path().join("agent/models.json");
    let mut stack = vec![cell.dir.path().to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path != models {
                let bytes = std::fs::read(&path).unwrap_or_default();
                if bytes.windows(CANARY.len()).any(|w| w == CANARY.as_bytes()) {
                    return Err(format!("a key in {}", path.display()));
                }
            }
        }
    }
    Ok(())
}

/// The run's session file opens in pi's reader with every line an entry.
fn check_session_reloads(cell: &Cell) -> Result<(), String> {
    let files = cell.session_files();
    let [file] = files.as_slice() else {
        return Err(format!("{} session files", files.len()));
    };
    let text = std::fs::read_to_string(file).map_err(|e| e.to_string())?;
    for (n, line) in text.lines().enumerate() {
        serde_json::from_str::<Value>(line).map_err(|e| format!("line {}: {e}", n + 1))?;
    }
    let session =
        pi_coding_agent::session::SessionManager::open(file, &cell.dir.path().join("work"))
            .map_err(|e| format!("reload: {e}"))?;
    if session.entries().len() + 1 != text.lines().count() {
        return Err(format!(
            "reload kept {} of {} entries",
            session.entries().len(),
            text.lines().count() - 1
        ));
    }
    Ok(())
}

fn run_mode(mode: Mode) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let failures = Mutex::new(Vec::new());
    let cells: Vec<(usize, Case)> = (0..10)
        .flat_map(|api| CASES.iter().map(move |case| (api, *case)))
        .collect();
    let next = Mutex::new(cells.into_iter());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                loop {
                    let Some((index, case)) = next.lock().unwrap().next() else {
                        return;
                    };
                    let server = runtime.block_on(MockServer::start()).unwrap();
                    let url = if case == Case::Refused {
                        closed_port_url()
                    } else {
                        server.url()
                    };
                    let cell = Cell::new(&url);
                    let (name, api, _, _) = apis(&url)[index].clone();
                    server.push_all(case.scripts(api));
                    let prompts = case.prompts();
                    let result = run(
                        cell.command(&format!("{name}/m1"), mode, prompts),
                        (mode == Mode::Rpc).then_some(prompts),
                    );
                    if let Err(e) = check_cell(api, case, mode, &result, &cell) {
                        failures.lock().unwrap().push(e);
                    }
                    // The scan means something only if the key was really sent.
                    let sent = server.requests().iter().any(|r| {
                        r.path.contains(CANARY) || r.headers.values().any(|v| v.contains(CANARY))
                    });
                    if case != Case::Refused && !sent {
                        failures
                            .lock()
                            .unwrap()
                            .push(format!("{api} {case:?} {mode:?}: the key was never sent"));
                    }
                    drop(server);
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of 120 cells failed in {mode:?} mode:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// A URL on a port nobody listens on: the discard port, below the range test servers
/// get their ports from (a freed ephemeral port could go to another cell's server).
fn closed_port_url() -> String {
    "http://127.0.0.1:9".to_owned()
}

#[test]
fn print_mode() {
    run_mode(Mode::Print);
}

#[test]
fn json_mode() {
    run_mode(Mode::Json);
}

#[test]
fn rpc_mode() {
    run_mode(Mode::Rpc);
}

#[test]
fn the_scan_finds_a_planted_key() {
    let cell = Cell::new("http://127.0.0.1:9");
    let run = Run {
        code: Some(0),
        stdout: String::new(),
        stderr: String::new(),
        elapsed: Duration::ZERO,
    };
    assert!(check_no_secret(&run, &cell).is_ok());
    let leaked = Run {
        stderr: format!("Error: 401 for key {}", key("openai")),
        ..run
    };
    assert!(check_no_secret(&leaked, &cell).is_err());
    let sessions = cell.dir.path().join("agent/sessions/x");
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::write(sessions.join("s.jsonl"), key("ant")).unwrap();
    let clean = Run {
        stderr: String::new(),
        ..leaked
    };
    assert!(check_no_secret(&clean, &cell).is_err());
}
