//! Scaffold: replaced by the provider's implementation.

use crate::event_stream::AssistantMessageEventStream;
use crate::registry::ApiProvider;
use crate::types::{AssistantMessage, Context, Model, SimpleStreamOptions, StreamOptions, api};

fn not_yet(model: &Model) -> AssistantMessageEventStream {
    let mut message = AssistantMessage::empty(&model.api, &model.provider, &model.id);
    message.error_message = Some(format!("The {} API is not available yet", model.api));
    AssistantMessageEventStream::failed(message)
}

/// `mistral-conversations`: Mistral's chat API.
#[derive(Debug, Clone, Copy, Default)]
pub struct MistralConversations;

impl ApiProvider for MistralConversations {
    fn api(&self) -> &str {
        api::MISTRAL_CONVERSATIONS
    }

    fn stream(
        &self,
        model: &Model,
        _context: &Context,
        _options: StreamOptions,
    ) -> AssistantMessageEventStream {
        not_yet(model)
    }

    fn stream_simple(
        &self,
        model: &Model,
        _context: &Context,
        _options: SimpleStreamOptions,
    ) -> AssistantMessageEventStream {
        not_yet(model)
    }
}
