//! `/mcp` in the terminal: the servers with their state and tools, and `/mcp
//! login|logout|reconnect [server]` (`mcp::slash`, shared with RPC mode); a sign-in runs in
//! the background and reports when it ends.

use std::sync::Arc;

use pi_mcp::connection::Connection;

use super::{App, Completion};
use crate::mcp::login;
use crate::mcp::runtime::McpRuntime;
use crate::mcp::slash::{self, Level, Outcome};
use crate::modes::interactive::AppEvent;
use crate::modes::interactive::chat::NoticeKind;
use crate::modes::interactive::theme::ThemeColor;

fn notice_kind(level: Level) -> NoticeKind {
    match level {
        Level::Info => NoticeKind::Info,
        Level::Warning => NoticeKind::Warning,
        Level::Error => NoticeKind::Error,
    }
}

impl App {
    pub(super) async fn mcp_command(&mut self, args: Option<String>) {
        let Some(runtime) = self
            .session
            .mcp()
            .filter(|r| !r.is_empty() || !r.config.errors.is_empty())
        else {
            self.notice(
                NoticeKind::Info,
                "No MCP servers configured. Add them with pi mcp add, or to ~/.pi/agent/mcp.json or .pi/mcp.json.",
            );
            return;
        };
        match slash::run(
            &runtime,
            &args.unwrap_or_default(),
            Some(std::time::Duration::from_secs(5)),
        )
        .await
        {
            Outcome::Status => self.show_mcp(&runtime).await,
            Outcome::Notice(level, text) => self.notice(notice_kind(level), &text),
            Outcome::Login(connection) => self.mcp_login(connection),
        }
    }

    async fn show_mcp(&mut self, runtime: &McpRuntime) {
        // Servers still starting are given a moment, so the list shows how they ended up.
        runtime
            .wait_for_all(std::time::Duration::from_secs(5))
            .await;
        let bold = |s: &str| self.theme.fg(ThemeColor::Text).bold().paint(s);
        let text = format!("{}\n\n{}", bold("MCP Servers"), runtime.describe());
        self.chat.add_text_block(&text);
    }

    /// Signs in in the background: the URL, then how it ended, arrive as notices.
    fn mcp_login(&mut self, connection: Arc<Connection>) {
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let notify = |kind, text: String| {
                let _ = tx.send(AppEvent::Done(Completion::Notice(kind, text)));
            };
            let show = |url: &str| {
                notify(
                    NoticeKind::Info,
                    format!(
                        "Sign in to MCP server \"{}\" in your browser:\n{url}",
                        connection.name()
                    ),
                );
            };
            match login::sign_in(&connection, login::DEFAULT_TIMEOUT, &show).await {
                Ok(message) => notify(NoticeKind::Info, message),
                Err(error) => notify(NoticeKind::Error, error),
            }
        });
    }
}
