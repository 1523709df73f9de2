//! The router's event stream (`GET /models/sse`): load stages and download progress as
//! they happen. It only speeds up what `/llama` shows; polling `GET /models` stays the
//! authority, so a router without the stream works the same, only with fewer updates.

use futures_util::StreamExt;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::client::LlamaClient;

/// One event: which model, what happened, and its data.
#[derive(Debug, Clone, PartialEq)]
pub struct RouterEvent {
    pub model: String,
    pub event: String,
    pub data: Value,
}

/// Reads the `data:` lines of one SSE frame as an event; malformed ones are skipped.
fn parse_frame(frame: &str) -> Option<RouterEvent> {
    let data: Vec<&str> = frame
        .split('\n')
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim_start)
        .collect();
    if data.is_empty() {
        return None;
    }
    let value: Value = serde_json::from_str(&data.join("\n")).ok()?;
    Some(RouterEvent {
        model: value.get("model")?.as_str()?.to_owned(),
        event: value.get("event")?.as_str()?.to_owned(),
        data: value.get("data").cloned().unwrap_or(Value::Null),
    })
}

/// Splits complete frames off `buffer`, leaving a partial one.
fn take_frames(buffer: &mut String) -> Vec<RouterEvent> {
    let mut events = Vec::new();
    while let Some(end) = buffer.find("\n\n") {
        let frame: String = buffer.drain(..end + 2).collect();
        events.extend(parse_frame(&frame));
    }
    events
}

/// Follows the event stream until `stop` fires or the stream ends; events arrive on the
/// returned channel. Failures end it quietly.
pub fn watch(client: LlamaClient, stop: CancellationToken) -> mpsc::UnboundedReceiver<RouterEvent> {
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let follow = async {
            let url = reqwest::Url::parse(&format!("{}/models/sse", client.server_url())).ok()?;
            let response = client
                .builder(reqwest::Method::GET, url, None)
                .ok()?
                .send()
                .await
                .ok()?;
            if !response.status().is_success() {
                return None;
            }
            let mut stream = response.bytes_stream();
            let mut pending: Vec<u8> = Vec::new();
            let mut buffer = String::new();
            while let Some(Ok(chunk)) = stream.next().await {
                pending.extend_from_slice(&chunk);
                // Keep an incomplete UTF-8 sequence for the next chunk.
                let valid = match std::str::from_utf8(&pending) {
                    Ok(text) => text.len(),
                    Err(e) => e.valid_up_to(),
                };
                let text: String = String::from_utf8_lossy(&pending[..valid]).into_owned();
                pending.drain(..valid);
                buffer.push_str(&text.replace("\r\n", "\n"));
                for event in take_frames(&mut buffer) {
                    if tx.send(event).is_err() {
                        return None;
                    }
                }
            }
            Some(())
        };
        tokio::select! {
            _ = follow => {}
            () = stop.cancelled() => {}
        }
    });
    rx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_become_events() {
        let mut buffer = String::from(
            "event: x\ndata: {\"model\":\"m\",\"event\":\"model_status\",\"data\":{\"status\":\"loaded\"}}\n\n: ping\n\ndata: not json\n\ndata: {\"model\":\"m\",",
        );
        let events = take_frames(&mut buffer);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].event, "model_status");
        assert_eq!(events[0].data["status"], "loaded");
        assert_eq!(buffer, "data: {\"model\":\"m\",");
        buffer.push_str("\"event\":\"download_finished\"}\n\n");
        let events = take_frames(&mut buffer);
        assert_eq!(events[0].event, "download_finished");
        assert_eq!(events[0].data, Value::Null);
    }
}
