//! OpenClaw's web Control UI (the `openclaw` package's own `dist/control-ui`, installed by
//! `scripts/install-openclaw-client.sh`) served by pi-gateway's OpenClaw listener and
//! driven in headless Chromium over the DevTools protocol: it connects with the token,
//! shows the session's history, sends a message and shows the model's reply. The
//! screenshot is written to `target/openclaw-control-ui.png`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use futures_util::{SinkExt, StreamExt};
use mock_llm::Script;
use serde_json::{Value, json};
use support::{ALICE, Env, relaxed};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::Message;

fn control_ui() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/openclaw-client/pkg/node_modules/openclaw/dist/control-ui");
    let chromium = Command::new("chromium")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let found = dir.join("index.html").exists() && chromium;
    if !found {
        assert!(
            std::env::var_os("PI_TEST_REQUIRE_OPENCLAW").is_none(),
            "the Control UI (scripts/install-openclaw-client.sh) or chromium is missing"
        );
        eprintln!("the Control UI or chromium is not installed: skipped");
    }
    found.then_some(dir)
}

struct Browser(Child);

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `GET http://127.0.0.1:port/path` with a plain socket (the DevTools target list); the
/// body, read up to its `Content-Length` (the server keeps the connection open).
async fn http_get(port: u16, path: &str) -> Option<String> {
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .ok()?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n");
    stream.write_all(request.as_bytes()).await.ok()?;
    let mut data = Vec::new();
    let mut buf = [0u8; 8192];
    let read = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            let n = stream.read(&mut buf).await.ok()?;
            if n == 0 {
                return None;
            }
            data.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&data).into_owned();
            if let Some((head, body)) = text.split_once("\r\n\r\n") {
                let length = head
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().to_owned())
                    })
                    .and_then(|v| v.parse::<usize>().ok())?;
                if body.len() >= length {
                    return Some(body.to_owned());
                }
            }
        }
    })
    .await;
    read.ok().flatten()
}

/// A DevTools protocol session with one page.
struct Page {
    ws: tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
    next: u64,
}

impl Page {
    async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        let frame = json!({"id": id, "method": method, "params": params});
        self.ws
            .send(Message::Text(frame.to_string().into()))
            .await
            .unwrap();
        loop {
            let message = tokio::time::timeout(Duration::from_secs(30), self.ws.next())
                .await
                .expect("DevTools answers")
                .unwrap()
                .unwrap();
            if let Message::Text(text) = message {
                let value: Value = serde_json::from_str(text.as_str()).unwrap();
                if value["id"] == id {
                    return value["result"].clone();
                }
            }
        }
    }

    /// Evaluates `expression` in the page; its value.
    async fn eval(&mut self, expression: &str) -> Value {
        let result = self
            .call(
                "Runtime.evaluate",
                json!({"expression": expression, "awaitPromise": true, "returnByValue": true}),
            )
            .await;
        result["result"]["value"].clone()
    }

    /// Waits until `expression` is true in the page.
    async fn wait_for(&mut self, what: &str, expression: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.eval(expression).await != json!(true) {
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; page text: {}",
                self.eval("document.body.innerText").await
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
}

/// Finds the message box through the app's shadow roots and focuses it.
const FOCUS_COMPOSER: &str = "(() => { let found = null; const walk = (root) => { \
    for (const el of root.querySelectorAll('textarea')) { \
      if ((el.getAttribute('placeholder') || '').startsWith('Message')) found = el; } \
    for (const el of root.querySelectorAll('*')) if (el.shadowRoot) walk(el.shadowRoot); }; \
    walk(document); if (found) { found.focus(); return true; } return false; })()";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_web_control_ui_connects_and_holds_a_conversation() {
    let Some(ui) = control_ui() else { return };
    let env = Env::start(relaxed()).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let gateway = std::sync::Arc::clone(env.gateway.as_ref().unwrap().gateway());
    let served = pi_gateway::openclaw::serve_with_ui(listener, gateway, Some(ui)).unwrap();
    env.mock
        .push(Script::text("Hello from pi-rs in the Control UI"));

    // Chromium picks its DevTools port itself and writes it to DevToolsActivePort, so no
    // other process can take the port between choosing and binding it.
    let profile = env.dir.path().join("chromium-profile");
    let _browser = Browser(
        Command::new("chromium")
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--window-size=1280,900",
            ])
            .arg("--remote-debugging-port=0")
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    let active_port = profile.join("DevToolsActivePort");
    let port: u16 = loop {
        let written = std::fs::read_to_string(&active_port).unwrap_or_default();
        // The port is whole once the line after it has begun.
        if let Some(Ok(port)) = written.split_once('\n').map(|(first, _)| first.parse()) {
            break port;
        }
        assert!(Instant::now() < deadline, "chromium did not start");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let target = loop {
        if let Some(body) = http_get(port, "/json").await
            && let Ok(targets) = serde_json::from_str::<Vec<Value>>(&body)
            && let Some(page) = targets.iter().find(|t| t["type"] == "page")
        {
            break page["webSocketDebuggerUrl"].as_str().unwrap().to_owned();
        }
        assert!(Instant::now() < deadline, "chromium did not start");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let (ws, _) = tokio_tungstenite::connect_async(target.as_str())
        .await
        .unwrap_or_else(|e| panic!("DevTools page {target}: {e}"));
    let mut page = Page { ws, next: 0 };
    page.call("Page.enable", json!({})).await;
    let url = format!("http://{}/#token={ALICE}", served.addr());
    page.call("Page.navigate", json!({"url": url})).await;

    page.wait_for("the composer", FOCUS_COMPOSER).await;
    page.wait_for(
        "the model to be offered",
        "document.body.innerText.includes('Mock Model')",
    )
    .await;
    assert!(page.eval(FOCUS_COMPOSER).await == json!(true));
    page.call("Input.insertText", json!({"text": "hello from a browser"}))
        .await;
    for kind in ["keyDown", "keyUp"] {
        let mut event =
            json!({"type": kind, "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13});
        if kind == "keyDown" {
            event["text"] = json!("\r");
        }
        page.call("Input.dispatchKeyEvent", event).await;
    }
    page.wait_for(
        "the reply",
        "document.body.innerText.includes('Hello from pi-rs in the Control UI')",
    )
    .await;
    let shot = page
        .call("Page.captureScreenshot", json!({"format": "png"}))
        .await;
    let png = base64::engine::general_purpose::STANDARD
        .decode(shot["data"].as_str().unwrap())
        .unwrap();
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/openclaw-control-ui.png");
    std::fs::write(&out, &png).unwrap();
    println!("Control UI screenshot: {}", out.display());
    // The message went through the gateway to the model.
    let requests = env.mock.requests();
    assert_eq!(requests.len(), 1);
    assert!(
        requests[0]
            .body
            .to_string()
            .contains("hello from a browser")
    );
}
