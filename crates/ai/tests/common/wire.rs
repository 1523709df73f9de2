//! The two providers of the foundation (OpenAI Completions and Anthropic Messages) side by
//! side: tests that hold for both loop over [`BOTH`].

use mock_llm::MockServer;
use pi_ai::{Model, StreamOptions, api};

use super::fixtures::mock_model;

/// The two providers of the foundation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    OpenAi,
    Anthropic,
}

pub const BOTH: [Wire; 2] = [Wire::OpenAi, Wire::Anthropic];

/// A model of `wire` served by `server`, with non-zero prices so costs are visible.
pub fn model(server: &MockServer, wire: Wire) -> Model {
    let (api, base_url) = match wire {
        Wire::OpenAi => (api::OPENAI_COMPLETIONS, server.openai_base_url()),
        Wire::Anthropic => (api::ANTHROPIC_MESSAGES, server.anthropic_base_url()),
    };
    Model {
        name: "Mock Model".into(),
        ..mock_model(api, "mock", "mock-model", base_url)
    }
}

/// A test key and no client-side retries.
pub fn options() -> StreamOptions {
    StreamOptions {
        api_key: Some("test-key".into()),
        max_retries: Some(0),
        ..StreamOptions::default()
    }
}
