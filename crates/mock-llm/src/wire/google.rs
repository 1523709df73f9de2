//! Scaffold: replaced by the wire format's implementation.

use super::{RenderCtx, WireFormat};
use crate::script::Script;
use crate::sse::Frame;

/// Gemini `streamGenerateContent?alt=sse` streaming (Gemini API and Vertex AI).
pub(crate) struct Google;

impl WireFormat for Google {
    fn render(&self, _script: &Script, _ctx: &RenderCtx<'_>) -> Vec<Frame> {
        Vec::new()
    }

    fn malformed_frame(&self) -> Frame {
        Frame::data("{\"broken\":")
    }

    fn stream_error(&self, _message: Option<&str>) -> Vec<Frame> {
        Vec::new()
    }

    fn error_body(&self, status: u16) -> String {
        format!("{{\"error\":{{\"code\":{status},\"message\":\"mock error\"}}}}")
    }
}

/// The Cloud Code Assist (`v1internal:streamGenerateContent`) variant: each chunk wrapped in `response`.
pub(crate) struct GeminiCli;

impl WireFormat for GeminiCli {
    fn render(&self, _script: &Script, _ctx: &RenderCtx<'_>) -> Vec<Frame> {
        Vec::new()
    }

    fn malformed_frame(&self) -> Frame {
        Frame::data("{\"broken\":")
    }

    fn stream_error(&self, _message: Option<&str>) -> Vec<Frame> {
        Vec::new()
    }

    fn error_body(&self, status: u16) -> String {
        format!("{{\"error\":{{\"code\":{status},\"message\":\"mock error\"}}}}")
    }
}
