//! The requests that act on one session through the node that runs it: prompts, steering,
//! interrupts, navigation, history, branching, and `session.describe` (what a resume
//! answers). A single gateway runs them for its connections; in a cluster the owner of the
//! session's lane runs them for whichever node received them.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::{Value, json};

use super::gateway::Gateway;
use super::protocol::{
    ApiError, BranchParams, HistoryParams, NavigateParams, PromptParams, SessionParams, params,
};

/// What running an operation produced.
pub enum OpOutcome {
    /// Done at once.
    Ready(Result<Value, ApiError>),
    /// Queued or started at once (so operations keep their arrival order); the reply
    /// comes when this finishes.
    Later(Pin<Box<dyn Future<Output = Result<Value, ApiError>> + Send>>),
}

/// The methods [`run`] handles.
pub const METHODS: &[&str] = &[
    "session.describe",
    "session.prompt",
    "session.steer",
    "session.followUp",
    "session.interrupt",
    "session.navigate",
    "session.history",
    "session.branch",
];

/// Whether `method` acts on a session through the node that runs it.
pub fn is_session_op(method: &str) -> bool {
    METHODS.contains(&method)
}

/// Runs `method` for `principal` on this node, which runs (or reopens) the session.
pub fn run(gateway: &Arc<Gateway>, principal: &str, method: &str, p: &Value) -> OpOutcome {
    let ready = OpOutcome::Ready;
    match method {
        "session.describe" => ready(
            params::<SessionParams>(p)
                .and_then(|s| gateway.resume(principal, &s.session_id))
                .map(|live| gateway.describe(&live)),
        ),
        "session.prompt" => {
            let result = params::<PromptParams>(p).and_then(|prompt| {
                let live = gateway.session(principal, &prompt.session_id)?;
                let (ahead, outcome) = gateway.prompt(&live, prompt.text)?;
                Ok((prompt.wait, ahead, outcome))
            });
            match result {
                Ok((true, _, outcome)) => OpOutcome::Later(Box::pin(async move {
                    outcome
                        .await
                        .map(|o| o.to_json())
                        .map_err(|_| ApiError::failed("the session closed"))
                })),
                Ok((false, ahead, _)) => ready(Ok(json!({ "queued": ahead }))),
                Err(e) => ready(Err(e)),
            }
        }
        "session.steer" | "session.followUp" => {
            ready(params::<PromptParams>(p).and_then(|prompt| {
                let live = gateway.session(principal, &prompt.session_id)?;
                let steer = method == "session.steer";
                if live.queue_into_run(&prompt.text, steer) {
                    let delivered = if steer { "steer" } else { "followUp" };
                    return Ok(json!({ "delivered": delivered }));
                }
                let (ahead, _) = gateway.prompt(&live, prompt.text)?;
                Ok(json!({ "delivered": "prompt", "queued": ahead }))
            }))
        }
        "session.interrupt" => ready(
            params::<SessionParams>(p)
                .and_then(|s| gateway.interrupt(principal, &s.session_id))
                .map(|aborted| json!({ "aborted": aborted })),
        ),
        "session.navigate" => {
            let result = params::<NavigateParams>(p).and_then(|nav| {
                let live = gateway.session(principal, &nav.session_id)?;
                gateway.navigate(&live, &nav.target, nav.summarize)
            });
            match result {
                Ok(done) => OpOutcome::Later(Box::pin(async move {
                    done.await
                        .map_err(|_| ApiError::failed("the session closed"))?
                })),
                Err(e) => ready(Err(e)),
            }
        }
        "session.history" => ready(params::<HistoryParams>(p).and_then(|h| {
            gateway
                .session(principal, &h.session_id)
                .map(|live| live.history(h.full))
        })),
        "session.branch" => ready(
            params::<BranchParams>(p)
                .and_then(|branch| gateway.branch(principal, &branch))
                .map(|live| gateway.describe(&live)),
        ),
        other => ready(Err(ApiError::new(
            super::protocol::codes::UNKNOWN_METHOD,
            format!("unknown method {other}"),
        ))),
    }
}
