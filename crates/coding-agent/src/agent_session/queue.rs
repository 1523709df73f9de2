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
        let mut blocks = vec![InputBlock::text(text)];
        blocks.extend(images.into_iter().map(InputBlock::Image));
        self.agent
            .steer(AgentMessage::from(UserMessage::blocks(blocks)));
    }

    pub(super) fn queue_follow_up(&self, text: String, images: Vec<ImageContent>) {
        lock(&self.queued).follow_up.push(text.clone());
        self.emit_queue_update();
        let mut blocks = vec![InputBlock::text(text)];
        blocks.extend(images.into_iter().map(InputBlock::Image));
        self.agent
            .follow_up(AgentMessage::from(UserMessage::blocks(blocks)));
    }
}
