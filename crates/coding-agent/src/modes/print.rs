//! Print mode (`pi -p`): send the prompts, print the text of the last reply.

use std::io::Write;

use pi_ai::{
    AssistantMessage, Context, Message, Model, SimpleStreamOptions, StopReason, StreamOptions,
    ThinkingLevel, UserMessage,
};

use crate::model_registry::RequestAuth;

/// One print-mode run.
pub struct PrintRun {
    pub model: Model,
    pub auth: RequestAuth,
    pub thinking: ThinkingLevel,
    pub system_prompt: String,
}

impl PrintRun {
    /// Sends each prompt after the previous reply; prints the text blocks of the last
    /// assistant message to stdout. Returns the process exit code (1 when it failed or was
    /// aborted, with the error on stderr).
    pub async fn run(self, prompts: Vec<String>) -> i32 {
        let mut context = Context {
            system_prompt: Some(self.system_prompt.clone()),
            messages: Vec::new(),
            tools: Vec::new(),
        };
        let mut last: Option<AssistantMessage> = None;
        for prompt in prompts {
            context
                .messages
                .push(Message::User(UserMessage::text(prompt)));
            let options = SimpleStreamOptions {
                stream: StreamOptions {
                    api_key: self.auth.api_key.clone(),
                    headers: self.auth.headers.clone(),
                    ..StreamOptions::default()
                },
                reasoning: Some(self.thinking).filter(|l| *l != ThinkingLevel::Off),
                thinking_budgets: None,
            };
            let reply = pi_ai::complete_simple(&self.model, &context, options).await;
            let failed = reply.stop_reason.is_failure();
            context.messages.push(Message::Assistant(reply.clone()));
            last = Some(reply);
            if failed {
                break;
            }
        }
        let Some(reply) = last else { return 0 };
        if matches!(reply.stop_reason, StopReason::Error | StopReason::Aborted) {
            let message = reply
                .error_message
                .unwrap_or_else(|| format!("Request {:?}", reply.stop_reason));
            let _ = writeln!(std::io::stderr().lock(), "{message}");
            return 1;
        }
        let mut out = std::io::stdout().lock();
        for block in &reply.content {
            if let Some(text) = block.as_text() {
                let _ = writeln!(out, "{text}");
            }
        }
        let _ = out.flush();
        0
    }
}
