//! `pi mcp login <server>`: connect first (a server that answers needs no sign-in), else
//! sign in through the browser with pi 1.5.2's texts, then connect with the new tokens.

use std::path::Path;
use std::time::Duration;

use pi_mcp::connection::State;
use pi_mcp::oauth::sign_in::SignedIn;

use super::runtime::McpRuntime;
use crate::modes::auth_login::open_browser;

/// Signs in to `name` within `timeout`; the exit code, or the error to print.
pub fn login(
    name: &str,
    agent_dir: &Path,
    cwd: &Path,
    trusted: bool,
    timeout: Duration,
) -> Result<i32, String> {
    let runtime = McpRuntime::load(agent_dir, cwd, trusted);
    let Some(connection) = runtime.connections().iter().find(|c| c.name() == name) else {
        return Err(format!("No MCP server named \"{name}\"."));
    };
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let connection = connection.clone();
    tokio.block_on(async move {
        if connection.connect().await.is_ok() {
            let tools = connection.status().tools.len();
            connection.close().await;
            println!("Already signed in to MCP server \"{name}\" ({tools} tools).");
            return Ok(0);
        }
        let status = connection.status();
        if status.state != State::NeedsAuth {
            connection.close().await;
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
            println!("Sign in to MCP server \"{name}\" in your browser:\n{url}");
            open_browser(url);
        };
        let signed_in = tokio::time::timeout(timeout, auth.sign_in(challenge.as_ref(), &show)).await;
        let result = match signed_in {
            Err(_) => Err(format!(
                "Sign-in to MCP server \"{name}\" was cancelled or not completed within {} seconds.",
                timeout.as_secs_f64().round()
            )),
            Ok(Err(e)) => Err(format!("Sign-in to MCP server \"{name}\" failed: {e}")),
            Ok(Ok(SignedIn::Refreshed | SignedIn::InBrowser)) => {
                connection.clear_challenge();
                match connection.reconnect().await {
                    Ok(()) => {
                        let tools = connection.status().tools.len();
                        println!("Signed in to MCP server \"{name}\" ({tools} tools).");
                        Ok(0)
                    }
                    Err(e) => Err(format!("Signed in, but {e}")),
                }
            }
        };
        connection.close().await;
        result
    })
}
