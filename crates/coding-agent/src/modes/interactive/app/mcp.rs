//! `/mcp`: the servers with their state and tools; `/mcp login|logout|reconnect [server]`
//! as in pi 1.5.2 (a sign-in runs in the background and reports when it ends).

use std::sync::Arc;

use pi_mcp::connection::{Connection, State};

use super::{App, Completion};
use crate::mcp::login;
use crate::mcp::runtime::McpRuntime;
use crate::modes::interactive::AppEvent;
use crate::modes::interactive::chat::NoticeKind;
use crate::modes::interactive::theme::ThemeColor;

const MCP_USAGE: &str =
    "Usage: /mcp, /mcp login [server], /mcp logout [server], /mcp reconnect [server]";
const NO_OAUTH: &str =
    "No enabled MCP server uses OAuth. Only HTTP servers without an Authorization header do.";

/// A server's state in a line, as pi's `/mcp` words it.
fn describe_state(connection: &Connection) -> String {
    if !connection.entry.config.enabled {
        return "disabled".into();
    }
    let status = connection.status();
    match status.state {
        State::NeedsAuth => "needs sign-in".into(),
        State::Failed => format!(
            "failed: {}",
            status
                .error
                .as_deref()
                .and_then(|e| e.lines().next())
                .unwrap_or("unknown error")
        ),
        State::Connected => {
            let n = status.tools.len();
            format!(
                "connected · {n} tool{}{}",
                if n == 1 { "" } else { "s" },
                if status.has_resources {
                    " · resources"
                } else {
                    ""
                }
            )
        }
        State::Connecting => "connecting…".into(),
        other => other.as_str().into(),
    }
}

fn uses_oauth(connection: &Connection) -> bool {
    connection.entry.config.enabled && connection.entry.config.oauth_url().is_some()
}

/// Which server a subcommand means: the one named, else the only eligible (or the only
/// preferred) one.
fn pick<'a>(
    runtime: &'a McpRuntime,
    name: Option<&str>,
    eligible: impl Fn(&Connection) -> bool,
    preferred: impl Fn(&Connection) -> bool,
    none: &str,
) -> Result<&'a Arc<Connection>, (NoticeKind, String)> {
    if let Some(name) = name {
        return match runtime.find(name) {
            None => Err((
                NoticeKind::Error,
                format!("No MCP server named \"{name}\"."),
            )),
            Some(c) if !eligible(c) => Err((NoticeKind::Error, none.to_owned())),
            Some(c) => Ok(c),
        };
    }
    let candidates: Vec<&Arc<Connection>> = runtime
        .connections()
        .iter()
        .filter(|c| eligible(c))
        .collect();
    let favoured: Vec<&&Arc<Connection>> = candidates.iter().filter(|c| preferred(c)).collect();
    match (candidates.as_slice(), favoured.as_slice()) {
        ([], _) => Err((NoticeKind::Info, none.to_owned())),
        ([only], _) => Ok(only),
        (_, [only]) => Ok(only),
        _ => {
            let names: Vec<&str> = candidates.iter().map(|c| c.name()).collect();
            Err((
                NoticeKind::Warning,
                format!("Name the MCP server: {}", names.join(", ")),
            ))
        }
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
        let args = args.unwrap_or_default();
        let words: Vec<&str> = args.split_whitespace().collect();
        let (action, name) = match words.as_slice() {
            [] => return self.show_mcp(&runtime).await,
            [action] => (*action, None),
            [action, name] => (*action, Some(*name)),
            _ => return self.notice(NoticeKind::Warning, MCP_USAGE),
        };
        // Servers still starting are given a moment, so a choice sees how they ended up.
        runtime
            .wait_for_all(std::time::Duration::from_secs(5))
            .await;
        let picked = match action {
            "login" | "logout" => pick(
                &runtime,
                name,
                uses_oauth,
                |c| c.status().state == State::NeedsAuth,
                NO_OAUTH,
            ),
            "reconnect" => pick(
                &runtime,
                name,
                |c| c.entry.config.enabled,
                |c| matches!(c.status().state, State::Failed | State::Disconnected),
                "No enabled MCP server to reconnect.",
            ),
            _ => return self.notice(NoticeKind::Warning, MCP_USAGE),
        };
        let connection = match picked {
            Ok(connection) => connection.clone(),
            Err((kind, message)) => return self.notice(kind, &message),
        };
        match action {
            "login" => self.mcp_login(connection),
            "logout" => self.mcp_logout(&connection).await,
            _ => match connection.reconnect().await {
                Ok(()) => self.notice(
                    NoticeKind::Info,
                    &format!(
                        "Reconnected to MCP server \"{}\" ({}).",
                        connection.name(),
                        describe_state(&connection)
                    ),
                ),
                Err(e) => self.notice(NoticeKind::Error, &e),
            },
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

    async fn mcp_logout(&mut self, connection: &Arc<Connection>) {
        let name = connection.name().to_owned();
        let removed = match connection.server_auth() {
            Ok(Some(auth)) => auth.store.remove(&auth.server, &auth.url),
            Ok(None) => Ok(false),
            Err(e) => return self.notice(NoticeKind::Error, &e),
        };
        match removed {
            Ok(removed) => {
                connection.sign_out().await;
                let text = if removed {
                    format!("Signed out of MCP server \"{name}\".")
                } else {
                    format!("No stored credentials for MCP server \"{name}\".")
                };
                self.notice(NoticeKind::Info, &text);
            }
            Err(e) => self.notice(NoticeKind::Error, &format!("Could not sign out: {e}")),
        }
    }
}
