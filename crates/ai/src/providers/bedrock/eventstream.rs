//! The AWS event-stream binary framing (`application/vnd.amazon.eventstream`) and the
//! streaming driver that feeds its messages to the Bedrock decoder.
//!
//! A message is `total length (u32) | headers length (u32) | prelude CRC32 | headers |
//! payload | message CRC32`, all big-endian; both checksums are verified.

use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use futures_core::Stream;
use futures_util::StreamExt;

use super::decode::Decoder;
use crate::assembler::Assembler;
use crate::event_stream::AssistantMessageEventStream;
use crate::http::{self, ErrorStyle, HttpRequest, RetryPolicy};
use crate::providers::strict_limits;
use crate::sse::{Read, StreamControl, Watched};
use crate::types::{AssistantMessageEvent, Model};

/// Prelude: total length, headers length, prelude CRC.
const PRELUDE_LEN: usize = 12;
/// Prelude plus the trailing message CRC.
const MIN_MESSAGE_LEN: usize = PRELUDE_LEN + 4;
/// The largest message accepted (AWS allows 16 MiB of payload plus 128 KiB of headers).
const MAX_MESSAGE_LEN: usize = 16 * 1024 * 1024 + 128 * 1024 + MIN_MESSAGE_LEN;

const CRC_TABLE: [u32; 256] = crc_table();

const fn crc_table() -> [u32; 256] {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
}

/// CRC-32 (IEEE 802.3, as zlib computes it) of `data`.
pub fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in data {
        crc = CRC_TABLE[((crc ^ u32::from(byte)) & 0xFF) as usize] ^ (crc >> 8);
    }
    !crc
}

/// Why bytes are not a valid event-stream message (texts as the AWS SDK words them).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodecError {
    #[error(
        "The prelude checksum specified in the message ({expected}) does not match the calculated CRC32 checksum ({actual})"
    )]
    PreludeChecksum { expected: u32, actual: u32 },
    #[error("The message checksum ({actual}) did not match the expected value of {expected}")]
    MessageChecksum { expected: u32, actual: u32 },
    #[error("Provided message too short to accommodate event stream message overhead")]
    TooShort,
    #[error("Event stream message of {0} bytes exceeds the maximum message size")]
    TooLong(usize),
    #[error("Invalid event stream message: {0}")]
    Malformed(&'static str),
    #[error("Truncated event message received.")]
    Truncated,
}

/// A typed header value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderValue {
    Bool(bool),
    Byte(i8),
    Short(i16),
    Int(i32),
    Long(i64),
    Bytes(Bytes),
    String(String),
    /// Milliseconds since the Unix epoch.
    Timestamp(i64),
    Uuid([u8; 16]),
}

/// One message: its headers and its payload.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Message {
    pub headers: Vec<(String, HeaderValue)>,
    pub payload: Bytes,
}

impl Message {
    /// A message with string headers.
    pub fn new(headers: &[(&str, &str)], payload: impl Into<Bytes>) -> Self {
        Self {
            headers: headers
                .iter()
                .map(|(n, v)| ((*n).to_owned(), HeaderValue::String((*v).to_owned())))
                .collect(),
            payload: payload.into(),
        }
    }

    /// The value of a string header.
    pub fn header_str(&self, name: &str) -> Option<&str> {
        self.headers.iter().find_map(|(n, v)| match v {
            HeaderValue::String(s) if n == name => Some(s.as_str()),
            _ => None,
        })
    }

