//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};

pub mod acp;
pub mod cdp;
pub mod codex;
pub mod entries;
pub mod errors;
pub mod ext_host;
pub mod ext_tool;
pub mod git;
pub mod host_relay;
pub mod http_standin;
pub mod images;
pub mod logins;
pub mod mcp;
pub mod nav;
pub mod npm_registry;
pub mod oauth;
pub mod pi_case;
pub mod rpc;
pub mod scripts;
pub mod session;
pub mod shapes;
pub mod tmux;
pub mod ts16;

/// The build's target folder (`CARGO_TARGET_DIR`, else `<repo>/target`), where the install
/// scripts put what the tests run (the TypeScript pis, pi-acp, the session readers).
#[allow(dead_code)]
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"))
}

/// Waits (at most 20 s) for a fixture server to write the port it listens on to
/// `port_file`; returns the port. `what` names the server in the failure.
#[allow(dead_code)]
pub fn wait_for_port_file(port_file: &Path, what: &str) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        if let Ok(port) = std::fs::read_to_string(port_file) {
            return port.trim().to_owned();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the {what} server did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A plain HTTP/1.0 exchange with a local test server (the mock's `/_mock/…` controls): the
/// status and the body.
#[allow(dead_code)]
pub fn http_exchange(
    addr: std::net::SocketAddr,
    method: &str,
    target: &str,
    body: Option<&serde_json::Value>,
) -> (u16, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    let body = body.map(serde_json::Value::to_string).unwrap_or_default();
    let request = format!(
        "{method} {target} HTTP/1.0\r\nHost: mock\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    let (head, body) = reply.split_once("\r\n\r\n").unwrap_or((&reply, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no HTTP status in {head:?}"));
    (status, body.to_owned())
}
