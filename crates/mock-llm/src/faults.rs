//! Applying faults and write splitting to a rendered frame sequence, and streaming it.

use std::time::Duration;

use axum::body::Body;
use bytes::{Bytes, BytesMut};

use crate::script::{Fault, LineEnding};
use crate::sse::Frame;
use crate::wire::WireFormat;

/// One step of the response body.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Op {
    /// Write these bytes.
    Write(Bytes),
    /// Pause.
    Sleep(Duration),
    /// Abort the connection (no terminating chunk).
    Abort,
}

/// Turns frames into body operations, applying a streaming fault (HTTP errors are handled earlier).
pub(crate) fn plan(
    frames: Vec<Frame>,
    fault: Option<&Fault>,
    wire: &dyn WireFormat,
    line_ending: LineEnding,
) -> Vec<Op> {
    let render = |frame: &Frame| Op::Write(wire.encode(frame, line_ending));
    let split_at = |after: usize| after.min(frames.len());
    let mut ops: Vec<Op> = Vec::with_capacity(frames.len() + 2);
    match fault {
        None | Some(Fault::HttpError { .. } | Fault::DelayHeaders { .. }) => {
            ops.extend(frames.iter().map(render));
        }
        Some(Fault::DropAfter { after_events }) => {
            ops.extend(frames[..split_at(*after_events)].iter().map(render));
            ops.push(Op::Abort);
        }
        Some(Fault::MalformedAfter { after_events }) => {
            let (head, tail) = frames.split_at(split_at(*after_events));
            ops.extend(head.iter().map(render));
            ops.push(render(&wire.malformed_frame()));
            ops.extend(tail.iter().map(render));
        }
        Some(Fault::Stall { after_events, ms }) => {
            let (head, tail) = frames.split_at(split_at(*after_events));
            ops.extend(head.iter().map(render));
            ops.push(Op::Sleep(Duration::from_millis(*ms)));
            ops.extend(tail.iter().map(render));
        }
        Some(Fault::StreamError {
            after_events,
            message,
        }) => {
            ops.extend(frames[..split_at(*after_events)].iter().map(render));
            ops.extend(wire.stream_error(message.as_deref()).iter().map(render));
        }
        Some(Fault::TruncatedEnd) => {
            if let Some((last, head)) = frames.split_last() {
                ops.extend(head.iter().map(render));
                let bytes = wire.encode(last, line_ending);
                ops.push(Op::Write(bytes.slice(..bytes.len() / 2)));
            }
        }
    }
    ops
}

/// Merges consecutive writes and re-splits them into writes of at most `max` bytes.
pub(crate) fn split_writes(ops: Vec<Op>, max: usize) -> Vec<Op> {
    let max = max.max(1);
    let mut out = Vec::new();
    let mut pending = BytesMut::new();
    let flush = |pending: &mut BytesMut, out: &mut Vec<Op>| {
        let mut all = pending.split().freeze();
        while !all.is_empty() {
            let piece = all.split_to(max.min(all.len()));
            out.push(Op::Write(piece));
        }
    };
    for op in ops {
        match op {
            Op::Write(bytes) => pending.extend_from_slice(&bytes),
            other => {
                flush(&mut pending, &mut out);
                out.push(other);
            }
        }
    }
    flush(&mut pending, &mut out);
    out
}

/// Streams the operations as an HTTP body; `Abort` makes hyper drop the connection.
pub(crate) fn into_body(ops: Vec<Op>) -> Body {
    let stream = futures_util::stream::unfold(ops.into_iter(), |mut ops| async move {
        loop {
            match ops.next()? {
                Op::Write(bytes) => {
                    // Give hyper a chance to flush each write separately.
                    tokio::task::yield_now().await;
                    return Some((Ok(bytes), ops));
                }
                Op::Sleep(duration) => tokio::time::sleep(duration).await,
                Op::Abort => {
                    // Let the frames written so far reach the client before the abort.
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    let err =
                        std::io::Error::new(std::io::ErrorKind::ConnectionAborted, "mock drop");
                    return Some((Err(err), Vec::new().into_iter()));
                }
            }
        }
    });
    Body::from_stream(stream)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::openai_chat::OpenAiChat;

    fn frames(n: usize) -> Vec<Frame> {
        (0..n).map(|i| Frame::data(i.to_string())).collect()
    }

    #[test]
    fn drop_after_truncates_and_aborts() {
        let ops = plan(
            frames(5),
            Some(&Fault::drop_after(2)),
            &OpenAiChat,
            LineEnding::Lf,
        );
        assert_eq!(ops.len(), 3);
        assert_eq!(ops[2], Op::Abort);
    }

    #[test]
    fn split_writes_preserves_bytes() {
        let ops = plan(
            frames(3),
            Some(&Fault::stall(1, 5)),
            &OpenAiChat,
            LineEnding::Crlf,
        );
        let split = split_writes(ops, 3);
        let mut all = Vec::new();
        for op in &split {
            if let Op::Write(b) = op {
                assert!(b.len() <= 3);
                all.extend_from_slice(b);
            }
        }
        assert_eq!(all, b"data: 0\r\n\r\ndata: 1\r\n\r\ndata: 2\r\n\r\n");
        assert!(split.contains(&Op::Sleep(Duration::from_millis(5))));
    }
}
