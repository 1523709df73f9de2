//! The gateway side of the runtime tools (pipeline layer 3): branching, navigating,
//! reloading and interrupting, on behalf of the session's principal.

use std::sync::{Arc, Weak};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::gateway::Gateway;
use super::protocol::BranchParams;
use crate::events::TerminationReason;
use crate::pipeline::RuntimeHost;

/// Runtime tools of one principal's sessions.
pub struct GatewayHost {
    gateway: Weak<Gateway>,
    principal: String,
}

impl GatewayHost {
    pub fn new(gateway: Weak<Gateway>, principal: impl Into<String>) -> Arc<Self> {
        Arc::new(Self {
            gateway,
            principal: principal.into(),
        })
    }

    fn gateway(&self) -> Result<Arc<Gateway>, String> {
        self.gateway
            .upgrade()
            .ok_or_else(|| "the gateway is shutting down".to_owned())
    }
}

fn ready(result: Result<Value, String>) -> BoxFuture<'static, Result<Value, String>> {
    futures_util::future::ready(result).boxed()
}

impl RuntimeHost for GatewayHost {
    fn branch(
        &self,
        session_id: &str,
        from_entry: Option<&str>,
    ) -> BoxFuture<'static, Result<Value, String>> {
        let result = self.gateway().and_then(|gateway| {
            let source = gateway
                .session(&self.principal, session_id)
                .map_err(|e| e.message)?;
            let from = match from_entry {
                Some(entry) => entry.to_owned(),
                None => source
                    .session
                    .with_session(|s| s.leaf_id().map(str::to_owned))
                    .ok_or_else(|| "the session has no entries to branch from".to_owned())?,
            };
            let branch = gateway
                .branch(
                    &self.principal,
                    &BranchParams {
                        session_id: session_id.to_owned(),
                        from_message: from.clone(),
                        subscribe: false,
                    },
                )
                .map_err(|e| e.message)?;
            Ok(json!({ "sessionId": branch.id, "branchPoint": from }))
        });
        ready(result)
    }

    fn navigate(
        &self,
        session_id: &str,
        target_entry_id: &str,
        summarize: bool,
    ) -> BoxFuture<'static, Result<Value, String>> {
        let result = self.gateway().and_then(|gateway| {
            let live = gateway
                .session(&self.principal, session_id)
                .map_err(|e| e.message)?;
            // The lane is busy with the calling run: the move happens after it.
            gateway
                .navigate(&live, target_entry_id, summarize)
                .map_err(|e| e.message)?;
            Ok(json!({ "queued": true, "target": target_entry_id }))
        });
        ready(result)
    }

    fn reload(&self) -> BoxFuture<'static, Result<Value, String>> {
        ready(self.gateway().and_then(|gateway| gateway.reload()))
    }

    fn interrupt(
        &self,
        session_id: &str,
        reason: &str,
    ) -> BoxFuture<'static, Result<Value, String>> {
        let result = self.gateway().and_then(|gateway| {
            let live = gateway
                .session(&self.principal, session_id)
                .map_err(|e| e.message)?;
            let stopped = live.terminate(TerminationReason::AbortSignal);
            Ok(json!({ "interrupted": stopped, "reason": reason }))
        });
        ready(result)
    }
}
