//! The stateful Agent: state reduction, listeners, prompt/continue rules, queues, abort.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Behaviour, Reply, Script, TestTool, kinds, model, recorder, text, tools};
use futures_util::future::BoxFuture;
use pi_agent_core::{Agent, AgentError, AgentEvent, AgentListener, AgentOptions, QueueMode};
use pi_ai::{ImageContent, InputBlock, Message, UserContent, UserMessage};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn agent(script: &Script, tools: Vec<Arc<dyn pi_agent_core::AgentTool>>) -> Arc<Agent> {
    Arc::new(Agent::new(AgentOptions {
        system_prompt: "sys".into(),
        model: Some(model()),
        tools,
        stream_fn: script.stream_fn(),
        ..AgentOptions::default()
    }))
}

#[tokio::test]
async fn prompt_runs_to_completion_and_updates_state() {
    let script = Script::new(vec![text("hello")]);
    let agent = agent(&script, vec![]);
    let (events, listener) = recorder();
    agent.subscribe_fn(listener);
    agent.prompt("hi").await.unwrap();
    let state = agent.state();
    assert!(!state.is_streaming);
    assert!(state.streaming_message.is_none());
    assert_eq!(state.messages.len(), 2);
    assert_eq!(state.messages[1].as_assistant().unwrap().text(), "hello");
    assert_eq!(kinds(&events.lock().unwrap()).last(), Some(&"agent_end"));
}

#[tokio::test]
async fn prompt_accepts_images_and_message_batches() {
    let script = Script::new(vec![text("a"), text("b")]);
    let agent = agent(&script, vec![]);
    agent
        .prompt(pi_agent_core::PromptInput::Text {
            text: "look".into(),
            images: vec![ImageContent::new("aGk=", "image/png")],
        })
        .await
        .unwrap();
    let Message::User(u) = &script.context(0).messages[0] else {
        panic!()
    };
    let UserContent::Blocks(blocks) = &u.content else {
        panic!()
    };
    assert!(matches!(blocks[1], InputBlock::Image(_)));
    agent
        .prompt(vec![
            UserMessage::text("one").into(),
            UserMessage::text("two").into(),
        ])
        .await
        .unwrap();
    assert_eq!(agent.messages().len(), 5);
}

#[tokio::test]
async fn prompt_continue_and_reset_while_running_are_refused() {
    let script = Script::new(vec![Reply::Hang("...".into())]);
    let agent = agent(&script, vec![]);
    let running = {
        let agent = Arc::clone(&agent);
        tokio::spawn(async move { agent.prompt("first").await })
    };
    while !agent.is_streaming() {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let err = agent.prompt("second").await.unwrap_err();
    assert_eq!(err, AgentError::AlreadyPrompting);
    assert!(
        err.to_string()
            .starts_with("Agent is already processing a prompt.")
    );
    assert_eq!(
        agent.continue_run().await.unwrap_err(),
        AgentError::AlreadyContinuing
    );
    // A reset would clear what the run is still writing to: refused, nothing lost.
    assert_eq!(agent.reset().unwrap_err(), AgentError::AlreadyResetting);
    assert_eq!(agent.messages().len(), 1);
    agent.abort();
    running.await.unwrap().unwrap();
    assert!(!agent.is_streaming());
}

struct SlowListener {
    order: Arc<Mutex<Vec<String>>>,
    name: &'static str,
}

impl AgentListener for SlowListener {
    fn on_event<'a>(
        &'a self,
        event: &'a AgentEvent,
        _cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if event.kind() == "agent_end" {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            self.order
                .lock()
                .unwrap()
                .push(format!("{}:{}", self.name, event.kind()));
        })
    }
}

#[tokio::test]
async fn listeners_run_in_order_and_the_run_settles_after_them() {
    let script = Script::new(vec![text("hi")]);
    let agent = agent(&script, vec![]);
    let order = Arc::new(Mutex::new(Vec::new()));
    agent.subscribe(Arc::new(SlowListener {
        order: Arc::clone(&order),
        name: "first",
    }));
    agent.subscribe(Arc::new(SlowListener {
        order: Arc::clone(&order),
        name: "second",
    }));
    agent.prompt("go").await.unwrap();
    let order = order.lock().unwrap().clone();
    // prompt() returned only after both agent_end listeners finished, first before second.
    assert_eq!(
        order[order.len() - 2..],
        ["first:agent_end".to_owned(), "second:agent_end".to_owned()]
    );
    assert_eq!(order[0], "first:agent_start");
    assert_eq!(order[1], "second:agent_start");
}