    /// The wire bytes of this message, with both checksums.
    pub fn encode(&self) -> Vec<u8> {
        let mut headers = Vec::new();
        for (name, value) in &self.headers {
            let name = name.as_bytes();
            headers.push(name.len().min(255) as u8);
            headers.extend_from_slice(&name[..name.len().min(255)]);
            match value {
                HeaderValue::Bool(true) => headers.push(0),
                HeaderValue::Bool(false) => headers.push(1),
                HeaderValue::Byte(v) => {
                    headers.push(2);
                    headers.extend_from_slice(&v.to_be_bytes());
                }
                HeaderValue::Short(v) => {
                    headers.push(3);
                    headers.extend_from_slice(&v.to_be_bytes());
                }
                HeaderValue::Int(v) => {
                    headers.push(4);
                    headers.extend_from_slice(&v.to_be_bytes());
                }
                HeaderValue::Long(v) => {
                    headers.push(5);
                    headers.extend_from_slice(&v.to_be_bytes());
                }
                HeaderValue::Bytes(v) => {
                    let len = v.len().min(usize::from(u16::MAX));
                    headers.push(6);
                    headers.extend_from_slice(&(len as u16).to_be_bytes());
                    headers.extend_from_slice(&v[..len]);
                }
                HeaderValue::String(v) => {
                    let len = v.len().min(usize::from(u16::MAX));
                    headers.push(7);
                    headers.extend_from_slice(&(len as u16).to_be_bytes());
                    headers.extend_from_slice(&v.as_bytes()[..len]);
                }
                HeaderValue::Timestamp(v) => {
                    headers.push(8);
                    headers.extend_from_slice(&v.to_be_bytes());
                }
                HeaderValue::Uuid(v) => {
                    headers.push(9);
                    headers.extend_from_slice(v);
                }
            }
        }
        let total = MIN_MESSAGE_LEN + headers.len() + self.payload.len();
        let mut out = Vec::with_capacity(total);
        out.extend_from_slice(&(total as u32).to_be_bytes());
        out.extend_from_slice(&(headers.len() as u32).to_be_bytes());
        let prelude_crc = crc32(&out);
        out.extend_from_slice(&prelude_crc.to_be_bytes());
        out.extend_from_slice(&headers);
        out.extend_from_slice(&self.payload);
        let message_crc = crc32(&out);
        out.extend_from_slice(&message_crc.to_be_bytes());
        out
    }

    /// Decodes exactly one message, verifying both checksums.
    pub fn decode(frame: &[u8]) -> Result<Message, CodecError> {
        Self::decode_frame(Bytes::copy_from_slice(frame))
    }

    /// [`Message::decode`] without copying: the payload is a slice of `frame`.
    fn decode_frame(frame: Bytes) -> Result<Message, CodecError> {
        let (total, headers_len) = check_prelude(&frame)?;
        if frame.len() != total {
            return Err(CodecError::Malformed(
                "reported message length does not match received message length",
            ));
        }
        let body_end = total - 4;
        let expected = u32::from_be_bytes([
            frame[body_end],
            frame[body_end + 1],
            frame[body_end + 2],
            frame[body_end + 3],
        ]);
        let actual = crc32(&frame[..body_end]);
        if expected != actual {
            return Err(CodecError::MessageChecksum { expected, actual });
        }
        let headers_end = PRELUDE_LEN + headers_len;
        let headers = parse_headers(&frame[PRELUDE_LEN..headers_end])?;
        let payload = frame.slice(headers_end..body_end);
        Ok(Message { headers, payload })
    }
}

/// Validates the prelude (at least 12 bytes available) and returns `(total, headers_len)`.
fn check_prelude(bytes: &[u8]) -> Result<(usize, usize), CodecError> {
    if bytes.len() < PRELUDE_LEN {
        return Err(CodecError::TooShort);
    }
    let word =
        |at: usize| u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    let expected = word(8);
    let actual = crc32(&bytes[..8]);
    if expected != actual {
        return Err(CodecError::PreludeChecksum { expected, actual });
    }
    let total = word(0) as usize;
    let headers_len = word(4) as usize;
    if total < MIN_MESSAGE_LEN {
        return Err(CodecError::TooShort);
    }
    if total > MAX_MESSAGE_LEN {
        return Err(CodecError::TooLong(total));
    }
    if headers_len > total - MIN_MESSAGE_LEN {
        return Err(CodecError::Malformed("headers longer than the message"));
    }
    Ok((total, headers_len))
}

