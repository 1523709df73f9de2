//! The `httpProxy` setting as pi 1.6.0 applies it: with no `HTTP(S)_PROXY` in the
//! environment, a proxy named in the agent dir's `settings.json` carries the model request,
//! and commands the bash tool runs see it as `HTTP_PROXY`; one named in the project's
//! `.pi/settings.json` is not used. A small relay stands in for the proxy and records where
//! each connection went (pi 1.6.0 tunnels with CONNECT, ours forwards the request), and our
//! `pi` and pi 1.6.0 (`PI_TS16`) run the same prompt against the mock model.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Stdio;
use std::sync::{Arc, Mutex};

use mock_llm::{MockServer, Script};
use serde_json::{Value, json};
use support::rpc::Env;
use support::ts16::{pis, program};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// A relay that takes CONNECT tunnels and absolute-form requests and records each target.
async fn relay() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let targets = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&targets);
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let seen = Arc::clone(&seen);
            tokio::spawn(async move {
                let mut client = BufReader::new(client);
                let mut first = String::new();
                if client.read_line(&mut first).await.is_err() {
                    return;
                }
                let mut parts = first.split_whitespace();
                let method = parts.next().unwrap_or_default().to_owned();
                let target = parts.next().unwrap_or_default().to_owned();
                let authority = match method.as_str() {
                    "CONNECT" => target.clone(),
                    _ => target
                        .trim_start_matches("http://")
                        .split('/')
                        .next()
                        .unwrap_or_default()
                        .to_owned(),
                };
                seen.lock().unwrap().push(authority.clone());
                let Ok(mut upstream) = TcpStream::connect(&authority).await else {
                    return;
                };
                if method == "CONNECT" {
                    // Skip the rest of the CONNECT request, then open the tunnel.
                    let mut line = String::new();
                    while client.read_line(&mut line).await.is_ok_and(|n| n > 2) {
                        line.clear();
                    }
                    let _ = client
                        .get_mut()
                        .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                        .await;
                } else if upstream.write_all(first.as_bytes()).await.is_err() {
                    return;
                }
                let buffered = client.buffer().to_vec();
                let _ = upstream.write_all(&buffered).await;
                let mut client = client.into_inner();
                let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
            });
        }
    });
    (url, targets)
}

/// Runs a prompt whose reply runs `echo $HTTP_PROXY`; returns where the relay was asked to
/// go and what the command printed.
async fn through_proxy(wrapper: &Option<std::path::PathBuf>, global: bool) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::tool_call(
        "bash",
        json!({"command": "echo \"proxy=$HTTP_PROXY\""}),
    ));
    server.push(Script::text("Done."));
    let (proxy, targets) = relay().await;
    let mut settings = json!({"retry": {"enabled": false}});
    if global {
        settings["httpProxy"] = json!(proxy);
    }
    let env = Env::new(&server, 128_000, settings);
    if !global {
        std::fs::create_dir_all(env.work.join(".pi")).unwrap();
        std::fs::write(
            env.work.join(".pi/settings.json"),
            json!({"httpProxy": proxy}).to_string(),
        )
        .unwrap();
    }
    let mut command = program(wrapper);
    for name in [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "http_proxy",
        "https_proxy",
        "NO_PROXY",
        "no_proxy",
        "ALL_PROXY",
        "all_proxy",
    ] {
        command.env_remove(name);
    }
    let output = tokio::process::Command::from(command)
        .args(["-p", "Go."])
        .current_dir(&env.work)
        .env("PI_CODING_AGENT_DIR", &env.agent)
        .env("HOME", env.dir.path())
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let requests = server.requests();
    let printed = requests
        .get(1)
        .and_then(|r| r.body["messages"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .find(|m| m["role"] == "tool")
        .map(|m| m["content"].to_string())
        .unwrap_or_default();
    let mock = server.openai_base_url();
    let mock_authority = mock
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let targets = targets.lock().unwrap().clone();
    json!({
        "viaProxy": !targets.is_empty() && targets.iter().all(|t| *t == mock_authority),
        "commandSawProxy": printed.contains(&format!("proxy={proxy}")),
        "requests": requests.len(),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_global_http_proxy_carries_requests_and_reaches_commands_as_pi_16() {
    let mut seen = Vec::new();
    for (who, wrapper) in pis() {
        seen.push((
            who,
            json!({"global": through_proxy(&wrapper, true).await,
                   "project": through_proxy(&wrapper, false).await}),
        ));
    }
    assert_eq!(
        seen[0].1,
        json!({
            "global": {"viaProxy": true, "commandSawProxy": true, "requests": 2},
            "project": {"viaProxy": false, "commandSawProxy": false, "requests": 2},
        })
    );
    for (who, theirs) in &seen[1..] {
        assert_eq!(&seen[0].1, theirs, "ours and {who}");
    }
}
