//! The combination rules of the extension runtime with several extensions at once, each a
//! Rust in-process extension: load order, first block wins with in-place input changes,
//! chained `context`, an `input` transform then `handled`, a cancelling
//! `session_before_compact`, merged `tool_result` patches, `message_end` replacement.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use pi_agent_core::AgentMessage;
use pi_ai::{InputBlock, UserMessage};
use pi_coding_agent::extensions::outcome::InputOutcome;
use pi_coding_agent::extensions::{
    Extension, ExtensionBackend, ExtensionContext, ExtensionEvent, ExtensionRuntime, Registrations,
    RustBackend,
};

type Handler = Box<dyn Fn(&mut ExtensionEvent) -> Result<Option<Value>, String> + Send + Sync>;

/// A test extension: one handler per event type, and a log of what it saw.
struct Scripted {
    path: String,
    handlers: Vec<(&'static str, Handler)>,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Extension for Scripted {
    fn path(&self) -> &str {
        &self.path
    }

    fn register(&self) -> Registrations {
        Registrations {
            events: self.handlers.iter().map(|(e, _)| *e).collect(),
            ..Registrations::default()
        }
    }

    fn on_event<'a>(
        &'a self,
        event: &'a mut ExtensionEvent,
        _ctx: &'a ExtensionContext,
    ) -> BoxFuture<'a, Result<Option<Value>, String>> {
        Box::pin(async move {
            self.seen
                .lock()
                .unwrap()
                .push(format!("{}:{}", self.path, event.kind()));
            match self.handlers.iter().find(|(e, _)| *e == event.kind()) {
                Some((_, handler)) => handler(event),
                None => Ok(None),
            }
        })
    }
}

fn runtime(extensions: Vec<Scripted>) -> ExtensionRuntime {
    let backends: Vec<Arc<dyn ExtensionBackend>> = extensions
        .into_iter()
        .map(|e| {
            Arc::new(RustBackend::new(Arc::new(e), std::env::temp_dir()))
                as Arc<dyn ExtensionBackend>
        })
        .collect();
    ExtensionRuntime::new(backends, Vec::new())
}

fn ext(
    path: &str,
    seen: &Arc<Mutex<Vec<String>>>,
    handlers: Vec<(&'static str, Handler)>,
) -> Scripted {
    Scripted {
        path: path.into(),
        handlers,
        seen: seen.clone(),
    }
}

#[tokio::test]
async fn tool_call_first_block_wins_and_input_changes_carry_over() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let rewrite: Handler = Box::new(|event| {
        if let ExtensionEvent::ToolCall { input, .. } = event {
            input["command"] = json!("ls -la");
        }
        Ok(None)
    });
    let gate: Handler = Box::new(|event| {
        let ExtensionEvent::ToolCall { input, .. } = event else {
            return Ok(None);
        };
        if input["command"] == "ls -la" {
            Ok(Some(json!({"block": true, "reason": "no listing"})))
        } else {
            Ok(None)
        }
    });
    let never: Handler = Box::new(|_| Ok(Some(json!({"block": true, "reason": "third"}))));
    let rt = runtime(vec![
        ext("a", &seen, vec![("tool_call", rewrite)]),
        ext("b", &seen, vec![("tool_call", gate)]),
        ext("c", &seen, vec![("tool_call", never)]),
    ]);
    let outcome = rt
        .emit_tool_call(
            "bash",
            "t1",
            None,
            json!({"command": "ls"}),
            CancellationToken::new(),
        )
        .await;
    assert!(outcome.block);
    assert_eq!(outcome.reason.as_deref(), Some("no listing"));
    assert_eq!(outcome.input, json!({"command": "ls -la"}));
    assert_eq!(*seen.lock().unwrap(), ["a:tool_call", "b:tool_call"]);
}

#[tokio::test]
async fn a_failing_tool_call_handler_blocks_with_its_error() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let fails: Handler = Box::new(|_| Err("gate crashed".into()));
    let rt = runtime(vec![ext("a", &seen, vec![("tool_call", fails)])]);
    let outcome = rt
        .emit_tool_call("bash", "t1", None, json!({}), CancellationToken::new())
        .await;
    assert!(outcome.block);
    assert_eq!(outcome.reason.as_deref(), Some("gate crashed"));
}

fn user(text: &str) -> AgentMessage {
    AgentMessage::from(UserMessage::text(text))
}

