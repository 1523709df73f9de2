//! Scaffold: replaced by the wire format's implementation.

use super::{RenderCtx, WireFormat};
use crate::script::Script;
use crate::sse::Frame;

/// OpenAI Responses streaming (`response.created` … `response.completed`), also used by Azure and Codex.
pub(crate) struct OpenAiResponses;

impl WireFormat for OpenAiResponses {
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
