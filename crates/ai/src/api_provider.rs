//! The trait every wire API implements. It sits below both the registry and the providers, so
//! the registry can hold the built-in providers without the providers depending on it.

use crate::event_stream::AssistantMessageEventStream;
use crate::types::{Context, Model, SimpleStreamOptions, StreamOptions};

/// An implementation of one wire API.
///
/// Once called, failures (no key, HTTP errors, broken streams) are encoded in the returned
/// stream as an `error` event; these functions never panic and never fail synchronously.
pub trait ApiProvider: Send + Sync {
    /// The API id this provider implements.
    fn api(&self) -> &str;

    /// Streams with provider-level options.
    fn stream(
        &self,
        model: &Model,
        context: &Context,
        options: StreamOptions,
    ) -> AssistantMessageEventStream;

    /// Streams with a provider-neutral reasoning level, mapped to this provider's settings.
    fn stream_simple(
        &self,
        model: &Model,
        context: &Context,
        options: SimpleStreamOptions,
    ) -> AssistantMessageEventStream;
}
