//! The request hooks pi 1.6.0 added: `context_with_system` (the full transcript of a
//! request), `before_provider_headers` (its extra headers) and `provider_stream_event` (each
//! parsed provider event).

use std::collections::BTreeMap;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use pi_agent_core::AgentMessage;
use pi_ai::Model;

use super::event::ExtensionEvent;
use super::runtime::ExtensionRuntime;

/// Headers after `before_provider_headers`: those to send, and those a handler removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeaderEdits {
    pub headers: BTreeMap<String, String>,
    pub removed: Vec<String>,
}

impl ExtensionRuntime {
    /// `context_with_system`: the transcript, chained through every handler; `None` when no
    /// handler changed it.
    pub async fn emit_context_with_system(
        &self,
        messages: &[AgentMessage],
        cancel: CancellationToken,
    ) -> Option<Vec<AgentMessage>> {
        let mut current: Option<Vec<AgentMessage>> = None;
        for backend in self.handling("context_with_system") {
            let event = ExtensionEvent::ContextWithSystem {
                messages: current.clone().unwrap_or_else(|| messages.to_vec()),
            };
            match backend.dispatch(&event, cancel.clone()).await {
                Ok(Some(answer)) => {
                    match answer.get("messages").cloned().map(serde_json::from_value) {
                        Some(Ok(parsed)) => current = Some(parsed),
                        Some(Err(error)) => self.report_backend_error(
                            "context_with_system",
                            &super::BackendError(format!("Invalid messages: {error}")),
                        ),
                        None => {}
                    }
                }
                Ok(None) => {}
                Err(error) => self.report_backend_error("context_with_system", &error),
            }
        }
        current
    }

    /// `before_provider_headers`: each handler changes the headers the one before left; a
    /// header set to `null` is removed. `None` when no extension handles the event.
    pub async fn emit_before_provider_headers(
        &self,
        headers: &BTreeMap<String, String>,
    ) -> Option<HeaderEdits> {
        let backends = self.handling("before_provider_headers");
        if backends.is_empty() {
            return None;
        }
        let mut current: BTreeMap<String, Value> = headers
            .iter()
            .map(|(name, value)| (name.clone(), Value::String(value.clone())))
            .collect();
        for backend in backends {
            let event = ExtensionEvent::BeforeProviderHeaders {
                headers: current.clone(),
            };
            match backend.dispatch(&event, CancellationToken::new()).await {
                Ok(Some(answer)) => {
                    if let Some(Value::Object(changed)) = answer.get("headers") {
                        current = changed.clone().into_iter().collect();
                    }
                }
                Ok(None) => {}
                Err(error) => self.report_backend_error("before_provider_headers", &error),
            }
        }
        let mut edits = HeaderEdits::default();
        for (name, value) in current {
            match value {
                Value::String(text) => {
                    edits.headers.insert(name, text);
                }
                Value::Null => edits.removed.push(name),
                // Anything else is sent as its text, as fetch's Headers would.
                other => {
                    edits.headers.insert(name, other.to_string());
                }
            }
        }
        Some(edits)
    }

    /// `provider_stream_event`: notification only, awaited in stream order.
    pub async fn emit_provider_stream_event(&self, model: &Model, data: Value) {
        let event = ExtensionEvent::ProviderStreamEvent {
            provider: model.provider.clone(),
            api: model.api.to_string(),
            model: model.id.clone(),
            data,
        };
        self.emit(&event, CancellationToken::new()).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_events_carry_values_and_removals() {
        let event = ExtensionEvent::BeforeProviderHeaders {
            headers: BTreeMap::from([
                ("x-a".to_owned(), Value::String("1".into())),
                ("x-b".to_owned(), Value::Null),
            ]),
        };
        assert_eq!(
            serde_json::to_string(&event).unwrap_or_default(),
            r#"{"type":"before_provider_headers","headers":{"x-a":"1","x-b":null}}"#
        );
    }
}
