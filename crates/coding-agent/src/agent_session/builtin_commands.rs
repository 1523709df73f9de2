//! pi 1.6.0's built-in extension commands outside the terminal UI: an RPC prompt `/mcp …`
//! runs the command (`mcp::slash`, the core the terminal shares) and answers through the
//! mode's UI (`ctx.ui.notify`), as pi's built-in MCP extension does; `/llama` says it needs
//! the terminal UI.

use crate::extensions::UiNotice;
use crate::mcp::slash::{self, Level, Outcome};

use super::{AgentSession, lock};

impl AgentSession {
    /// Runs `text` when it is a built-in command this session has (`/mcp` while MCP is
    /// on, `/llama` while llama.cpp is); false when it is not one.
    pub(super) async fn run_builtin_command(&self, text: &str) -> bool {
        let body = &text[1..];
        let (name, args) = body.split_once(' ').unwrap_or((body, ""));
        if name == "llama" && self.registry().llama_enabled() {
            self.llama_outside_tui();
            return true;
        }
        if name != "mcp" {
            return false;
        }
        let Some(runtime) = self.mcp() else {
            return false;
        };
        let notify = |level: Level, message: String| self.notify(level, message);
        match slash::run(&runtime, args, None).await {
            Outcome::Status => {
                // pi waits for the servers' first connection before it reports them.
                runtime.settled().await;
                notify(Level::Info, slash::status_text(&runtime));
            }
            Outcome::Notice(level, message) => notify(level, message),
            Outcome::Login(connection) => {
                let name = connection.name().to_owned();
                let show = |url: &str| {
                    notify(
                        Level::Info,
                        format!("Sign in to MCP server \"{name}\" in your browser:\n{url}"),
                    );
                };
                match crate::mcp::login::sign_in(
                    &connection,
                    crate::mcp::login::DEFAULT_TIMEOUT,
                    &show,
                )
                .await
                {
                    Ok(message) => notify(Level::Info, message),
                    Err(error) => notify(Level::Error, error),
                }
            }
        }
        true
    }

    /// `ctx.ui.notify` through the mode's UI.
    fn notify(&self, level: Level, message: String) {
        let ui = lock(&self.inner.ext.ui).clone();
        if let Some(ui) = ui {
            ui.notice(UiNotice::Notify {
                message,
                notify_type: Some(level.as_str().to_owned()),
            });
        }
    }
}
