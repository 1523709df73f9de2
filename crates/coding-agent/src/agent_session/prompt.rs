//! Sending prompts: extension commands and `input` handlers first, template and skill
//! expansion, queueing while the agent streams, otherwise a run to the end; and aborting.

use std::sync::atomic::Ordering;

use tokio_util::sync::CancellationToken;

use pi_agent_core::AgentMessage;
use pi_ai::{ImageContent, InputBlock, UserMessage};

use super::{
    AgentSession, Disposition, Preflight, PromptOptions, SessionOpError, StreamingBehavior,
};

impl AgentSession {
    /// Expands `/skill:name args` and `/template args` (when the text starts with one).
    pub fn expand(&self, text: &str) -> String {
        let expanded = match crate::resources::expand_skill_command(text, &self.skills()) {
            Ok(expanded) => expanded,
            Err(_) => text.to_owned(),
        };
        crate::resources::expand_prompt_template(&expanded, &self.prompt_templates())
    }

    /// Sends a prompt: expands templates and skills, queues it while the agent streams (as
    /// `streaming_behavior` says), otherwise checks the model's key, compacts if due, and
    /// runs it to the end, with auto-retry and compaction afterwards.
    pub async fn prompt(
        &self,
        text: &str,
        options: PromptOptions,
        preflight: Option<Preflight>,
    ) -> Result<(), SessionOpError> {
        let mut preflight = preflight;
        let mut report = |result: Result<Disposition, String>| {
            if let Some(callback) = preflight.take() {
                callback(result);
            }
        };
        let settled_before = self.inner.settled_count.load(Ordering::SeqCst);
        // Extension commands run at once, even while streaming.
        if options.expand_templates && text.starts_with('/') {
            let running = self.inner.ext.commands_running.start();
            if self.run_extension_command(text).await.is_some()
                || self.run_builtin_command(text).await
            {
                // Prompts the command asked for start after its answer (as in the
                // TypeScript pi, where they begin on a later tick).
                report(Ok(Disposition::Handled));
                drop(running);
                self.settle_handled(settled_before);
                return Ok(());
            }
            drop(running);
        }
        let mut options = options;
        let mut text = text.to_owned();
        let runtime = self.inner.ext.runtime.clone();
        if runtime.has_handlers("input") {
            let source = options
                .source
                .clone()
                .unwrap_or_else(|| "interactive".into());
            let images = (!options.images.is_empty()).then(|| options.images.clone());
            match runtime
                .emit_input(&text, images, &source, CancellationToken::new())
                .await
            {
                crate::extensions::InputOutcome::Handled => {
                    report(Ok(Disposition::Handled));
                    self.settle_handled(settled_before);
                    return Ok(());
                }
                crate::extensions::InputOutcome::Transform {
                    text: changed,
                    images,
                } => {
                    text = changed;
                    if let Some(images) = images {
                        options.images = images;
                    }
                }
                crate::extensions::InputOutcome::Continue => {}
            }
        }
        let text = if options.expand_templates {
            self.expand(&text)
        } else {
            text
        };
        if self.is_streaming() {
            let Some(behavior) = options.streaming_behavior else {
                let error = SessionOpError::new(
                    "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.",
                );
                report(Err(error.0.clone()));
                return Err(error);
            };
            match behavior {
                StreamingBehavior::FollowUp => self.inner.queue_follow_up(text, options.images),
                StreamingBehavior::Steer => self.inner.queue_steer(text, options.images),
            }
            report(Ok(Disposition::Queued));
            return Ok(());
        }
        self.inner.flush_pending_bash();
        self.sync_mcp_tools().await;
        let model = self.model();
        if let Err(error) = self.inner.request_auth(&model) {
            report(Err(error.0.clone()));
            return Err(error);
        }
        let last = self.inner.agent.with_messages(|messages| {
            messages
                .iter()
                .rev()
                .find_map(|m| m.as_assistant().cloned())
        });
        if let Some(last) = last {
            self.check_compaction(&last, false, true).await;
        }
        // The system message is recorded before the prompt, so it is not younger than it.
        let started = pi_ai::oauth::now_ms();
        let mut blocks = vec![InputBlock::text(text.clone())];
        blocks.extend(options.images.iter().cloned().map(InputBlock::Image));
        let mut messages = vec![AgentMessage::from(UserMessage::blocks(blocks))];
        messages.extend(self.extension_prompt_messages(&text, &options.images).await);
        // pi 1.5 records the system prompt (or what changed in it) before the prompt.
        if let Some(system) = self.system_message_for_run(started) {
            messages.insert(0, system);
        }
        report(Ok(Disposition::Started));
        // The previous run may still be finishing after its agent_end.
        self.inner.agent.wait_for_idle().await;
        let _run = self.run_guard();
        if let Err(e) = self.inner.agent.prompt(messages).await {
            return Err(SessionOpError::new(e.to_string()));
        }
        self.settle().await;
        Ok(())
    }

    /// Queues a steering message (delivered after the current tool calls).
    pub fn steer(&self, text: &str, images: Vec<ImageContent>) {
        let text = self.expand(text);
        self.inner.queue_steer(text, images);
    }

    /// Queues a follow-up message (delivered when the agent would stop).
    pub fn follow_up(&self, text: &str, images: Vec<ImageContent>) {
        let text = self.expand(text);
        self.inner.queue_follow_up(text, images);
    }

    /// Stops the run, a retry sleep and a running compaction, and waits until idle.
    pub async fn abort(&self) {
        self.abort_retry_and_wait().await;
        self.inner.agent.abort();
        self.inner.agent.wait_for_idle().await;
    }
}