fn parse_headers(mut bytes: &[u8]) -> Result<Vec<(String, HeaderValue)>, CodecError> {
    fn take<'a>(bytes: &mut &'a [u8], n: usize) -> Result<&'a [u8], CodecError> {
        if bytes.len() < n {
            return Err(CodecError::Malformed("truncated header"));
        }
        let (head, tail) = bytes.split_at(n);
        *bytes = tail;
        Ok(head)
    }
    fn array<const N: usize>(bytes: &mut &[u8]) -> Result<[u8; N], CodecError> {
        let mut out = [0u8; N];
        out.copy_from_slice(take(bytes, N)?);
        Ok(out)
    }
    let mut headers = Vec::new();
    while !bytes.is_empty() {
        let name_len = usize::from(take(&mut bytes, 1)?[0]);
        let name = std::str::from_utf8(take(&mut bytes, name_len)?)
            .map_err(|_| CodecError::Malformed("header name is not UTF-8"))?
            .to_owned();
        let value = match take(&mut bytes, 1)?[0] {
            0 => HeaderValue::Bool(true),
            1 => HeaderValue::Bool(false),
            2 => HeaderValue::Byte(i8::from_be_bytes(array(&mut bytes)?)),
            3 => HeaderValue::Short(i16::from_be_bytes(array(&mut bytes)?)),
            4 => HeaderValue::Int(i32::from_be_bytes(array(&mut bytes)?)),
            5 => HeaderValue::Long(i64::from_be_bytes(array(&mut bytes)?)),
            6 => {
                let len = usize::from(u16::from_be_bytes(array(&mut bytes)?));
                HeaderValue::Bytes(Bytes::copy_from_slice(take(&mut bytes, len)?))
            }
            7 => {
                let len = usize::from(u16::from_be_bytes(array(&mut bytes)?));
                let raw = take(&mut bytes, len)?;
                HeaderValue::String(
                    std::str::from_utf8(raw)
                        .map_err(|_| CodecError::Malformed("header value is not UTF-8"))?
                        .to_owned(),
                )
            }
            8 => HeaderValue::Timestamp(i64::from_be_bytes(array(&mut bytes)?)),
            9 => HeaderValue::Uuid(array(&mut bytes)?),
            _ => return Err(CodecError::Malformed("unknown header value type")),
        };
        headers.push((name, value));
    }
    Ok(headers)
}

/// Splits a byte stream into messages, whatever the chunk boundaries.
#[derive(Debug, Default)]
pub struct MessageDecoder {
    buf: BytesMut,
    /// `(total, headers_len)` of the message being received, once its prelude checked out.
    pending: Option<usize>,
}

impl MessageDecoder {
    /// An empty decoder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends received bytes.
    pub fn push(&mut self, chunk: &[u8]) {
        self.buf.extend_from_slice(chunk);
    }

    /// The next complete message, `None` when more bytes are needed. The prelude checksum is
    /// verified as soon as it arrives, so a corrupt length never makes the decoder wait.
    pub fn next_message(&mut self) -> Result<Option<Message>, CodecError> {
        let total = match self.pending {
            Some(total) => total,
            None => {
                if self.buf.len() < PRELUDE_LEN {
                    return Ok(None);
                }
                let (total, _) = check_prelude(&self.buf)?;
                self.pending = Some(total);
                total
            }
        };
        if self.buf.len() < total {
            return Ok(None);
        }
        let frame = self.buf.split_to(total).freeze();
        self.pending = None;
        Message::decode_frame(frame).map(Some)
    }

    /// Checks that the stream ended on a message boundary.
    pub fn finish(&self) -> Result<(), CodecError> {
        if self.buf.has_remaining() {
            Err(CodecError::Truncated)
        } else {
            Ok(())
        }
    }
}

/// An event as the AWS SDK yields it, `{"<event type>": payload}` without the `p` padding
/// field; `None` for exceptions and messages that are not events.
fn sdk_item(message: &Message) -> Option<serde_json::Value> {
    if message.header_str(":message-type").unwrap_or("event") != "event" {
        return None;
    }
    let kind = message.header_str(":event-type")?;
    let mut payload: serde_json::Value = serde_json::from_slice(&message.payload).ok()?;
    if let Some(fields) = payload.as_object_mut() {
        fields.remove("p");
    }
    Some(serde_json::json!({ kind: payload }))
}

