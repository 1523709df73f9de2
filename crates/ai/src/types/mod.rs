//! The JSON contract of pi-ai: messages, content, usage, models, context, events, options.

pub mod content;
pub mod context;
pub mod event;
pub mod message;
pub mod model;
pub mod options;
pub mod role;
pub mod shared_str;
pub mod shared_vec;
pub mod stored_text;
pub mod tag_first;
pub mod thinking;
pub mod usage;

pub use content::{
    AssistantBlock, ImageContent, InputBlock, TextContent, ThinkingContent, ToolCall,
};
pub use context::{ConstrainedSampling, Context, Strictness, SystemMessage, Tool};
pub use event::AssistantMessageEvent;
pub use message::{
    AssistantMessage, Message, StopReason, ToolResultMessage, UserContent, UserMessage, now_ms,
};
pub use model::{
    CostTier, ImageInputLimits, ImageResize, InputKind, InputLimits, MaxTokensField, Model,
    ModelCompat, ModelCost, ModelExtras, PromptCache, ThinkingFormat, ThinkingLevelMap, api,
};
pub use options::{
    AnthropicThinking, CacheRetention, OpenAiResponsesOptions, PayloadHook, ResponseHook,
    SimpleStreamOptions, StreamEventHook, StreamOptions, ToolChoice, Transport,
};
pub use shared_str::SharedStr;
pub use shared_vec::SharedVec;
pub use stored_text::{FileSource, TextSource, reading_from};
pub use thinking::{ThinkingBudgets, ThinkingLevel};
pub use usage::{Usage, UsageCost};
