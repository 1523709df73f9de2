//! The `mock-llm` binary: prints its URL, loads a script file and serves it.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use common::{client, openai_concat, openai_request, stream};

/// Kills the child process on drop so a failing test does not leak it.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn binary_serves_script_file() {
    let dir = std::env::temp_dir().join(format!("mock-llm-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("scripts.json");
    std::fs::write(
        &script,
        r#"[{"items":[{"type":"text","text":"from file"}]}]"#,
    )
    .unwrap();

    let mut child = Child(
        Command::new(env!("CARGO_BIN_EXE_mock-llm"))
            .args(["--port", "0", "--host", "127.0.0.1", "--script"])
            .arg(&script)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let stdout = child.0.stdout.take().unwrap();
    let line = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        line
    })
    .await
    .unwrap();
    let url = line
        .trim()
        .strip_prefix("mock-llm listening on ")
        .unwrap()
        .to_owned();
    assert!(url.starts_with("http://127.0.0.1:"));

    let health = client()
        .get(format!("{url}/_mock/health"))
        .send()
        .await
        .unwrap();
    assert_eq!(health.text().await.unwrap(), "ok");
    let events = stream(&format!("{url}/v1/chat/completions"), &openai_request("q")).await;
    assert_eq!(openai_concat(&events, "content"), "from file");
    let events = stream(
        &format!("{url}/v1/chat/completions"),
        &openai_request("again"),
    )
    .await;
    assert_eq!(openai_concat(&events, "content"), "ok: again");

    drop(child);
    let _ = std::fs::remove_dir_all(&dir);
}
