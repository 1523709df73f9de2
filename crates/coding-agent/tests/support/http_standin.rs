//! A tiny HTTP server on 127.0.0.1 standing in for the Radius gateway: it records each
//! request (method, path, headers, raw body) and answers with the next canned reply.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

/// A request as received.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    /// Path and query.
    pub target: String,
    /// Lowercase names.
    pub headers: BTreeMap<String, String>,
    pub body: Vec<u8>,
}

pub struct Standin {
    pub port: u16,
    requests: Arc<Mutex<Vec<Request>>>,
    replies: Arc<Mutex<Vec<(u16, String)>>>,
}

impl Standin {
    /// Starts the server; `replies` are given out in order (the last one repeats).
    pub fn start(replies: Vec<(u16, String)>) -> Standin {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let replies = Arc::new(Mutex::new(replies));
        let (seen, queue) = (Arc::clone(&requests), Arc::clone(&replies));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let Some(request) = read_request(&mut stream) else {
                    continue;
                };
                seen.lock().unwrap().push(request);
                let (status, body) = {
                    let mut queue = queue.lock().unwrap();
                    if queue.len() > 1 {
                        queue.remove(0)
                    } else {
                        queue.first().cloned().unwrap_or((200, "{}".into()))
                    }
                };
                let reason = match status {
                    200 => "OK",
                    400 => "Bad Request",
                    500 => "Internal Server Error",
                    _ => "Status",
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.flush();
            }
        });
        Standin {
            port,
            requests,
            replies,
        }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }

    pub fn clear(&self) {
        self.requests.lock().unwrap().clear();
    }

    /// Replaces the canned replies.
    pub fn set_replies(&self, replies: Vec<(u16, String)>) {
        *self.replies.lock().unwrap() = replies;
    }
}

fn read_request(stream: &mut std::net::TcpStream) -> Option<Request> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let target = parts.next()?.to_owned();
    let mut headers = BTreeMap::new();
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok()?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            headers.insert(name.trim().to_lowercase(), value.trim().to_owned());
        }
    }
    let mut body = Vec::new();
    if let Some(len) = headers
        .get("content-length")
        .and_then(|l| l.parse::<usize>().ok())
    {
        body.resize(len, 0);
        reader.read_exact(&mut body).ok()?;
    } else if headers
        .get("transfer-encoding")
        .is_some_and(|t| t.contains("chunked"))
    {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).ok()?;
            let size = usize::from_str_radix(size.trim(), 16).ok()?;
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk).ok()?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    }
    Some(Request {
        method,
        target,
        headers,
        body,
    })
}

/// The parts of a `multipart/form-data` body: (headers lines, content).
pub fn multipart_parts(content_type: &str, body: &[u8]) -> Vec<(Vec<String>, String)> {
    let boundary = content_type
        .split("boundary=")
        .nth(1)
        .unwrap()
        .trim_matches('"');
    let text = String::from_utf8_lossy(body).into_owned();
    let delimiter = format!("--{boundary}");
    text.split(&delimiter)
        .skip(1)
        .filter(|part| !part.starts_with("--"))
        .map(|part| {
            let part = part.strip_prefix("\r\n").unwrap_or(part);
            let part = part.strip_suffix("\r\n").unwrap_or(part);
            let (head, content) = part.split_once("\r\n\r\n").unwrap_or((part, ""));
            (
                head.split("\r\n").map(str::to_owned).collect(),
                content.to_owned(),
            )
        })
        .collect()
}
