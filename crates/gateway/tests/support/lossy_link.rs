//! A TCP link between a node and its NATS server that can lose what the node sends: while
//! it is losing, the node's bytes are read and thrown away (kept here, to see what was
//! lost); `cut` then closes every connection through it, as a route or a link that half
//! died does in the end, and the node reconnects.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

#[derive(Default)]
struct State {
    losing: bool,
    lost: Vec<u8>,
    cut: CancellationToken,
}

/// The link; its address is `url()`.
pub struct LossyLink {
    port: u16,
    state: Arc<Mutex<State>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for LossyLink {
    fn drop(&mut self) {
        self.task.abort();
        self.state.lock().unwrap().cut.cancel();
    }
}

impl LossyLink {
    /// Listens on loopback and forwards each connection to `upstream` (`host:port`).
    pub async fn start(upstream: String) -> LossyLink {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(Mutex::new(State::default()));
        let shared = Arc::clone(&state);
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = TcpStream::connect(&upstream).await else {
                    continue;
                };
                let cut = shared.lock().unwrap().cut.clone();
                tokio::spawn(forward(client, server, Arc::clone(&shared), cut));
            }
        });
        LossyLink { port, state, task }
    }

    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Starts throwing away what nodes send.
    pub fn lose(&self) {
        let mut state = self.state.lock().unwrap();
        state.losing = true;
        state.lost.clear();
    }

    /// Whether the bytes lost so far contain `text`.
    pub fn lost(&self, text: &str) -> bool {
        let state = self.state.lock().unwrap();
        String::from_utf8_lossy(&state.lost).contains(text)
    }

    /// Closes every connection through the link, and forwards new ones whole again.
    pub fn cut(&self) {
        let mut state = self.state.lock().unwrap();
        state.losing = false;
        state.cut.cancel();
        state.cut = CancellationToken::new();
    }
}

/// Copies one connection both ways until either side ends or the link is cut.
async fn forward(
    client: TcpStream,
    server: TcpStream,
    state: Arc<Mutex<State>>,
    cut: CancellationToken,
) {
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    let up = async {
        let mut buffer = vec![0u8; 16 * 1024];
        loop {
            let n = match client_read.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            let losing = {
                let mut state = state.lock().unwrap();
                if state.losing {
                    state.lost.extend_from_slice(&buffer[..n]);
                }
                state.losing
            };
            if !losing && server_write.write_all(&buffer[..n]).await.is_err() {
                return;
            }
        }
    };
    let down = tokio::io::copy(&mut server_read, &mut client_write);
    tokio::select! {
        _ = up => {}
        _ = down => {}
        _ = cut.cancelled() => {}
    }
}