/// Sends `request` and streams the event-stream response through `decoder`.
pub(crate) fn run(
    model: Model,
    request: Result<HttpRequest, String>,
    retry: Option<strict_limits::Retry<HttpRequest>>,
    policy: RetryPolicy,
    control: StreamControl,
    decoder: Decoder,
    scoped: Option<std::sync::Arc<std::collections::BTreeMap<String, String>>>,
) -> AssistantMessageEventStream {
    let events = async_stream::stream! {
        let request = match request {
            Ok(request) => request,
            Err(message) => {
                yield Assembler::new(&model).fail(false, message);
                return;
            }
        };
        let style = ErrorStyle::Bedrock;
        let scoped = scoped.as_deref();
        let mut sent = http::send_scoped(&request, scoped, policy, &control.cancel, style).await;
        // Claude's refusal of a strict tool set over its limits: once more, plain.
        let mut note = None;
        if let (Err(failure), Some(retry)) = (&sent, retry)
            && let Some((rebuilt, diagnostic)) = retry.after(failure)
        {
            note = Some(diagnostic);
            match rebuilt {
                Ok(request) => {
                    sent = http::send_scoped(&request, scoped, policy, &control.cancel, style).await
                }
                Err(message) => {
                    let mut event = Assembler::new(&model).fail(false, message);
                    strict_limits::attach_note(&mut event, note.as_ref());
                    yield event;
                    return;
                }
            }
        }
        let response = match sent {
            Ok(response) => {
                control.report_response(&response);
                response
            }
            Err(failure) => {
                let diagnostic = (!failure.aborted).then(|| failure_diagnostic(&failure)).flatten();
                let mut event = Assembler::new(&model).fail(failure.aborted, failure.message);
                if let Some(diagnostic) = diagnostic {
                    crate::providers::common::attach_diagnostic(&mut event, diagnostic);
                }
                strict_limits::attach_note(&mut event, note.as_ref());
                yield event;
                return;
            }
        };
        let mut events = Box::pin(decode(model, response.bytes_stream(), control, decoder));
        while let Some(mut event) = events.next().await {
            strict_limits::attach_note(&mut event, note.as_ref());
            yield event;
        }
    };
    AssistantMessageEventStream::new(events.map(|mut event| {
        super::decode::add_data_retention_hint(&mut event);
        event
    }))
}

/// pi-ai 1.6's `bedrock_response_failure` diagnostic of a failed request: the HTTP status,
/// the modeled exception (a name ending in `Exception`) and the AWS request id, each when
/// known (values longer than 200 characters are left out); `None` when none is.
fn failure_diagnostic(failure: &http::RequestFailure) -> Option<serde_json::Value> {
    let usable = |value: &str| {
        let value = value.trim();
        (!value.is_empty() && value.chars().count() <= 200).then(|| value.to_owned())
    };
    let mut details = serde_json::Map::new();
    if let Some((status, _)) = &failure.status {
        details.insert("status".into(), (*status).into());
    }
    if let Some(code) = failure
        .error_code
        .as_deref()
        .filter(|code| code.ends_with("Exception"))
        .and_then(usable)
    {
        details.insert("errorCode".into(), code.into());
    }
    if let Some(id) = failure.request_id.as_deref().and_then(usable) {
        details.insert("requestId".into(), id.into());
    }
    (!details.is_empty()).then(|| {
        serde_json::json!({
            "type": "bedrock_response_failure",
            "timestamp": crate::types::now_ms(),
            "details": details,
        })
    })
}

