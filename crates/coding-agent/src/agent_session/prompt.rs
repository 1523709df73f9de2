//! Sending prompts: extension commands and `input` handlers first, template and skill
//! expansion, queueing while the agent streams, otherwise a run to the end; and aborting.

use std::sync::atomic::Ordering;

use tokio_util::sync::CancellationToken;

use pi_agent_core::AgentMessage;
use pi_ai::{ImageContent, InputBlock, UserMessage};

use crate::extensions::RunTrigger;

use super::{
    AgentSession, Disposition, Preflight, PromptOptions, SessionOpError, StreamingBehavior, lock,
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
        // A manual compaction or a branch summary holds prompts off (pi 1.6.0); an
        // automatic compaction does not.
        if lock(&self.inner.compaction_cancel).is_some()
            || lock(&self.inner.branch_summary_cancel).is_some()
        {
            let error = SessionOpError::new(
                "Cannot submit a prompt while compaction is in progress. Wait for compaction to finish and retry.",
            );
            report(Err(error.0.clone()));
            return Err(error);
        }
        let mut options = options;
        let source = options
            .source
            .clone()
            .unwrap_or_else(|| "interactive".into());
        // As pi 1.6.0: only a prompt that is queued because the agent streams says how.
        let queued_as = options.streaming_behavior.filter(|_| self.is_streaming());
        let text = match self
            .run_input_handlers(text, &options.images, &source, queued_as)
            .await
        {
            None => {
                report(Ok(Disposition::Handled));
                self.settle_handled(settled_before);
                return Ok(());
            }
            Some((text, images)) => {
                if let Some(images) = images {
                    options.images = images;
                }
                text
            }
        };
        let text = if options.expand_templates {
            self.expand(&text)
        } else {
            text
        };
        // A run that is starting counts as busy too (pi 1.2.0): a message queued now joins it.
        if self.is_streaming() || self.inner.ext.starting.load(Ordering::SeqCst) > 0 {
            let Some(behavior) = options.streaming_behavior else {
                let error = SessionOpError::new(crate::extensions::actions::BUSY_PROMPT);
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
        self.inner.flush_pending_custom(false);
        self.sync_mcp_tools().await;
        // The run records its tools: restored tools that did not register by now are dropped.
        self.drop_pending_tools();
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
        self.record_thinking_level();
        // The system message is recorded before the prompt, so it is not younger than it.
        let started = pi_ai::oauth::now_ms();
        // Images are resized to the model's profile before they enter the conversation.
        let (user_text, user_images) = self.inner.prepare_user_images(&text, &options.images);
        let mut blocks = vec![InputBlock::text(user_text)];
        blocks.extend(user_images.into_iter().map(InputBlock::Image));
        let mut messages = vec![AgentMessage::from(UserMessage::blocks(blocks))];
        let trigger = RunTrigger::User {
            prompt: text.clone(),
            images: (!options.images.is_empty()).then(|| options.images.clone()),
        };
        messages.extend(self.extension_prompt_messages(&trigger).await);
        // pi 1.5 records the system prompt (or what changed in it) before the prompt.
        if let Some(system) = self.system_message_for_run(started) {
            messages.insert(0, system);
        }
        report(Ok(Disposition::Started));
        // The previous run may still be finishing after its agent_end.
        self.inner.agent.wait_for_idle().await;
        let run = self.run_guard();
        if let Err(e) = self.inner.agent.prompt(messages).await {
            return Err(SessionOpError::new(e.to_string()));
        }
        self.settle(&run).await;
        Ok(())
    }

    /// Queues a steering message (delivered after the current tool calls), after the
    /// extensions' `input` handlers (`source` is `rpc` or `interactive`).
    pub async fn steer(
        &self,
        text: &str,
        images: Vec<ImageContent>,
        source: &str,
    ) -> Result<Disposition, SessionOpError> {
        self.queue_user_input(text, images, StreamingBehavior::Steer, source)
            .await
    }

    /// Queues a follow-up message (delivered when the agent would stop), after the
    /// extensions' `input` handlers.
    pub async fn follow_up(
        &self,
        text: &str,
        images: Vec<ImageContent>,
        source: &str,
    ) -> Result<Disposition, SessionOpError> {
        self.queue_user_input(text, images, StreamingBehavior::FollowUp, source)
            .await
    }

    /// Queues a steering message at once, without the extensions' `input` handlers (which
    /// may take time): for callers that must queue in arrival order (the gateway).
    pub fn steer_now(&self, text: &str, images: Vec<ImageContent>) {
        let text = self.expand(text);
        self.inner.queue_steer(text, images);
    }

    /// Queues a follow-up message at once, without the extensions' `input` handlers (see
    /// [`Self::steer_now`]).
    pub fn follow_up_now(&self, text: &str, images: Vec<ImageContent>) {
        let text = self.expand(text);
        self.inner.queue_follow_up(text, images);
    }

    /// pi 1.6.0's `_queueUserInput`: an extension command cannot be queued; `input`
    /// handlers run (told the behaviour while the agent streams) and may handle or change
    /// the text; then templates and skills expand and the text is queued.
    async fn queue_user_input(
        &self,
        text: &str,
        images: Vec<ImageContent>,
        behavior: StreamingBehavior,
        source: &str,
    ) -> Result<Disposition, SessionOpError> {
        if text.starts_with('/')
            && let Some((command, _)) = self.inner.ext.runtime.find_command(text)
        {
            return Err(SessionOpError::new(format!(
                "Extension command \"/{}\" cannot be queued. Use prompt() or execute the command when not streaming.",
                command.invocation_name
            )));
        }
        let queued_as = self.is_streaming().then_some(behavior);
        let Some((text, changed)) = self
            .run_input_handlers(text, &images, source, queued_as)
            .await
        else {
            return Ok(Disposition::Handled);
        };
        let text = self.expand(&text);
        let images = changed.unwrap_or(images);
        match behavior {
            StreamingBehavior::Steer => self.inner.queue_steer(text, images),
            StreamingBehavior::FollowUp => self.inner.queue_follow_up(text, images),
        }
        Ok(Disposition::Queued)
    }

    /// The extensions' `input` handlers: `None` when one handled the text, else the text
    /// (perhaps changed) and the images when a handler replaced them.
    async fn run_input_handlers(
        &self,
        text: &str,
        images: &[ImageContent],
        source: &str,
        queued_as: Option<StreamingBehavior>,
    ) -> Option<(String, Option<Vec<ImageContent>>)> {
        let runtime = self.inner.ext.runtime.clone();
        if !runtime.has_handlers("input") {
            return Some((text.to_owned(), None));
        }
        let images = (!images.is_empty()).then(|| images.to_vec());
        match runtime
            .emit_input(
                text,
                images,
                source,
                queued_as.map(StreamingBehavior::as_str),
                CancellationToken::new(),
            )
            .await
        {
            crate::extensions::InputOutcome::Handled => None,
            crate::extensions::InputOutcome::Transform { text, images } => Some((text, images)),
            crate::extensions::InputOutcome::Continue => Some((text.to_owned(), None)),
        }
    }

    /// Stops the run, a retry sleep and a running compaction, and waits until idle.
    pub async fn abort(&self) {
        self.abort_retry_and_wait().await;
        self.inner.agent.abort();
        self.inner.agent.wait_for_idle().await;
    }
}
