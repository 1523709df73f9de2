//! pi 1.6.0's actionable boundaries, `turn_end` and `agent_before_settle`: each handler sees
//! the entries and the continuation proposed so far and may replace either.

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::event::ExtensionEvent;
use super::runtime::ExtensionRuntime;

/// What the handlers of a boundary proposed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BoundaryProposal {
    /// Draft entries (`custom`, `custom_message`, `context_edit`, `compaction`), unchecked.
    pub entries: Vec<Value>,
    pub continue_: bool,
}

impl ExtensionRuntime {
    /// Dispatches a boundary event (`turn_end` or `agent_before_settle`) through every
    /// backend, each seeing what the ones before proposed.
    pub async fn emit_boundary(&self, mut event: ExtensionEvent) -> BoundaryProposal {
        let mut proposal = BoundaryProposal::default();
        for backend in self.handling(event.kind()) {
            if let ExtensionEvent::TurnEnd {
                entries, continue_, ..
            }
            | ExtensionEvent::AgentBeforeSettle {
                entries, continue_, ..
            } = &mut event
            {
                entries.clone_from(&proposal.entries);
                *continue_ = proposal.continue_;
            }
            match backend.dispatch(&event, CancellationToken::new()).await {
                Ok(Some(answer)) => {
                    if let Some(Value::Array(list)) = answer.get("entries") {
                        proposal.entries.clone_from(list);
                    }
                    if let Some(flag) = answer.get("continue").and_then(Value::as_bool) {
                        proposal.continue_ = flag;
                    }
                }
                Ok(None) => {}
                Err(error) => self.report_backend_error(event.kind(), &error),
            }
        }
        proposal
    }
}