#[tokio::test]
async fn unsubscribe_stops_delivery() {
    let script = Script::new(vec![text("a"), text("b")]);
    let agent = agent(&script, vec![]);
    let (events, listener) = recorder();
    let id = agent.subscribe_fn(listener);
    agent.prompt("one").await.unwrap();
    let seen = events.lock().unwrap().len();
    agent.unsubscribe(id);
    agent.prompt("two").await.unwrap();
    assert_eq!(events.lock().unwrap().len(), seen);
}

#[tokio::test]
async fn wait_for_idle_resolves_after_the_run() {
    let script = Script::new(vec![text("done")]);
    let agent = agent(&script, vec![]);
    agent.wait_for_idle().await;
    let run = {
        let agent = Arc::clone(&agent);
        tokio::spawn(async move { agent.prompt("go").await })
    };
    tokio::time::sleep(Duration::from_millis(5)).await;
    agent.wait_for_idle().await;
    assert_eq!(agent.messages().len(), 2);
    run.await.unwrap().unwrap();
}

#[tokio::test]
async fn continue_rules() {
    let script = Script::new(vec![
        text("from steering"),
        text("from follow-up"),
        text("retry"),
    ]);
    let agent = agent(&script, vec![]);
    assert_eq!(
        agent.continue_run().await.unwrap_err(),
        AgentError::NoMessages
    );
    agent.append_message(UserMessage::text("q").into());
    agent.append_message(pi_ai::AssistantMessage::empty("a", "b", "c").into());
    assert_eq!(
        agent.continue_run().await.unwrap_err(),
        AgentError::ContinueFromAssistant
    );
    assert_eq!(
        agent.continue_run().await.unwrap_err().to_string(),
        "Cannot continue from message role: assistant"
    );
    // Queued steering is taken first, then follow-ups.
    agent.follow_up(UserMessage::text("later"));
    agent.steer(UserMessage::text("now"));
    agent.continue_run().await.unwrap();
    let last_user = script.context(0).messages.last().cloned().unwrap();
    assert_eq!(last_user.role(), "user");
    assert_eq!(
        agent.follow_up_messages().len(),
        0,
        "the follow-up ran when the agent would stop"
    );
    assert_eq!(script.calls(), 2);
    // Ending in a user message: continue calls the model again.
    agent.append_message(UserMessage::text("again").into());
    agent.continue_run().await.unwrap();
    assert_eq!(
        agent
            .messages()
            .last()
            .unwrap()
            .as_assistant()
            .unwrap()
            .text(),
        "retry"
    );
}

#[tokio::test]
async fn abort_ends_the_run_as_aborted_and_sets_the_error() {
    let script = Script::new(vec![Reply::Hang("thinking about".into())]);
    let agent = agent(&script, vec![]);
    let run = {
        let agent = Arc::clone(&agent);
        tokio::spawn(async move { agent.prompt("go").await })
    };
    while agent.state().streaming_message.is_none() {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    agent.abort();
    run.await.unwrap().unwrap();
    let state = agent.state();
    let last = state
        .messages
        .last()
        .unwrap()
        .as_assistant()
        .unwrap()
        .clone();
    assert_eq!(last.stop_reason, pi_ai::StopReason::Aborted);
    assert_eq!(last.text(), "thinking about");
    assert_eq!(state.error_message.as_deref(), Some("Request was aborted"));
}

#[tokio::test]
async fn pending_tool_calls_are_tracked_while_tools_run() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let script = Script::new(vec![
        tools(&[("t1", "slow", json!({"value": "1"}))]),
        text("done"),
    ]);
    let agent = agent(
        &script,
        vec![TestTool::new(
            "slow",
            Behaviour {
                delay_ms: 30,
                ..Default::default()
            },
            &log,
        )],
    );
    let seen = Arc::new(Mutex::new(Vec::new()));
    {
        let seen = Arc::clone(&seen);
        let probe = Arc::clone(&agent);
        // Listeners run while the agent holds no state lock, so reading state is safe.
        agent.subscribe_fn(move |e| {
            if e.kind() == "tool_execution_start" || e.kind() == "tool_execution_end" {
                seen.lock()
                    .unwrap()
                    .push(probe.state().pending_tool_calls.len());
            }
        });
    }
    agent.prompt("go").await.unwrap();
    assert_eq!(*seen.lock().unwrap(), [1, 0]);
    assert!(agent.state().pending_tool_calls.is_empty());
}

