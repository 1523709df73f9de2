//! pi-ai: one streaming API over every LLM provider.
//!
//! `(Model, Context, Options)` becomes a stream of [`AssistantMessageEvent`]s ending in exactly
//! one `done` or `error`. This crate knows HTTP, SSE and provider quirks; it never runs a tool,
//! never retries a whole turn and never touches the disk.

pub mod api_provider;
pub mod assembler;
pub mod cache_warming;
pub mod constrained_sampling;
pub mod env_keys;
pub mod event_stream;
pub mod http;
pub mod identity;
pub mod js_number;
pub mod models;
pub mod oauth;
pub mod overflow;
pub mod partial_json;
pub mod providers;
pub mod registry;
pub mod request_body;
pub mod schema;
pub mod sse;
pub mod stream;
pub mod tool_arguments;
pub mod transcript;
pub mod transform;
pub mod types;
pub mod validation;

pub use env_keys::get_env_api_key;
pub use event_stream::AssistantMessageEventStream;
pub use models::{
    calculate_cost, clamp_thinking_level, get_model, get_models, get_providers,
    supported_thinking_levels,
};
pub use overflow::is_context_overflow;
pub use registry::{
    ApiProvider, get_api_provider, register_api_provider, unregister_api_providers,
};
pub use stream::{complete, complete_simple, stream, stream_simple};
pub use types::*;
pub use validation::{ValidationError, validate_tool_arguments, validate_tool_call_arguments};
