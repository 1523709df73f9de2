//! Signing in to an OAuth MCP server, for `pi mcp login <server>` and `/mcp login`:
//! connect first (a server that answers needs no sign-in), else the stored refresh token,
//! else the browser; then connect with the new tokens. Texts are pi 1.5.2's.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use pi_mcp::connection::{Connection, State};

use super::runtime::McpRuntime;
use crate::modes::auth_login::open_browser;

/// `pi mcp login` and `/mcp login` give up after this long unless told otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// Signs in to one server; `show_url` tells the user where to go (the browser is opened
/// too). The message to show on success, or the error.
pub async fn sign_in(
    connection: &Arc<Connection>,
    timeout: Duration,
    show_url: &(dyn Fn(&str) + Sync),
) -> Result<String, String> {
    let name = connection.name().to_owned();
    if connection.connect().await.is_ok() {
        let tools = connection.status().tools.len();
        return Ok(format!(
            "Already signed in to MCP server \"{name}\" ({tools} tools)."
        ));
    }
    let status = connection.status();
    if status.state != State::NeedsAuth {
        return Err(format!(
            "MCP server \"{name}\" failed to connect: {}",
            status.error.unwrap_or_else(|| "unknown error".into())
        ));
    }
    let auth = connection
        .server_auth()?
        .ok_or_else(|| format!("MCP server \"{name}\" does not use OAuth."))?;
    let challenge = connection.challenge();
    let show = |url: &str| {
        show_url(url);
        open_browser(url);
    };
    match tokio::time::timeout(timeout, auth.sign_in(challenge.as_ref(), &show)).await {
        Err(_) => Err(format!(
            "Sign-in to MCP server \"{name}\" was cancelled or not completed within {} seconds.",
            timeout.as_secs_f64().round()
        )),
        Ok(Err(e)) => Err(format!("Sign-in to MCP server \"{name}\" failed: {e}")),
        Ok(Ok(_)) => {
            connection.clear_challenge();
            connection
                .reconnect()
                .await
                .map_err(|e| format!("Signed in, but {e}"))?;
            let tools = connection.status().tools.len();
            Ok(format!(
                "Signed in to MCP server \"{name}\" ({tools} tools)."
            ))
        }
    }
}

/// `pi mcp login <name>`: the exit code, or the error to print.
pub fn login(
    name: &str,
    agent_dir: &Path,
    cwd: &Path,
    trusted: bool,
    timeout: Duration,
) -> Result<i32, String> {
    let runtime = McpRuntime::load(agent_dir, cwd, trusted);
    let Some(connection) = runtime.find(name).cloned() else {
        return Err(format!("No MCP server named \"{name}\"."));
    };
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    tokio.block_on(async move {
        let show = |url: &str| {
            println!(
                "Sign in to MCP server \"{}\" in your browser:\n{url}",
                connection.name()
            );
        };
        let result = sign_in(&connection, timeout, &show).await;
        connection.close().await;
        result.map(|message| {
            println!("{message}");
            0
        })
    })
}
