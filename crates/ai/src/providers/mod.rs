//! Built-in providers, one per wire API.

pub mod anthropic_messages;
pub mod bedrock;
pub mod google;
pub mod mistral;
pub mod openai_completions;
pub mod openai_responses;
pub mod strict_limits;

mod body_text;
mod cloudflare;
mod common;
pub mod context_fit;
mod copilot;
mod openrouter_cost;
mod sampling;

use std::sync::Arc;

use crate::api_provider::ApiProvider;

/// The providers registered at startup.
pub fn builtin() -> Vec<Arc<dyn ApiProvider>> {
    vec![
        Arc::new(openai_completions::OpenAiCompletions),
        Arc::new(anthropic_messages::AnthropicMessages),
        Arc::new(openai_responses::OpenAiResponses),
        Arc::new(openai_responses::AzureOpenAiResponses),
        Arc::new(openai_responses::OpenAiCodexResponses),
        Arc::new(google::GoogleGenerativeAi),
        Arc::new(google::GoogleVertex),
        Arc::new(google::GoogleGeminiCli),
        Arc::new(bedrock::BedrockConverseStream),
        Arc::new(mistral::MistralConversations),
    ]
}
