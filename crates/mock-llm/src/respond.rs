//! Turns a script into an HTTP response for one wire format.

use axum::body::Body;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::faults;
use crate::script::{Fault, Script};
use crate::state::Shared;
use crate::wire::WireFormat;

/// Builds the response (stream or HTTP error) for `script`.
pub(crate) fn respond(
    wire: &dyn WireFormat,
    script: &Script,
    request: &Value,
    request_len: usize,
    shared: &Shared,
) -> Response {
    let mut headers = HeaderMap::new();
    for (name, value) in wire.extra_headers() {
        insert(&mut headers, name, value);
    }
    if let Some(Fault::HttpError {
        status,
        retry_after,
        retry_after_ms,
        body,
    }) = &script.fault
    {
        let status = StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        if let Some(value) = retry_after {
            insert(&mut headers, "retry-after", value);
        }
        if let Some(value) = retry_after_ms {
            insert(&mut headers, "retry-after-ms", value);
        }
        insert(
            &mut headers,
            header::CONTENT_TYPE.as_str(),
            "application/json",
        );
        let body = body
            .clone()
            .unwrap_or_else(|| wire.error_body(status.as_u16()));
        return (status, headers, Body::from(body)).into_response();
    }
    let ctx = shared.render_ctx(request, request_len);
    let mut ops = match &script.raw_body {
        Some(raw) => vec![faults::Op::Write(bytes::Bytes::from(raw.clone()))],
        None => {
            let frames = wire.render(script, &ctx);
            let line_ending = script.line_ending.unwrap_or_default();
            faults::plan(frames, script.fault.as_ref(), wire, line_ending)
        }
    };
    if let Some(max) = script.write_chunk_bytes {
        ops = faults::split_writes(ops, max);
    }
    insert(
        &mut headers,
        header::CONTENT_TYPE.as_str(),
        wire.content_type(),
    );
    insert(&mut headers, header::CACHE_CONTROL.as_str(), "no-cache");
    (StatusCode::OK, headers, faults::into_body(ops)).into_response()
}

/// Inserts a header, skipping names or values that are not valid HTTP.
fn insert(headers: &mut HeaderMap, name: &str, value: &str) {
    if let (Ok(name), Ok(value)) = (HeaderName::try_from(name), HeaderValue::try_from(value)) {
        headers.insert(name, value);
    }
}
