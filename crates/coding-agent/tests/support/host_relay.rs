//! A forward proxy standing in for DNS: every connection goes to 127.0.0.1 at the port the
//! client asked for, whatever the host name, so a pi can be pointed at a real provider host
//! name (`res.services.ai.azure.com:<mock port>`) and still reach the mock. It takes CONNECT
//! tunnels (pi 1.6.0) and absolute-form requests (ours) and records, per connection, the
//! host asked for and the first request line in origin form (`POST /path?query`).
#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// One proxied request: the host the client named and its request line in origin form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relayed {
    pub host: String,
    pub request_line: String,
}

/// A running relay: its `http://127.0.0.1:<port>` URL and what it forwarded.
pub struct HostRelay {
    pub url: String,
    seen: Arc<Mutex<Vec<Relayed>>>,
}

impl HostRelay {
    /// What the relay forwarded so far, in order.
    pub fn seen(&self) -> Vec<Relayed> {
        self.seen.lock().unwrap().clone()
    }

    /// Forgets what it forwarded (between runs).
    pub fn clear(&self) {
        self.seen.lock().unwrap().clear();
    }
}

/// Splits `host:port` (the port defaults to 80).
fn host_and_port(authority: &str) -> (String, u16) {
    match authority.rsplit_once(':') {
        Some((host, port)) => (host.to_owned(), port.parse().unwrap_or(80)),
        None => (authority.to_owned(), 80),
    }
}

/// Starts a relay on a free local port.
pub async fn start() -> HostRelay {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let record = Arc::clone(&record);
            tokio::spawn(async move {
                let _ = relay(client, record).await;
            });
        }
    });
    HostRelay { url, seen }
}

/// Serves one client connection.
async fn relay(client: TcpStream, record: Arc<Mutex<Vec<Relayed>>>) -> std::io::Result<()> {
    let mut client = BufReader::new(client);
    let mut first = String::new();
    client.read_line(&mut first).await?;
    let mut parts = first.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let target = parts.next().unwrap_or_default().to_owned();
    let version = parts.next().unwrap_or("HTTP/1.1").to_owned();
    let (authority, request_line) = if method == "CONNECT" {
        // Drop the CONNECT request's headers, open the tunnel, then read the tunnelled
        // request's own first line (plain HTTP to an http:// base URL).
        let mut line = String::new();
        while client.read_line(&mut line).await? > 2 {
            line.clear();
        }
        client
            .get_mut()
            .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
            .await?;
        let mut inner = String::new();
        client.read_line(&mut inner).await?;
        (target, inner)
    } else {
        let rest = target.trim_start_matches("http://");
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let path = if path.is_empty() { "/" } else { path };
        (
            authority.to_owned(),
            format!("{method} {path} {version}\r\n"),
        )
    };
    let (host, port) = host_and_port(&authority);
    let origin_form = request_line
        .split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ");
    record.lock().unwrap().push(Relayed {
        host,
        request_line: origin_form,
    });
    let mut upstream = TcpStream::connect(("127.0.0.1", port)).await?;
    upstream.write_all(request_line.as_bytes()).await?;
    upstream.write_all(client.buffer()).await?;
    let mut client = client.into_inner();
    tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
    Ok(())
}