#[tokio::test]
async fn context_handlers_chain() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let drop_first: Handler = Box::new(|event| {
        let ExtensionEvent::Context { messages } = event else {
            return Ok(None);
        };
        Ok(Some(json!({"messages": messages[1..].to_vec()})))
    });
    let append: Handler = Box::new(|event| {
        let ExtensionEvent::Context { messages } = event else {
            return Ok(None);
        };
        let mut list = messages.clone();
        list.push(AgentMessage::from(UserMessage::text("added")));
        Ok(Some(json!({ "messages": list })))
    });
    let rt = runtime(vec![
        ext("a", &seen, vec![("context", drop_first)]),
        ext("b", &seen, vec![("context", append)]),
    ]);
    let out = rt
        .emit_context(&[user("one"), user("two")], CancellationToken::new())
        .await
        .unwrap();
    let texts: Vec<String> = out
        .iter()
        .map(|m| {
            serde_json::to_value(m).unwrap()["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    assert_eq!(texts, ["two", "added"]);
}

#[tokio::test]
async fn input_transform_then_handled_stops_and_transforms_chain() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let shout: Handler = Box::new(|event| {
        let ExtensionEvent::Input { text, .. } = event else {
            return Ok(None);
        };
        Ok(Some(
            json!({"action": "transform", "text": text.to_uppercase()}),
        ))
    });
    let handle_hi: Handler = Box::new(|event| {
        let ExtensionEvent::Input { text, .. } = event else {
            return Ok(None);
        };
        if text == "HI" {
            Ok(Some(json!({"action": "handled"})))
        } else {
            Ok(Some(
                json!({"action": "transform", "text": format!("{text}!")}),
            ))
        }
    });
    let after: Handler = Box::new(|_| Ok(Some(json!({"action": "transform", "text": "late"}))));
    let rt = runtime(vec![
        ext("a", &seen, vec![("input", shout)]),
        ext("b", &seen, vec![("input", handle_hi)]),
        ext("c", &seen, vec![("input", after)]),
    ]);
    let handled = rt
        .emit_input("hi", None, "rpc", None, CancellationToken::new())
        .await;
    assert_eq!(handled, InputOutcome::Handled);
    assert_eq!(*seen.lock().unwrap(), ["a:input", "b:input"]);
    let rt2 = runtime(vec![]);
    assert_eq!(
        rt2.emit_input("x", None, "rpc", None, CancellationToken::new())
            .await,
        InputOutcome::Continue
    );
}

#[tokio::test]
async fn session_before_compact_first_cancel_wins() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let supply: Handler = Box::new(|_| Ok(Some(json!({"compaction": {"summary": "mine"}}))));
    let cancel: Handler = Box::new(|_| Ok(Some(json!({"cancel": true}))));
    let never: Handler = Box::new(|_| Ok(Some(json!({"compaction": {"summary": "late"}}))));
    let rt = runtime(vec![
        ext("a", &seen, vec![("session_before_compact", supply)]),
        ext("b", &seen, vec![("session_before_compact", cancel)]),
        ext("c", &seen, vec![("session_before_compact", never)]),
    ]);
    let event = ExtensionEvent::SessionBeforeCompact {
        preparation: json!({}),
        branch_entries: Vec::new(),
        custom_instructions: None,
        reason: pi_coding_agent::session_event::CompactionReason::Manual,
        will_retry: false,
    };
    let outcome = rt
        .emit_session_before(&event, CancellationToken::new())
        .await;
    assert!(outcome.cancel);
    assert_eq!(seen.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn tool_result_patches_merge_and_errors_do_not_stop_dispatch() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let content: Handler = Box::new(|_| {
        Ok(Some(
            json!({"content": [{"type": "text", "text": "redacted"}]}),
        ))
    });
    let broken: Handler = Box::new(|_| Err("oops".into()));
    let flag: Handler = Box::new(|event| {
        let ExtensionEvent::ToolResult { content, .. } = event else {
            return Ok(None);
        };
        // The second extension sees the first one's content.
        assert_eq!(content.len(), 1);
        Ok(Some(json!({"isError": true, "details": {"checked": true}})))
    });
    let rt = runtime(vec![
        ext("a", &seen, vec![("tool_result", content)]),
        ext("b", &seen, vec![("tool_result", broken)]),
        ext("c", &seen, vec![("tool_result", flag)]),
    ]);
    let patch = rt
        .emit_tool_result(
            "read",
            "t1",
            None,
            &json!({"path": "x"}),
            vec![InputBlock::text("secret")],
            Value::Null,
            false,
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(patch.content, Some(vec![InputBlock::text("redacted")]));
    assert_eq!(patch.is_error, Some(true));
    assert_eq!(patch.details, Some(json!({"checked": true})));
    assert_eq!(seen.lock().unwrap().len(), 3);
}

#[tokio::test]
async fn message_end_replacements_keep_the_role() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let wrong_role: Handler = Box::new(|_| {
        Ok(Some(
            json!({"message": {"role": "custom", "customType": "x", "content": "", "display": false, "timestamp": 1}}),
        ))
    });
    let rewrite: Handler = Box::new(|_| {
        Ok(Some(
            json!({"message": {"role": "user", "content": [{"type": "text", "text": "rewritten"}], "timestamp": 1}}),
        ))
    });
    let rt = runtime(vec![
        ext("a", &seen, vec![("message_end", wrong_role)]),
        ext("b", &seen, vec![("message_end", rewrite)]),
    ]);
    let replaced = rt
        .emit_message_end(&user("original"), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&replaced).unwrap()["content"][0]["text"],
        "rewritten"
    );
}
