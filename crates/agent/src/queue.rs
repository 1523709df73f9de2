//! Steering and follow-up queues.

use std::collections::VecDeque;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::message::AgentMessage;

/// How many queued messages one poll releases.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum QueueMode {
    /// Everything queued.
    #[serde(rename = "all")]
    All,
    /// The oldest message only.
    #[default]
    #[serde(rename = "one-at-a-time")]
    OneAtATime,
}

/// A queue of messages waiting to be injected into a run.
#[derive(Debug, Default)]
pub struct PendingMessageQueue {
    inner: Mutex<(QueueMode, VecDeque<AgentMessage>)>,
}

impl PendingMessageQueue {
    /// An empty queue draining in `mode`.
    pub fn new(mode: QueueMode) -> Self {
        Self {
            inner: Mutex::new((mode, VecDeque::new())),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (QueueMode, VecDeque<AgentMessage>)> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds a message at the back.
    pub fn enqueue(&self, message: AgentMessage) {
        self.lock().1.push_back(message);
    }

    /// Takes what the mode releases: everything, or the oldest message.
    pub fn drain(&self) -> Vec<AgentMessage> {
        let mut guard = self.lock();
        let (mode, queue) = &mut *guard;
        match mode {
            QueueMode::All => queue.drain(..).collect(),
            QueueMode::OneAtATime => queue.pop_front().into_iter().collect(),
        }
    }

    /// Removes everything.
    pub fn clear(&self) {
        self.lock().1.clear();
    }

    /// How many messages wait.
    pub fn len(&self) -> usize {
        self.lock().1.len()
    }

    /// Whether none wait.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A copy of the waiting messages, oldest first.
    pub fn snapshot(&self) -> Vec<AgentMessage> {
        self.lock().1.iter().cloned().collect()
    }

    /// The drain mode.
    pub fn mode(&self) -> QueueMode {
        self.lock().0
    }

    /// Changes the drain mode.
    pub fn set_mode(&self, mode: QueueMode) {
        self.lock().0 = mode;
    }
}
