//! mock-llm: a scripted HTTP server on 127.0.0.1 speaking the streaming wire formats of
//! LLM providers (OpenAI Chat Completions and Responses, Anthropic Messages, Gemini, Vertex,
//! Cloud Code Assist, Bedrock ConverseStream, Mistral), with fault injection.
//!
//! Queue [`Script`]s on a [`MockServer`]; each provider request consumes the next one
//! (or gets an echo reply when the queue is empty) and is recorded for inspection. It also
//! stands in for the providers' sign-in servers ([`oauth`]) and for a llama.cpp router
//! ([`llama_router`]).

mod control;
mod default_reply;
mod error;
mod faults;
pub mod llama_classify;
pub mod llama_router;
pub mod oauth;
mod oauth_chatgpt;
mod oauth_copilot;
mod oauth_device;
mod oauth_federation;
mod oauth_keys;
mod recording;
mod render;
mod request_view;
mod respond;
pub mod script;
mod server;
mod sse;
mod state;
mod text;
mod websocket;
mod wire;

pub use error::MockError;
pub use llama_classify::{ClassifyRule, RankedToken};
pub use llama_router::LlamaSettings;
pub use recording::RecordedRequest;
pub use render::{WIRE_FORMATS, render_body};
pub use script::{Fault, Item, LineEnding, Script, ScriptUsage, StopReason};
pub use server::MockServer;
pub use websocket::CodexWebSocket;