/// Decodes an event-stream body (a live one or a recording) into message events, starting
/// with `start` and ending with `done` or `error`.
pub(crate) fn decode<S, E>(
    model: Model,
    bytes: S,
    control: StreamControl,
    mut decoder: Decoder,
) -> impl Stream<Item = AssistantMessageEvent> + Send
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    async_stream::stream! {
        let mut asm = Assembler::new(&model);
        asm.start();
        for event in asm.drain() {
            yield event;
        }
        let mut body = Watched::new(bytes, &control);
        let mut frames = MessageDecoder::new();
        loop {
            let outcome = match body.next().await {
                Read::Cancelled => {
                    yield asm.fail(true, http::ABORTED.to_owned());
                    return;
                }
                Read::IdleTimeout => Err(control.idle_timeout_message()),
                Read::End => break,
                Read::Item(Err(error)) => Err(transport_error(&error)),
                Read::Item(Ok(chunk)) => {
                    frames.push(&chunk);
                    // Events leave after each message: a pending event keeps the partial
                    // message shared, so the next delta would have to copy it.
                    let mut outcome = Ok(());
                    loop {
                        match frames.next_message() {
                            Ok(Some(message)) => {
                                control
                                    .report_stream_event(&model, || sdk_item(&message))
                                    .await;
                                if let Err(e) = decoder.on_message(&message, &mut asm) {
                                    outcome = Err(e);
                                    break;
                                }
                                let pending: Vec<_> = asm.drain().collect();
                                for event in pending {
                                    yield event;
                                }
                            }
                            Ok(None) => break,
                            Err(e) => {
                                outcome = Err(e.to_string());
                                break;
                            }
                        }
                    }
                    outcome
                }
            };
            let pending: Vec<_> = asm.drain().collect();
            for event in pending {
                yield event;
            }
            if let Err(message) = outcome {
                let aborted = control.cancel.is_cancelled();
                yield asm.fail(aborted, message);
                return;
            }
        }
        let settled = frames
            .finish()
            .map_err(|e| e.to_string())
            .and_then(|()| decoder.finish(&mut asm));
        let pending: Vec<_> = asm.drain().collect();
        for event in pending {
            yield event;
        }
        if control.cancel.is_cancelled() {
            yield asm.fail(true, http::ABORTED.to_owned());
            return;
        }
        match settled {
            Ok(()) => yield asm.finish(),
            Err(message) => yield asm.fail(false, message),
        }
    }
}

/// Decodes a recorded body (replay tests and benchmarks).
pub(crate) fn replay<S, E>(
    model: &Model,
    bytes: S,
    cancel: tokio_util::sync::CancellationToken,
) -> AssistantMessageEventStream
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    let control = StreamControl {
        cancel,
        idle_timeout: Duration::from_secs(600),
        on_response: None,
        on_stream_event: None,
        error_prefix: None,
    };
    let decoder = Decoder::new(model.clone());
    AssistantMessageEventStream::new(decode(model.clone(), bytes, control, decoder))
}