#[tokio::test]
async fn steering_and_follow_ups_queued_during_a_run() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let script = Script::new(vec![
        tools(&[("t1", "slow", json!({"value": "1"}))]),
        text("after steering"),
        text("after follow-up"),
    ]);
    let agent = agent(
        &script,
        vec![TestTool::new(
            "slow",
            Behaviour {
                delay_ms: 20,
                ..Default::default()
            },
            &log,
        )],
    );
    {
        let queue = Arc::clone(&agent);
        agent.subscribe_fn(move |e| {
            if e.kind() == "tool_execution_start" {
                queue.steer(UserMessage::text("steer!"));
                queue.follow_up(UserMessage::text("follow!"));
            }
        });
    }
    agent.prompt("go").await.unwrap();
    let roles: Vec<String> = agent
        .messages()
        .iter()
        .map(|m| m.role().to_owned())
        .collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "toolResult",
            "user",
            "assistant",
            "user",
            "assistant"
        ]
    );
    assert!(!agent.has_queued_messages());
}

#[tokio::test]
async fn queues_clear_separately_or_together_and_modes_switch() {
    let script = Script::new(vec![]);
    let agent = agent(&script, vec![]);
    agent.steer(UserMessage::text("s"));
    agent.follow_up(UserMessage::text("f"));
    agent.clear_steering_queue();
    assert!(agent.steering_messages().is_empty());
    assert_eq!(agent.follow_up_messages().len(), 1);
    agent.steer(UserMessage::text("s"));
    agent.clear_all_queues();
    assert!(!agent.has_queued_messages());
    assert_eq!(agent.steering_mode(), QueueMode::OneAtATime);
    agent.set_steering_mode(QueueMode::All);
    agent.set_follow_up_mode(QueueMode::All);
    assert_eq!(
        (agent.steering_mode(), agent.follow_up_mode()),
        (QueueMode::All, QueueMode::All)
    );
    assert_eq!(
        serde_json::to_string(&QueueMode::OneAtATime).unwrap(),
        "\"one-at-a-time\""
    );
}

#[tokio::test]
async fn reset_and_setters() {
    let script = Script::new(vec![text("x")]);
    let agent = agent(&script, vec![]);
    agent.prompt("go").await.unwrap();
    agent.steer(UserMessage::text("s"));
    agent.reset().unwrap();
    assert!(agent.messages().is_empty());
    assert!(!agent.has_queued_messages());
    agent.set_system_prompt("new prompt");
    agent.set_thinking_level(pi_ai::ThinkingLevel::High);
    agent.replace_messages(vec![UserMessage::text("a").into()]);
    agent.continue_run().await.unwrap();
    assert_eq!(
        script.context(1).system_prompt.as_deref(),
        Some("new prompt")
    );
    assert_eq!(
        script.options.lock().unwrap()[1].reasoning,
        Some(pi_ai::ThinkingLevel::High)
    );
    agent.clear_messages();
    assert!(agent.messages().is_empty());
}

#[tokio::test]
async fn provider_error_sets_the_error_message() {
    let script = Script::new(vec![Reply::Error("429 Rate limit".into())]);
    let agent = agent(&script, vec![]);
    agent.prompt("go").await.unwrap();
    assert_eq!(
        agent.state().error_message.as_deref(),
        Some("429 Rate limit")
    );
}

#[tokio::test]
async fn a_panicking_listener_does_not_break_the_run() {
    let script = Script::new(vec![text("fine")]);
    let agent = agent(&script, vec![]);
    agent.subscribe_fn(|e| assert_ne!(e.kind(), "message_update", "listener bug"));
    agent.prompt("go").await.unwrap();
    assert_eq!(
        agent
            .messages()
            .last()
            .unwrap()
            .as_assistant()
            .unwrap()
            .text(),
        "fine"
    );
}

struct ExplodingHooks;

impl pi_agent_core::AgentHooks for ExplodingHooks {
    fn convert_to_llm(&self, _messages: &[pi_agent_core::AgentMessage]) -> Vec<Message> {
        panic!("convert_to_llm broke")
    }
}

#[tokio::test]
async fn a_failure_inside_the_loop_becomes_an_error_message_and_agent_end() {
    let script = Script::new(vec![text("never")]);
    let agent = agent(&script, vec![]);
    agent.set_hooks(Arc::new(ExplodingHooks));
    let (events, listener) = recorder();
    agent.subscribe_fn(listener);
    agent.prompt("go").await.unwrap();
    let k = kinds(&events.lock().unwrap());
    assert_eq!(k.last(), Some(&"agent_end"));
    let last = agent
        .messages()
        .last()
        .unwrap()
        .as_assistant()
        .unwrap()
        .clone();
    assert_eq!(last.stop_reason, pi_ai::StopReason::Error);
    assert_eq!(last.error_message.as_deref(), Some("convert_to_llm broke"));
    assert_eq!(
        agent.state().error_message.as_deref(),
        Some("convert_to_llm broke")
    );
    assert_eq!(script.calls(), 0);
    assert!(!agent.is_streaming());
}
