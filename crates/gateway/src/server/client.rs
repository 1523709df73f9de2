//! A small gateway client over tokio-tungstenite: JSON requests and responses, with the
//! events that arrive meanwhile kept in order. Used by `pi-gateway sessions …`, tests and
//! the load benchmark.

use anyhow::{Context, anyhow, bail};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// A connection to a gateway.
pub struct Client {
    socket: WebSocketStream<MaybeTlsStream<TcpStream>>,
    next_id: u64,
    /// Frames that arrived while waiting for responses (events, in order).
    pub events: Vec<Value>,
}

/// `text` with every byte outside the URL-safe set as `%XX`.
fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

impl Client {
    /// Connects to `ws://HOST:PORT/PATH`, passing `token` as the `token` query parameter.
    pub async fn connect(url: &str, token: Option<&str>) -> anyhow::Result<Client> {
        if !url.starts_with("ws://") {
            bail!("only ws:// URLs are supported: {url}");
        }
        let mut url = url.to_owned();
        if let Some(token) = token {
            url.push(if url.contains('?') { '&' } else { '?' });
            url.push_str("token=");
            url.push_str(&percent_encode(token));
        }
        // tungstenite zero-fills its read buffer before every read; at the 128 KiB
        // default that is most of a busy client's work. Longer frames still arrive whole.
        let config = WebSocketConfig::default().read_buffer_size(8 * 1024);
        let (socket, _) =
            tokio_tungstenite::connect_async_with_config(url.as_str(), Some(config), true)
                .await
                .map_err(|e| anyhow!("cannot connect to the gateway: {e}"))?;
        Ok(Client {
            socket,
            next_id: 1,
            events: Vec::new(),
        })
    }

    /// Sends one text frame.
    pub async fn send_text(&mut self, text: &str) -> anyhow::Result<()> {
        self.socket
            .send(Message::text(text))
            .await
            .context("cannot send to the gateway")
    }

    /// The next text message; `None` when the connection closed.
    pub async fn recv_text(&mut self) -> anyhow::Result<Option<String>> {
        while let Some(message) = self.socket.next().await {
            match message {
                Ok(Message::Text(text)) => return Ok(Some(text.as_str().to_owned())),
                Ok(Message::Binary(bytes)) => {
                    return Ok(Some(String::from_utf8(bytes.to_vec())?));
                }
                Ok(Message::Close(_)) => return Ok(None),
                Ok(_) => {}
                Err(e) => return Err(anyhow!("connection to the gateway failed: {e}")),
            }
        }
        Ok(None)
    }

    /// The next JSON frame.
    pub async fn recv(&mut self) -> anyhow::Result<Option<Value>> {
        match self.recv_text().await? {
            Some(text) => Ok(Some(serde_json::from_str(&text)?)),
            None => Ok(None),
        }
    }

    /// Sends a request without waiting; returns its id.
    pub async fn send(&mut self, method: &str, params: Value) -> anyhow::Result<u64> {
        let id = self.next_id;
        self.next_id += 1;
        let request = json!({ "id": id, "method": method, "params": params });
        self.send_text(&request.to_string()).await?;
        Ok(id)
    }

    /// Sends a request and waits for its response; events meanwhile go to [`Self::events`].
    pub async fn call(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        let id = self.send(method, params).await?;
        self.response(id).await
    }

    /// Waits for the response to request `id`; other frames go to [`Self::events`].
    pub async fn response(&mut self, id: u64) -> anyhow::Result<Value> {
        loop {
            let Some(frame) = self.recv().await? else {
                bail!("the gateway closed the connection");
            };
            if frame["type"] == "response" && (frame["id"] == id || frame["id"].is_null()) {
                if frame["ok"] == true {
                    return Ok(frame["result"].clone());
                }
                bail!(
                    "{}: {}",
                    frame["error"]["code"].as_str().unwrap_or("error"),
                    frame["error"]["message"].as_str().unwrap_or("")
                );
            }
            self.events.push(frame);
        }
    }

    /// Closes the connection.
    pub async fn close(mut self) {
        let _ = self.socket.close(None).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_percent_encoded() {
        assert_eq!(percent_encode("a+b=c d"), "a%2Bb%3Dc%20d");
        assert_eq!(percent_encode("plain-Token_1.~"), "plain-Token_1.~");
    }
}
