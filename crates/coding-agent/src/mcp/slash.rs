//! The `/mcp` command's core, shared by the terminal UI and RPC mode: parsing `/mcp`,
//! `/mcp login|logout|reconnect [server]`, picking the server, signing out and
//! reconnecting, and pi 1.6.0's texts (dist/extensions/mcp/index.js). Each mode shows the
//! outcome its own way.

use std::path::Path;
use std::sync::Arc;

use pi_mcp::connection::{Connection, State};

use super::runtime::McpRuntime;

pub const USAGE: &str =
    "Usage: /mcp, /mcp login [server], /mcp logout [server], /mcp reconnect [server]";
const NO_OAUTH: &str =
    "No enabled MCP server uses OAuth. Only HTTP servers without an Authorization header do.";

/// How a message is shown (`ctx.ui.notify`'s type).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Warning,
    Error,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Info => "info",
            Self::Warning => "warning",
            Self::Error => "error",
        }
    }
}

/// What `/mcp …` came to.
pub enum Outcome {
    /// `/mcp`: show the servers (the terminal as a block, RPC as pi's status notice).
    Status,
    /// A message to show.
    Notice(Level, String),
    /// `/mcp login`: sign in to this server (the mode shows the URL and the result).
    Login(Arc<Connection>),
}

/// Runs `/mcp <args>` for the session's servers. Servers still connecting are waited for,
/// at most `patience` (`None`: until their attempts end, as pi awaits them; the terminal UI
/// bounds it so it stays responsive).
pub async fn run(
    runtime: &McpRuntime,
    args: &str,
    patience: Option<std::time::Duration>,
) -> Outcome {
    let words: Vec<&str> = args.split_whitespace().collect();
    let (action, name) = match words.as_slice() {
        [] => return Outcome::Status,
        [action] => (*action, None),
        [action, name] => (*action, Some(*name)),
        _ => return Outcome::Notice(Level::Warning, USAGE.to_owned()),
    };
    // Servers still starting are waited for, so a choice sees how they ended up.
    match patience {
        Some(limit) => runtime.wait_for_all(limit).await,
        None => runtime.settled().await,
    }
    let picked = match action {
        "login" | "logout" => pick(
            runtime,
            name,
            uses_oauth,
            |c| c.status().state == State::NeedsAuth,
            NO_OAUTH,
        ),
        "reconnect" => pick(
            runtime,
            name,
            |c| c.entry.config.enabled,
            |c| matches!(c.status().state, State::Failed | State::Disconnected),
            "No enabled MCP server to reconnect.",
        ),
        _ => return Outcome::Notice(Level::Warning, USAGE.to_owned()),
    };
    let connection = match picked {
        Ok(connection) => connection.clone(),
        Err((level, message)) => return Outcome::Notice(level, message),
    };
    match action {
        "login" => Outcome::Login(connection),
        "logout" => {
            let (level, text) = sign_out(&connection).await;
            Outcome::Notice(level, text)
        }
        _ => match connection.reconnect().await {
            Ok(()) => Outcome::Notice(
                Level::Info,
                format!(
                    "Reconnected to MCP server \"{}\" ({}).",
                    connection.name(),
                    describe_state(&connection)
                ),
            ),
            Err(e) => Outcome::Notice(Level::Error, e),
        },
    }
}

/// A server's state in a line, as pi's `/mcp` words it.
pub fn describe_state(connection: &Connection) -> String {
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

/// pi 1.6.0's `/mcp` status outside the terminal (its `formatStatus`): a line per server
/// with its state, tool count and exposure, its error indented below, then config errors.
pub fn status_text(runtime: &McpRuntime) -> String {
    if runtime.is_empty() && runtime.config.errors.is_empty() {
        return no_servers(runtime.agent_dir());
    }
    let mut lines: Vec<String> = runtime
        .connections()
        .iter()
        .map(|connection| {
            let name = connection.name();
            let config = &connection.entry.config;
            let exposure = config.exposure().as_str();
            let status = connection.status();
            if status.state == State::NeedsAuth && config.enabled {
                return format!("{name}: needs sign-in, run /mcp login {name} ({exposure})");
            }
            let tools = if status.state == State::Connected {
                format!(", {} tools", status.tools.len())
            } else {
                String::new()
            };
            let state = if !config.enabled {
                "disabled"
            } else if status.state == State::Disconnected {
                "disconnected, reconnects on next call"
            } else {
                status.state.as_str()
            };
            let error = match status.error {
                Some(error) if status.state != State::Connected => {
                    format!("\n    {}", error.replace('\n', "\n    "))
                }
                _ => String::new(),
            };
            format!("{name}: {state}{tools} ({exposure}){error}")
        })
        .collect();
    for error in &runtime.config.errors {
        lines.push(format!("config error: {error}"));
    }
    lines.join("\n")
}

/// pi 1.6.0's words when no server is configured.
pub fn no_servers(agent_dir: &Path) -> String {
    format!(
        "No MCP servers configured. Add them to {} or .pi/mcp.json.",
        agent_dir.join("mcp.json").display()
    )
}

fn uses_oauth(connection: &Connection) -> bool {
    connection.entry.config.enabled && connection.entry.config.oauth_url().is_some()
}

/// Deletes the server's stored tokens and drops its connection.
async fn sign_out(connection: &Arc<Connection>) -> (Level, String) {
    let name = connection.name().to_owned();
    let removed = match connection.server_auth() {
        Ok(Some(auth)) => auth.store.remove(&auth.server, &auth.url),
        Ok(None) => Ok(false),
        Err(e) => return (Level::Error, e),
    };
    match removed {
        Ok(removed) => {
            connection.sign_out().await;
            let text = if removed {
                format!("Signed out of MCP server \"{name}\".")
            } else {
                format!("No stored credentials for MCP server \"{name}\".")
            };
            (Level::Info, text)
        }
        Err(e) => (Level::Error, format!("Could not sign out: {e}")),
    }
}

/// Which server a subcommand means: the one named, else the only eligible (or the only
/// preferred) one.
fn pick<'a>(
    runtime: &'a McpRuntime,
    name: Option<&str>,
    eligible: impl Fn(&Connection) -> bool,
    preferred: impl Fn(&Connection) -> bool,
    none: &str,
) -> Result<&'a Arc<Connection>, (Level, String)> {
    if let Some(name) = name {
        return match runtime.find(name) {
            None => Err((Level::Error, format!("No MCP server named \"{name}\"."))),
            Some(c) if !eligible(c) => Err((Level::Error, none.to_owned())),
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
        ([], _) => Err((Level::Info, none.to_owned())),
        ([only], _) => Ok(only),
        (_, [only]) => Ok(only),
        _ => {
            let names: Vec<&str> = candidates.iter().map(|c| c.name()).collect();
            Err((
                Level::Warning,
                format!("Name the MCP server: {}", names.join(", ")),
            ))
        }
    }
}
