//! Scaffold: replaced by the provider's implementation.

use crate::event_stream::AssistantMessageEventStream;
use crate::registry::ApiProvider;
use crate::types::{AssistantMessage, Context, Model, SimpleStreamOptions, StreamOptions, api};

fn not_yet(model: &Model) -> AssistantMessageEventStream {
    let mut message = AssistantMessage::empty(&model.api, &model.provider, &model.id);
    message.error_message = Some(format!("The {} API is not available yet", model.api));
    AssistantMessageEventStream::failed(message)
}

/// `openai-responses`: the OpenAI Responses API.
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenAiResponses;

impl ApiProvider for OpenAiResponses {
    fn api(&self) -> &str {
        api::OPENAI_RESPONSES
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

/// `azure-openai-responses`: the Responses API on Azure OpenAI.
#[derive(Debug, Clone, Copy, Default)]
pub struct AzureOpenAiResponses;

impl ApiProvider for AzureOpenAiResponses {
    fn api(&self) -> &str {
        api::AZURE_OPENAI_RESPONSES
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

/// `openai-codex-responses`: the ChatGPT Codex backend's Responses API.
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenAiCodexResponses;

impl ApiProvider for OpenAiCodexResponses {
    fn api(&self) -> &str {
        api::OPENAI_CODEX_RESPONSES
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