/// A clear text for a body that broke off.
fn transport_error(error: &(dyn std::error::Error + 'static)) -> String {
    let mut chain = error.to_string();
    let mut source = error.source();
    while let Some(inner) = source {
        chain.push_str(": ");
        chain.push_str(&inner.to_string());
        source = inner.source();
    }
    format!("Connection error: the stream was terminated before completion ({chain})")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Message {
        Message::new(
            &[
                (":event-type", "contentBlockDelta"),
                (":content-type", "application/json"),
                (":message-type", "event"),
            ],
            &br#"{"contentBlockIndex":0,"delta":{"text":"hi"}}"#[..],
        )
    }

    #[test]
    fn crc32_matches_the_standard_check_value() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn aws_published_message_vectors() {
        // From the AWS event-stream test suite (awslabs/aws-c-event-stream,
        // tests/message_deserializer_test.c).
        let empty: [u8; 16] = [
            0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x05, 0xc2, 0x48, 0xeb, 0x7d, 0x98,
            0xc8, 0xff,
        ];
        assert_eq!(Message::decode(&empty).unwrap(), Message::default());
        assert_eq!(Message::default().encode(), empty.to_vec());

        let no_headers: [u8; 29] = [
            0x00, 0x00, 0x00, 0x1D, 0x00, 0x00, 0x00, 0x00, 0xfd, 0x52, 0x8c, 0x5a, 0x7b, 0x27,
            0x66, 0x6f, 0x6f, 0x27, 0x3a, 0x27, 0x62, 0x61, 0x72, 0x27, 0x7d, 0xc3, 0x65, 0x39,
            0x36,
        ];
        let message = Message::decode(&no_headers).unwrap();
        assert!(message.headers.is_empty());
        assert_eq!(&message.payload[..], b"{'foo':'bar'}");
        assert_eq!(message.encode(), no_headers.to_vec());

        let mut one_header = vec![0x00, 0x00, 0x00, 0x3D, 0x00, 0x00, 0x00, 0x20];
        one_header.extend_from_slice(&[0x07, 0xFD, 0x83, 0x96, 0x0C]);
        one_header.extend_from_slice(b"content-type");
        one_header.extend_from_slice(&[0x07, 0x00, 0x10]);
        one_header.extend_from_slice(b"application/json");
        one_header.extend_from_slice(b"{'foo':'bar'}");
        one_header.extend_from_slice(&[0x8D, 0x9C, 0x08, 0xB1]);
        let message = Message::decode(&one_header).unwrap();
        assert_eq!(message.header_str("content-type"), Some("application/json"));
        assert_eq!(&message.payload[..], b"{'foo':'bar'}");
        assert_eq!(message.encode(), one_header);
    }

    #[test]
    fn round_trips_every_header_type() {
        let message = Message {
            headers: vec![
                ("t".into(), HeaderValue::Bool(true)),
                ("f".into(), HeaderValue::Bool(false)),
                ("b".into(), HeaderValue::Byte(-3)),
                ("s".into(), HeaderValue::Short(-300)),
                ("i".into(), HeaderValue::Int(70_000)),
                ("l".into(), HeaderValue::Long(-1 << 40)),
                (
                    "y".into(),
                    HeaderValue::Bytes(Bytes::from_static(b"\x00\x01")),
                ),
                ("str".into(), HeaderValue::String("héllo".into())),
                ("ts".into(), HeaderValue::Timestamp(1_700_000_000_000)),
                ("u".into(), HeaderValue::Uuid([7; 16])),
            ],
            payload: Bytes::from_static(b"{}"),
        };
        assert_eq!(Message::decode(&message.encode()).unwrap(), message);
    }

    #[test]
    fn reassembles_messages_split_at_every_byte() {
        let one = sample().encode();
        let mut all = one.clone();
        all.extend_from_slice(&one);
        let mut decoder = MessageDecoder::new();
        let mut got = Vec::new();
        for byte in &all {
            decoder.push(std::slice::from_ref(byte));
            while let Some(m) = decoder.next_message().unwrap() {
                got.push(m);
            }
        }
        assert_eq!(got, vec![sample(), sample()]);
        assert_eq!(got[0].header_str(":event-type"), Some("contentBlockDelta"));
        decoder.finish().unwrap();
    }

    #[test]
    fn corrupted_frames_are_rejected_with_clear_errors() {
        let good = sample().encode();
        let mut bad_payload = good.clone();
        bad_payload[30] ^= 0x01;
        let err = Message::decode(&bad_payload).unwrap_err();
        assert!(matches!(err, CodecError::MessageChecksum { .. }));
        assert!(
            err.to_string().starts_with("The message checksum ("),
            "{err}"
        );

        let mut bad_prelude = good.clone();
        bad_prelude[2] ^= 0x40;
        let mut decoder = MessageDecoder::new();
        decoder.push(&bad_prelude[..12]);
        let err = decoder.next_message().unwrap_err();
        assert!(
            err.to_string()
                .starts_with("The prelude checksum specified in the message ("),
            "{err}"
        );

        let mut decoder = MessageDecoder::new();
        decoder.push(&good[..good.len() - 1]);
        assert_eq!(decoder.next_message().unwrap(), None);
        assert_eq!(decoder.finish(), Err(CodecError::Truncated));
        assert_eq!(
            CodecError::Truncated.to_string(),
            "Truncated event message received."
        );
    }
}
