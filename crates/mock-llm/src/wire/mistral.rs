//! Scaffold: replaced by the wire format's implementation.

use super::{RenderCtx, WireFormat};
use crate::script::Script;
use crate::sse::Frame;

/// Mistral chat completions streaming.
pub(crate) struct Mistral;

impl WireFormat for Mistral {
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
