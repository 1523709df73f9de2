//! The proxy wire format: the request body and the events of the response.

use serde::{Deserialize, Serialize};

use pi_ai::{
    AssistantMessageEvent, CacheRetention, Context, Model, SimpleStreamOptions, StopReason,
    StreamOptions, ThinkingBudgets, ThinkingLevel, Usage,
};

/// One streamed event, without the partial message the client rebuilds itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum ProxyEvent {
    Start,
    TextStart {
        content_index: usize,
    },
    TextDelta {
        content_index: usize,
        delta: String,
    },
    TextEnd {
        content_index: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content_signature: Option<String>,
    },
    ThinkingStart {
        content_index: usize,
    },
    ThinkingDelta {
        content_index: usize,
        delta: String,
    },
    ThinkingEnd {
        content_index: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content_signature: Option<String>,
    },
    ToolcallStart {
        content_index: usize,
        id: String,
        tool_name: String,
    },
    ToolcallDelta {
        content_index: usize,
        delta: String,
    },
    ToolcallEnd {
        content_index: usize,
    },
    Done {
        reason: StopReason,
        usage: Usage,
    },
    Error {
        reason: StopReason,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error_message: Option<String>,
        usage: Usage,
    },
}

/// The serializable subset of stream options a client may send.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProxyRequestOptions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<ThinkingLevel>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_retention: Option<CacheRetention>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<std::collections::BTreeMap<String, String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<serde_json::Map<String, serde_json::Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_budgets: Option<ThinkingBudgets>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retry_delay_ms: Option<u64>,
}

impl ProxyRequestOptions {
    /// The shareable part of local options (never the API key).
    pub fn from_simple(options: &SimpleStreamOptions) -> Self {
        let s = &options.stream;
        Self {
            temperature: s.temperature,
            max_tokens: s.max_tokens,
            reasoning: options.reasoning,
            cache_retention: s.cache_retention,
            session_id: s.session_id.clone(),
            headers: (!s.headers.is_empty()).then(|| s.headers.clone()),
            metadata: s.metadata.clone(),
            thinking_budgets: options.thinking_budgets,
            max_retry_delay_ms: s.max_retry_delay_ms,
        }
    }

    /// Stream options for the server's own call.
    pub fn into_simple(self) -> SimpleStreamOptions {
        SimpleStreamOptions {
            stream: StreamOptions {
                temperature: self.temperature,
                max_tokens: self.max_tokens,
                cache_retention: self.cache_retention,
                session_id: self.session_id,
                headers: self.headers.unwrap_or_default(),
                metadata: self.metadata,
                max_retry_delay_ms: self.max_retry_delay_ms,
                ..StreamOptions::default()
            },
            reasoning: self.reasoning,
            thinking_budgets: self.thinking_budgets,
        }
    }
}

/// `POST {proxyUrl}/api/stream` body.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProxyRequest {
    pub model: Model,
    pub context: Context,
    #[serde(default)]
    pub options: ProxyRequestOptions,
}

/// The proxy form of a pi-ai event (the server side of the protocol).
pub fn to_proxy_event(event: &AssistantMessageEvent) -> ProxyEvent {
    use AssistantMessageEvent as E;
    let signature =
        |partial: &pi_ai::AssistantMessage, index: usize| match partial.content.get(index) {
            Some(pi_ai::AssistantBlock::Text(t)) => t.text_signature.clone(),
            Some(pi_ai::AssistantBlock::Thinking(t)) => t.thinking_signature.clone(),
            _ => None,
        };
    match event {
        E::Start { .. } => ProxyEvent::Start,
        E::TextStart { content_index, .. } => ProxyEvent::TextStart {
            content_index: *content_index,
        },
        E::TextDelta {
            content_index,
            delta,
            ..
        } => ProxyEvent::TextDelta {
            content_index: *content_index,
            delta: delta.clone(),
        },
        E::TextEnd {
            content_index,
            partial,
            ..
        } => ProxyEvent::TextEnd {
            content_index: *content_index,
            content_signature: signature(partial, *content_index),
        },
        E::ThinkingStart { content_index, .. } => ProxyEvent::ThinkingStart {
            content_index: *content_index,
        },
        E::ThinkingDelta {
            content_index,
            delta,
            ..
        } => ProxyEvent::ThinkingDelta {
            content_index: *content_index,
            delta: delta.clone(),
        },
        E::ThinkingEnd {
            content_index,
            partial,
            ..
        } => ProxyEvent::ThinkingEnd {
            content_index: *content_index,
            content_signature: signature(partial, *content_index),
        },
        E::ToolcallStart {
            content_index,
            partial,
        } => {
            let (id, name) = match partial.content.get(*content_index) {
                Some(pi_ai::AssistantBlock::ToolCall(c)) => (c.id.clone(), c.name.clone()),
                _ => (String::new(), String::new()),
            };
            ProxyEvent::ToolcallStart {
                content_index: *content_index,
                id,
                tool_name: name,
            }
        }
        E::ToolcallDelta {
            content_index,
            delta,
            ..
        } => ProxyEvent::ToolcallDelta {
            content_index: *content_index,
            delta: delta.clone(),
        },
        E::ToolcallEnd { content_index, .. } => ProxyEvent::ToolcallEnd {
            content_index: *content_index,
        },
        E::Done { reason, message } => ProxyEvent::Done {
            reason: *reason,
            usage: message.usage,
        },
        E::Error { reason, error } => ProxyEvent::Error {
            reason: *reason,
            error_message: error.error_message.clone(),
            usage: error.usage,
        },
    }
}
