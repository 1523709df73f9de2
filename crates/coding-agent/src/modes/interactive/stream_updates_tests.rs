#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use pi_agent_core::{AgentEvent, AgentMessage};
use pi_ai::{AssistantMessage, AssistantMessageEvent};

use super::*;

fn update(text: &str) -> AgentSessionEvent {
    let mut message = AssistantMessage::default();
    message
        .content
        .push(pi_ai::AssistantBlock::Text(pi_ai::TextContent::new(text)));
    let message = Arc::new(message);
    AgentSessionEvent::Agent(AgentEvent::MessageUpdate {
        message: Arc::clone(&message),
        assistant_message_event: AssistantMessageEvent::Start { partial: message },
    })
}

fn end() -> AgentSessionEvent {
    AgentSessionEvent::Agent(AgentEvent::MessageEnd {
        message: AgentMessage::Llm(pi_ai::Message::Assistant(
            AssistantMessage::default().into(),
        )),
    })
}

/// What the UI would see: the queue's messages resolved as the run loop does.
fn seen(pending: &PendingUpdate, queue: Vec<Forward>) -> Vec<String> {
    queue
        .into_iter()
        .filter_map(|f| match f {
            Forward::Event(e) => Some(*e),
            Forward::UpdateReady(marker) => pending.take(marker),
        })
        .map(|e| match e {
            AgentSessionEvent::Agent(AgentEvent::MessageUpdate { message, .. }) => {
                format!("update {}", message.text())
            }
            AgentSessionEvent::Agent(event) => event.kind().to_owned(),
            AgentSessionEvent::Session(_) => "session".to_owned(),
        })
        .collect()
}

#[test]
fn updates_waiting_for_the_ui_collapse_into_the_newest() {
    let pending = PendingUpdate::new();
    let mut queue = Vec::new();
    for text in ["a", "ab", "abc"] {
        pending.route(&update(text), |f| queue.push(f));
    }
    assert_eq!(queue.len(), 1);
    assert_eq!(seen(&pending, queue), ["update abc"]);
}

#[test]
fn an_update_is_seen_before_the_event_that_followed_it() {
    let pending = PendingUpdate::new();
    let mut queue = Vec::new();
    pending.route(&update("a"), |f| queue.push(f));
    pending.route(&update("ab"), |f| queue.push(f));
    pending.route(&end(), |f| queue.push(f));
    // The next message streams while the UI has not caught up.
    pending.route(&update("x"), |f| queue.push(f));
    assert_eq!(
        seen(&pending, queue),
        ["update ab", "message_end", "update x"]
    );
}

#[test]
fn an_update_taken_by_the_ui_lets_the_next_one_queue_again() {
    let pending = PendingUpdate::new();
    let mut queue = Vec::new();
    pending.route(&update("a"), |f| queue.push(f));
    assert_eq!(seen(&pending, std::mem::take(&mut queue)), ["update a"]);
    pending.route(&update("ab"), |f| queue.push(f));
    assert_eq!(seen(&pending, queue), ["update ab"]);
}
