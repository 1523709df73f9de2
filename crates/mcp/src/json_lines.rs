//! A stdio server's output checked line by line: the first line that is not JSON ends the
//! stream (the client sees the connection close, so waiting calls fail at once instead of
//! timing out) and is kept to say why.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

/// How much of a bad line the reason quotes.
const QUOTED_CHARS: usize = 200;

/// Why the stream ended early, when it did.
pub type Invalid = Arc<Mutex<Option<String>>>;

/// Passes through complete lines that parse as JSON.
pub struct JsonLines<R> {
    inner: R,
    ready: Vec<u8>,
    partial: Vec<u8>,
    /// How much of `partial` is known to hold no newline: each chunk is searched once, so a
    /// large message costs time in proportion to its size (pi 1.5.1).
    searched: usize,
    /// Bytes searched for a newline so far (what the tests measure).
    #[cfg(test)]
    examined: usize,
    chunk: Box<[u8; 8192]>,
    ended: bool,
    invalid: Invalid,
}

impl<R> JsonLines<R> {
    pub fn new(inner: R, invalid: Invalid) -> Self {
        Self {
            inner,
            ready: Vec::new(),
            partial: Vec::new(),
            searched: 0,
            #[cfg(test)]
            examined: 0,
            chunk: Box::new([0; 8192]),
            ended: false,
            invalid,
        }
    }

    /// Moves the complete lines of `partial` to `ready`, stopping at one that is not JSON.
    fn check_lines(&mut self) {
        loop {
            let fresh = &self.partial[self.searched..];
            #[cfg(test)]
            {
                self.examined += fresh
                    .iter()
                    .position(|b| *b == b'\n')
                    .map_or(fresh.len(), |at| at + 1);
            }
            let Some(at) = fresh.iter().position(|b| *b == b'\n') else {
                self.searched = self.partial.len();
                return;
            };
            let end = self.searched + at;
            self.searched = 0;
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            let body = line.trim_ascii();
            if !body.is_empty() && serde_json::from_slice::<serde::de::IgnoredAny>(body).is_err() {
                let text: String = String::from_utf8_lossy(body)
                    .chars()
                    .take(QUOTED_CHARS)
                    .collect();
                if let Ok(mut invalid) = self.invalid.lock() {
                    *invalid = Some(format!("the server sent a line that is not JSON: {text}"));
                }
                self.partial.clear();
                self.ended = true;
                return;
            }
            self.ready.extend_from_slice(&line);
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for JsonLines<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        loop {
            if !this.ready.is_empty() {
                let n = this.ready.len().min(buf.remaining());
                buf.put_slice(&this.ready[..n]);
                this.ready.drain(..n);
                return Poll::Ready(Ok(()));
            }
            if this.ended {
                return Poll::Ready(Ok(()));
            }
            let mut chunk = ReadBuf::new(&mut this.chunk[..]);
            match Pin::new(&mut this.inner).poll_read(cx, &mut chunk) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(())) => {
                    let filled = chunk.filled().len();
                    if filled == 0 {
                        this.ended = true;
                        let rest = std::mem::take(&mut this.partial);
                        this.searched = 0;
                        this.ready.extend_from_slice(&rest);
                    } else {
                        let bytes = chunk.filled().to_vec();
                        this.partial.extend_from_slice(&bytes);
                        this.check_lines();
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn good_lines_pass_and_a_bad_one_ends_the_stream() {
        let input: &[u8] = b"{\"a\":1}\n\n[2]\nnot json\n{\"b\":3}\n";
        let invalid = Invalid::default();
        let mut lines = JsonLines::new(input, invalid.clone());
        let mut out = String::new();
        lines.read_to_string(&mut out).await.unwrap();
        assert_eq!(out, "{\"a\":1}\n\n[2]\n");
        assert_eq!(
            invalid.lock().unwrap().as_deref(),
            Some("the server sent a line that is not JSON: not json")
        );
    }

    /// Hands out the bytes it was given in chunks of at most 8 KiB.
    struct Trickle(Vec<u8>, usize);

    impl AsyncRead for Trickle {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<std::io::Result<()>> {
            let n = (self.0.len() - self.1).min(8192).min(buf.remaining());
            let start = self.1;
            buf.put_slice(&self.0[start..start + n]);
            self.1 += n;
            Poll::Ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn a_large_message_is_searched_once() {
        let text = "z".repeat(4 * 1024 * 1024);
        let message = format!("{{\"text\":\"{text}\"}}\n{{\"b\":1}}\n");
        let mut lines =
            JsonLines::new(Trickle(message.clone().into_bytes(), 0), Invalid::default());
        let mut out = String::new();
        lines.read_to_string(&mut out).await.unwrap();
        assert_eq!(out, message);
        // Every byte once: searching the pending line again on each chunk would be ~1000x.
        assert_eq!(lines.examined, message.len());
    }
}
