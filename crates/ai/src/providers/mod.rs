//! Built-in providers, one per wire API.

pub mod anthropic_messages;
pub mod openai_completions;

mod common;

use std::sync::Arc;

use crate::registry::ApiProvider;

/// The providers registered at startup.
pub fn builtin() -> Vec<Arc<dyn ApiProvider>> {
    vec![
        Arc::new(openai_completions::OpenAiCompletions),
        Arc::new(anthropic_messages::AnthropicMessages),
    ]
}
