//! Scaffold: replaced by the wire format's implementation.

use super::{RenderCtx, WireFormat};
use crate::script::Script;
use crate::sse::Frame;

/// Bedrock ConverseStream: AWS event-stream binary messages.
pub(crate) struct Bedrock;

impl WireFormat for Bedrock {
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
