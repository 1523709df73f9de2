//! Session events on their way to the UI task, with streaming updates coalesced.
//!
//! Each `message_update` carries the whole partial message, shared with the agent; once an
//! update waits in the UI's queue, the agent's next delta must copy the message. When the
//! UI falls behind a fast stream, every waiting update would hold its own copy (memory
//! growing with the square of the reply). Only the newest update matters to the view (it
//! draws the message, not the delta), so at most one waits: a newer one replaces it.

use std::sync::{Arc, Mutex, MutexGuard};

use pi_agent_core::AgentEvent;

use crate::session_event::AgentSessionEvent;

/// The update waiting for the UI, if any, under the number of the marker that announced it.
#[derive(Default)]
pub struct PendingUpdate(Mutex<Slot>);

#[derive(Default)]
struct Slot {
    markers: u64,
    waiting: Option<(u64, AgentSessionEvent)>,
}

/// What the subscriber sends to the UI queue.
pub enum Forward {
    /// An event, in order.
    Event(Box<AgentSessionEvent>),
    /// An update is waiting in [`PendingUpdate`] under this marker; take it when this is
    /// handled. (A marker whose update was sent on already finds nothing, even when a later
    /// update waits under a later marker.)
    UpdateReady(u64),
}

fn lock(slot: &Mutex<Slot>) -> MutexGuard<'_, Slot> {
    slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl PendingUpdate {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Routes one session event; `send` queues a message for the UI. An update replaces
    /// the waiting one; any other event first sends the waiting update, so the UI sees
    /// every event in the order it happened.
    pub fn route(&self, event: &AgentSessionEvent, mut send: impl FnMut(Forward)) {
        let mut slot = lock(&self.0);
        if matches!(
            event,
            AgentSessionEvent::Agent(AgentEvent::MessageUpdate { .. })
        ) {
            match slot.waiting.as_mut() {
                Some((_, update)) => *update = event.clone(),
                None => {
                    slot.markers += 1;
                    let marker = slot.markers;
                    slot.waiting = Some((marker, event.clone()));
                    send(Forward::UpdateReady(marker));
                }
            }
            return;
        }
        if let Some((_, update)) = slot.waiting.take() {
            send(Forward::Event(Box::new(update)));
        }
        send(Forward::Event(Box::new(event.clone())));
    }

    /// The update announced by `marker`, taken; none when a later event sent it already.
    pub fn take(&self, marker: u64) -> Option<AgentSessionEvent> {
        let mut slot = lock(&self.0);
        match &slot.waiting {
            Some((waiting, _)) if *waiting == marker => slot.waiting.take().map(|(_, e)| e),
            _ => None,
        }
    }
}

#[cfg(test)]
#[path = "stream_updates_tests.rs"]
mod tests;
