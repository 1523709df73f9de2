//! The steering and follow-up queues: the texts shown to users, kept in step with the
//! messages handed to the agent.

use pi_agent_core::AgentMessage;
use pi_ai::{ImageContent, InputBlock, UserMessage};

use super::{AgentSession, Inner, lock};

impl AgentSession {
    /// Queued steering texts.
    pub fn steering_texts(&self) -> Vec<String> {
        lock(&self.inner.queued).steering.clone()
    }

    /// Queued follow-up texts.
    pub fn follow_up_texts(&self) -> Vec<String> {
        lock(&self.inner.queued).follow_up.clone()
    }

    /// Steering plus follow-up messages waiting.
    pub fn pending_message_count(&self) -> usize {
        let queued = lock(&self.inner.queued);
        queued.steering.len() + queued.follow_up.len()
    }

    /// Empties both queues and returns what they held.
    pub fn clear_queue(&self) -> (Vec<String>, Vec<String>) {
        let taken = std::mem::take(&mut *lock(&self.inner.queued));
        self.inner.agent.clear_all_queues();
        self.inner.emit_queue_update();
        (taken.steering, taken.follow_up)
    }
}

impl Inner {
    pub(super) fn queue_steer(&self, text: String, images: Vec<ImageContent>) {
        lock(&self.queued).steering.push(text.clone());
        self.emit_queue_update();
        let blocks = self.queued_blocks(&text, &images);
        self.agent
            .steer(AgentMessage::from(UserMessage::blocks(blocks)));
    }

    pub(super) fn queue_follow_up(&self, text: String, images: Vec<ImageContent>) {
        lock(&self.queued).follow_up.push(text.clone());
        self.emit_queue_update();
        let blocks = self.queued_blocks(&text, &images);
        self.agent
            .follow_up(AgentMessage::from(UserMessage::blocks(blocks)));
    }

    /// A queued message's content: its images resized like a prompt's (pi 1.5.1), the
    /// notes on them after the text (the queue still shows the text alone).
    fn queued_blocks(&self, text: &str, images: &[ImageContent]) -> Vec<InputBlock> {
        let (text, images) = self.prepare_user_images(text, images);
        let mut blocks = vec![InputBlock::text(text)];
        blocks.extend(images.into_iter().map(InputBlock::Image));
        blocks
    }
}

/// Whether a delivered user message's `text` is the queued `queued` text (with image
/// notes after it when its images were resized).
pub(super) fn is_queued_text(queued: &str, text: &str) -> bool {
    text.strip_prefix(queued)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with("\n\n["))
}
