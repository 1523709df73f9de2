//! OpenClaw's web Control UI (the `openclaw` package's own `dist/control-ui`, installed by
//! `scripts/install-openclaw-client.sh`) served by pi-gateway's OpenClaw listener and
//! driven in headless Chromium over the DevTools protocol: it connects with the token,
//! shows the session's history, sends a message and shows the model's reply. The
//! screenshot is written to `target/openclaw-control-ui.png`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

/// The DevTools client the coding agent's browser tests use too.
#[path = "../../coding-agent/tests/support/cdp.rs"]
mod cdp;
mod support;

use std::path::{Path, PathBuf};

use cdp::{Browser, chromium_available};
use mock_llm::Script;
use serde_json::json;
use support::{ALICE, Env, relaxed};

fn control_ui() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/openclaw-client/pkg/node_modules/openclaw/dist/control-ui");
    let found = dir.join("index.html").exists() && chromium_available();
    if !found {
        assert!(
            std::env::var_os("PI_TEST_REQUIRE_OPENCLAW").is_none(),
            "the Control UI (scripts/install-openclaw-client.sh) or chromium is missing"
        );
        eprintln!("the Control UI or chromium is not installed: skipped");
    }
    found.then_some(dir)
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

    let (_browser, mut page) =
        Browser::launch(&env.dir.path().join("chromium-profile"), 1280, 900).await;
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
    let png = page.screenshot().await;
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
