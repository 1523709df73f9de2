//! The stream proxy: an LLM call made through a server that holds the keys. The server runs
//! pi-ai and streams compact events (deltas without the partial message); the client
//! rebuilds the partial message from them.

pub mod client;
pub mod event;
#[cfg(feature = "proxy-server")]
pub mod server;

pub use client::{ProxyStreamOptions, proxy_stream_fn, stream_proxy};
pub use event::{ProxyEvent, ProxyRequest, ProxyRequestOptions, to_proxy_event};
