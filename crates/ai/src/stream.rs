//! The entry points: `stream`, `stream_simple`, `complete`, `complete_simple`.

use crate::event_stream::AssistantMessageEventStream;
use crate::registry::get_api_provider;
use crate::types::{AssistantMessage, Context, Model, SimpleStreamOptions, StreamOptions};

fn no_provider(model: &Model) -> AssistantMessageEventStream {
    let mut message = AssistantMessage::empty(&model.api, &model.provider, &model.id);
    message.error_message = Some(format!("No API provider registered for api: {}", model.api));
    AssistantMessageEventStream::failed(message)
}

/// Streams a response with provider-level options.
pub fn stream(
    model: &Model,
    context: &Context,
    options: StreamOptions,
) -> AssistantMessageEventStream {
    match get_api_provider(&model.api) {
        Some(provider) => provider.stream(model, context, options),
        None => no_provider(model),
    }
}

/// Streams a response with a provider-neutral reasoning level.
pub fn stream_simple(
    model: &Model,
    context: &Context,
    options: SimpleStreamOptions,
) -> AssistantMessageEventStream {
    match get_api_provider(&model.api) {
        Some(provider) => provider.stream_simple(model, context, options),
        None => no_provider(model),
    }
}

/// Awaits the final message of [`stream`].
pub async fn complete(
    model: &Model,
    context: &Context,
    options: StreamOptions,
) -> AssistantMessage {
    stream(model, context, options).result().await
}

/// Awaits the final message of [`stream_simple`].
pub async fn complete_simple(
    model: &Model,
    context: &Context,
    options: SimpleStreamOptions,
) -> AssistantMessage {
    stream_simple(model, context, options).result().await
}
