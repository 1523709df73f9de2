//! Headless Chromium driven over the DevTools protocol, for tests that need a real browser
//! (pages' scripts, key presses, scrolling, screenshots). Shared with the gateway's tests,
//! which include this file by path.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::Message;

/// The browser binary: `$CHROMIUM`, else `chromium`.
pub fn chromium_binary() -> String {
    std::env::var("CHROMIUM")
        .ok()
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| "chromium".to_owned())
}

/// Whether the browser runs here.
pub fn chromium_available() -> bool {
    Command::new(chromium_binary())
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A running headless Chromium; killed when dropped.
pub struct Browser(Child);

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Browser {
    /// Starts Chromium with its profile in `profile` (a fresh folder) and a `width`×`height`
    /// window; the browser and a DevTools session with its first page (`about:blank`).
    pub async fn launch(profile: &Path, width: u32, height: u32) -> (Browser, Page) {
        // Chromium picks its DevTools port itself and writes it to DevToolsActivePort, so
        // no other process can take the port between choosing and binding it.
        let browser = Browser(
            Command::new(chromium_binary())
                .args(["--headless=new", "--no-sandbox", "--disable-gpu"])
                .arg(format!("--window-size={width},{height}"))
                .arg("--remote-debugging-port=0")
                .arg(format!("--user-data-dir={}", profile.display()))
                .arg("about:blank")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("chromium starts"),
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
                && let Some(url) = page["webSocketDebuggerUrl"].as_str()
            {
                break url.to_owned();
            }
            assert!(Instant::now() < deadline, "chromium did not start");
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let (ws, _) = tokio_tungstenite::connect_async(target.as_str())
            .await
            .unwrap_or_else(|e| panic!("DevTools page {target}: {e}"));
        let mut page = Page { ws, next: 0 };
        page.call("Page.enable", json!({})).await;
        (browser, page)
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
pub struct Page {
    ws: tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
    next: u64,
}

impl Page {
    /// Calls a DevTools method; its result.
    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        let frame = json!({"id": id, "method": method, "params": params});
        self.ws
            .send(Message::Text(frame.to_string().into()))
            .await
            .expect("DevTools takes the call");
        loop {
            let message = tokio::time::timeout(Duration::from_secs(30), self.ws.next())
                .await
                .expect("DevTools answers")
                .expect("DevTools connection open")
                .expect("DevTools frame");
            if let Message::Text(text) = message {
                let value: Value = serde_json::from_str(text.as_str()).expect("DevTools JSON");
                if value["id"] == id {
                    return value["result"].clone();
                }
            }
        }
    }

    /// Evaluates `expression` in the page; its value.
    pub async fn eval(&mut self, expression: &str) -> Value {
        let result = self
            .call(
                "Runtime.evaluate",
                json!({"expression": expression, "awaitPromise": true, "returnByValue": true}),
            )
            .await;
        result["result"]["value"].clone()
    }

    /// Waits until `expression` is true in the page.
    pub async fn wait_for(&mut self, what: &str, expression: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.eval(expression).await != json!(true) {
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; page text: {}",
                self.eval("document.body.innerText").await
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Loads `url` and waits until the document has loaded.
    pub async fn open(&mut self, url: &str) {
        self.call("Page.navigate", json!({"url": url})).await;
        self.wait_for(
            "the page to load",
            &format!(
                "document.readyState === 'complete' && location.href === {}",
                json!(url)
            ),
        )
        .await;
    }

    /// Presses and releases a printable key (`"h"`), as typing it does.
    pub async fn press(&mut self, key: &str) {
        for kind in ["keyDown", "keyUp"] {
            let mut event = json!({"type": kind, "key": key});
            if kind == "keyDown" {
                event["text"] = json!(key);
            }
            self.call("Input.dispatchKeyEvent", event).await;
        }
    }

    /// Clicks the viewport point (`x`, `y`) with the left button.
    pub async fn click_at(&mut self, x: f64, y: f64) {
        for kind in ["mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            )
            .await;
        }
    }

    /// Clicks the middle of the first element matching `selector` (scrolled into view).
    pub async fn click(&mut self, selector: &str) {
        let point = self
            .eval(&format!(
                "(() => {{ const el = document.querySelector({}); if (!el) return null; \
                 el.scrollIntoView({{block: 'center'}}); const r = el.getBoundingClientRect(); \
                 return [r.left + r.width / 2, r.top + r.height / 2]; }})()",
                json!(selector)
            ))
            .await;
        let (Some(x), Some(y)) = (point[0].as_f64(), point[1].as_f64()) else {
            panic!("no element {selector} to click");
        };
        self.click_at(x, y).await;
    }

    /// A PNG screenshot of the viewport.
    pub async fn screenshot(&mut self) -> Vec<u8> {
        use base64::Engine as _;
        let shot = self
            .call("Page.captureScreenshot", json!({"format": "png"}))
            .await;
        base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().unwrap_or_default())
            .expect("screenshot is base64")
    }
}
