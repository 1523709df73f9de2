//! MCP Streamable HTTP replies that are awkward or too big, through ours and pi 1.6.0
//! (`PI_TS16`) against the Python server `tests/fixtures/mcp/http_server.py`: SSE lines
//! ending in a lone CR are read (1.5.1), an SSE event or a JSON reply over the 16 MiB
//! message limit fails the call and the SSE connection is closed (1.5.1), and an HTTP
//! error whose body never ends fails the call without reading it all (1.5.1). And a stdio
//! message of several MiB arrives whole (1.5.1 stopped copying and rescanning it per chunk).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::mcp::{fixture, notes, wait_until};
use support::rpc::{Env, Rpc};
use support::ts16::{pis, program};

/// The fixture server, stopped when dropped.
struct HttpServer {
    child: Child,
    url: String,
    notes: PathBuf,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl HttpServer {
    /// Starts it and waits for the port it writes.
    fn start(dir: &Path) -> Self {
        let port_file = dir.join("http-port");
        let notes = dir.join("http-notes.txt");
        let child = Command::new("python3")
            .arg(fixture("http_server.py"))
            .arg(&port_file)
            .arg(&notes)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let port = support::wait_for_port_file(&port_file, "HTTP");
        Self {
            child,
            url: format!("http://127.0.0.1:{}/mcp", port),
            notes,
        }
    }
}

/// One tool call of `tool` through `wrapper`'s pi: the result's text and error flag. With
/// `note`, waits (pi still running) until the server notes it.
async fn call(
    server: &MockServer,
    wrapper: &Option<PathBuf>,
    tool: &str,
    note: Option<&'static str>,
) -> (String, bool) {
    server.clear_queue();
    server.push_all([
        Script::tool_call(format!("mcp__h__{tool}"), json!({})),
        Script::text("done"),
    ]);
    let env = Env::new(server, 128_000, json!({}));
    let http = HttpServer::start(env.dir.path());
    support::mcp::write_config(&env, json!({"h": {"url": http.url, "exposure": "direct"}}));
    let command = program(wrapper);
    let notes_path = http.notes.clone();
    let (text, is_error, env) = tokio::task::spawn_blocking(move || {
        let mut rpc = Rpc::start_program(&env, command, &[]);
        rpc.call("p", json!({"type": "prompt", "message": "go"}));
        let lines = rpc.event("agent_end");
        if let Some(note) = note {
            wait_until(note, || notes(&notes_path).contains(note));
        }
        rpc.finish();
        let end: Value = lines
            .iter()
            .find(|l| l["type"] == "tool_execution_end")
            .expect("the MCP tool ran")
            .clone();
        let text = end["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        (text, end["isError"].as_bool().unwrap_or(false), env)
    })
    .await
    .unwrap();
    drop(env);
    drop(http);
    (text, is_error)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sse_replies_with_cr_only_line_endings_are_read() {
    let server = MockServer::start().await.unwrap();
    for (who, wrapper) in pis() {
        let (text, is_error) = call(&server, &wrapper, "cr_sse", None).await;
        assert_eq!(
            (text.as_str(), is_error),
            ("carriage returns only", false),
            "{who}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_replies_fail_the_call_and_free_the_connection() {
    let server = MockServer::start().await.unwrap();
    for (who, wrapper) in pis() {
        // The connection of a rejected SSE reply or error body is closed while pi runs.
        for (tool, note) in [
            ("big_sse", Some("sse closed")),
            ("big_json", None),
            ("error_body", Some("error closed")),
        ] {
            let (text, is_error) = call(&server, &wrapper, tool, note).await;
            eprintln!("{who} {tool}: {}", &text[..text.len().min(300)]);
            assert!(is_error, "{who} {tool}: {}", &text[..text.len().min(300)]);
            assert!(text.len() < 64 * 1024, "{who} {tool}: {} bytes", text.len());
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_stdio_message_arrives_whole() {
    let server = MockServer::start().await.unwrap();
    let size = 6 * 1024 * 1024;
    for (who, wrapper) in pis() {
        server.clear_queue();
        server.push_all([
            Script::tool_call("mcp__t__big", json!({})),
            Script::text("done"),
        ]);
        let env = Env::new(&server, 128_000, json!({}));
        let (test, _) = support::mcp::test_server(
            &env,
            json!({"env": {"TEST_SERVER_BIG": size.to_string()}, "exposure": "direct"}),
        );
        support::mcp::write_config(&env, json!({ "t": test }));
        let temp = env.dir.path().join("tmp");
        std::fs::create_dir_all(&temp).unwrap();
        let mut command = program(&wrapper);
        command.env("TMPDIR", &temp);
        let (text, is_error, env) = tokio::task::spawn_blocking(move || {
            let mut rpc = Rpc::start_program(&env, command, &[]);
            rpc.call("p", json!({"type": "prompt", "message": "big"}));
            let lines = rpc.event("agent_end");
            rpc.finish();
            let end = lines
                .iter()
                .find(|l| l["type"] == "tool_execution_end")
                .expect("the MCP tool ran")
                .clone();
            let text = end["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            (text, end["isError"].as_bool().unwrap_or(false), env)
        })
        .await
        .unwrap();
        assert!(!is_error, "{who}: {}", &text[..text.len().min(300)]);
        // The model gets the start; the whole text is saved to a file the result names.
        assert!(
            text.contains("bbbb"),
            "{who}: {}",
            &text[..text.len().min(300)]
        );
        let saved: Vec<_> = std::fs::read_dir(&temp)
            .unwrap()
            .flatten()
            .map(|e| std::fs::metadata(e.path()).unwrap().len())
            .collect();
        assert!(saved.contains(&(size as u64)), "{who}: saved {saved:?}");
        drop(env);
    }
}
