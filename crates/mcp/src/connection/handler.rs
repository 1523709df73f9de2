//! What the client does with what a server sends on its own: roots, log messages and
//! tool list changes (progress is routed by the transport, see `progress`).

#![allow(deprecated)]

use std::sync::Arc;

use rmcp::model::{ClientConfig, ListRootsResult, LoggingMessageNotificationParam, Root};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, ErrorData, RoleClient};

use super::Connection;
use crate::log::ServerLog;

/// What the client does with what a server sends on its own.
#[derive(Clone)]
pub(super) struct Handler {
    pub server: String,
    pub log: Arc<ServerLog>,
    pub roots: Vec<Root>,
    pub info: ClientConfig,
    pub tools_changed: std::sync::Weak<Connection>,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        Ok(ListRootsResult::new(self.roots.clone()))
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let level = serde_json::to_value(params.level)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| "info".into());
        self.log
            .message(&self.server, &level, params.logger.as_deref(), &params.data);
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        if let Some(connection) = self.tools_changed.upgrade() {
            tokio::spawn(connection.refresh_tools());
        }
    }
}
