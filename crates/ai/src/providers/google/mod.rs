//! Scaffold: replaced by the provider's implementation.

use crate::event_stream::AssistantMessageEventStream;
use crate::registry::ApiProvider;
use crate::types::{AssistantMessage, Context, Model, SimpleStreamOptions, StreamOptions, api};

fn not_yet(model: &Model) -> AssistantMessageEventStream {
    let mut message = AssistantMessage::empty(&model.api, &model.provider, &model.id);
    message.error_message = Some(format!("The {} API is not available yet", model.api));
    AssistantMessageEventStream::failed(message)
}

/// `google-generative-ai`: the Gemini API.
#[derive(Debug, Clone, Copy, Default)]
pub struct GoogleGenerativeAi;

impl ApiProvider for GoogleGenerativeAi {
    fn api(&self) -> &str {
        api::GOOGLE_GENERATIVE_AI
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

/// `google-vertex`: Gemini on Vertex AI.
#[derive(Debug, Clone, Copy, Default)]
pub struct GoogleVertex;

impl ApiProvider for GoogleVertex {
    fn api(&self) -> &str {
        api::GOOGLE_VERTEX
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

/// `google-gemini-cli`: Gemini through the Cloud Code Assist endpoint.
#[derive(Debug, Clone, Copy, Default)]
pub struct GoogleGeminiCli;

impl ApiProvider for GoogleGeminiCli {
    fn api(&self) -> &str {
        api::GOOGLE_GEMINI_CLI
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
