//! A request body: bytes, or JSON written while it is sent. A body carrying a big transcript
//! is measured first (its length goes in the header), then written on a thread of its own in
//! chunks as the connection takes them, so it is never held whole.

use std::io::{self, Write};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Frame, SizeHint};
use tokio::sync::mpsc;

/// Writes a body's JSON; called once to measure it and once per attempt to send it.
pub type WriteBody = Arc<dyn Fn(&mut dyn Write) -> io::Result<()> + Send + Sync>;

/// Bodies at least this long are written while they are sent.
pub const STREAM_MIN_BYTES: u64 = 8 << 20;

const CHUNK_BYTES: usize = 256 * 1024;

/// What a request sends.
#[derive(Clone)]
pub enum RequestBody {
    Bytes(Bytes),
    /// `len` bytes that `write` produces.
    Written {
        len: u64,
        write: WriteBody,
    },
}

impl RequestBody {
    /// A body `write` produces: measured first, then written out now when it is short, or
    /// while it is sent when it is long.
    pub fn from_writer(write: WriteBody) -> io::Result<Self> {
        let mut count = Count(0);
        let (measured, left_out) = crate::types::stored_text::measuring(|| write(&mut count));
        measured?;
        let len = count.0 + left_out as u64;
        if len < STREAM_MIN_BYTES {
            let mut bytes = Vec::with_capacity(len as usize);
            write(&mut bytes)?;
            return Ok(Self::Bytes(bytes.into()));
        }
        Ok(Self::Written { len, write })
    }

    /// The body's length in bytes.
    pub fn len(&self) -> u64 {
        match self {
            Self::Bytes(bytes) => bytes.len() as u64,
            Self::Written { len, .. } => *len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of a body held whole.
    pub fn bytes(&self) -> Option<&Bytes> {
        match self {
            Self::Bytes(bytes) => Some(bytes),
            Self::Written { .. } => None,
        }
    }

    /// The body for one attempt to send it; a written body starts its writer.
    pub fn to_reqwest(&self) -> reqwest::Body {
        match self {
            Self::Bytes(bytes) => reqwest::Body::from(bytes.clone()),
            Self::Written { len, write } => {
                let (sender, receiver) = mpsc::channel(4);
                let write = write.clone();
                std::thread::spawn(move || {
                    let mut chunks = Chunks {
                        sender,
                        buffer: Vec::with_capacity(CHUNK_BYTES),
                    };
                    let written = write(&mut chunks).and_then(|()| chunks.flush());
                    if let Err(error) = written {
                        // The connection is gone, or the body could not be written: tell the
                        // receiver (if it still listens) so the request fails.
                        let _ = chunks.sender.blocking_send(Err(error));
                    }
                });
                reqwest::Body::wrap(Streamed {
                    receiver,
                    left: *len,
                })
            }
        }
    }
}

impl From<Bytes> for RequestBody {
    fn from(bytes: Bytes) -> Self {
        Self::Bytes(bytes)
    }
}

impl From<Vec<u8>> for RequestBody {
    fn from(bytes: Vec<u8>) -> Self {
        Self::Bytes(bytes.into())
    }
}

struct Count(u64);

impl Write for Count {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0 += bytes.len() as u64;
        Ok(bytes.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Sends what is written in chunks; fails once the body's receiver is gone.
struct Chunks {
    sender: mpsc::Sender<io::Result<Bytes>>,
    buffer: Vec<u8>,
}

impl Write for Chunks {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        // A chunk is sent before it would outgrow its buffer (never copied to a bigger one);
        // a long write goes out as a chunk of its own.
        if self.buffer.len() + bytes.len() > CHUNK_BYTES {
            self.flush()?;
        }
        if bytes.len() >= CHUNK_BYTES {
            return self
                .send(Bytes::copy_from_slice(bytes))
                .map(|()| bytes.len());
        }
        self.buffer.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let chunk = std::mem::replace(&mut self.buffer, Vec::with_capacity(CHUNK_BYTES));
        self.send(chunk.into())
    }
}

impl Chunks {
    fn send(&self, chunk: Bytes) -> io::Result<()> {
        self.sender
            .blocking_send(Ok(chunk))
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the request was dropped"))
    }
}

/// The receiving end, as an HTTP body of known length.
struct Streamed {
    receiver: mpsc::Receiver<io::Result<Bytes>>,
    left: u64,
}

impl http_body::Body for Streamed {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        match self.receiver.poll_recv(cx) {
            Poll::Ready(Some(Ok(chunk))) => {
                self.left = self.left.saturating_sub(chunk.len() as u64);
                Poll::Ready(Some(Ok(Frame::data(chunk))))
            }
            Poll::Ready(Some(Err(error))) => Poll::Ready(Some(Err(error))),
            Poll::Ready(None) if self.left > 0 => Poll::Ready(Some(Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the request body ended early",
            )))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.left)
    }
}
