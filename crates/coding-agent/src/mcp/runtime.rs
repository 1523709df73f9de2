//! The MCP servers of one pi process: loaded from `mcp.json`, connected in parallel in the
//! background (a slow server delays nobody but its own tools), and closed with pi.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use pi_agent_core::AgentTool;
use pi_mcp::config::{self, McpConfig};
use pi_mcp::connection::{Connection, Context, State};
use tokio::sync::watch;

use super::tool::McpTool;

/// How long the first prompt waits for servers whose tools are declared to the model.
pub const DECLARED_WAIT: Duration = Duration::from_secs(10);

/// The MCP tools of a moment.
#[derive(Default)]
pub struct McpTools {
    pub declared: Vec<Arc<dyn AgentTool>>,
    /// Tools not declared to the model: called from codemode scripts, or loaded by
    /// `tool_search`.
    pub deferred: Vec<Arc<dyn AgentTool>>,
    /// A server with `deferred` exposure wants `tool_search`.
    pub wants_search: bool,
    /// A server with `codemode` exposure wants codemode active (unless mcp.json's
    /// `autoEnableCodemode` is false).
    pub wants_codemode: bool,
}

/// Whether this build has the codemode tool: without it, `codemode` tools are declared.
const CODEMODE_BUILT: bool = cfg!(feature = "codemode");

/// Whether a tool of this exposure is declared to the model from the start.
fn declared(exposure: pi_mcp::exposure::Exposure) -> bool {
    exposure.declared() || (exposure == pi_mcp::exposure::Exposure::Codemode && !CODEMODE_BUILT)
}

/// Every configured server of this process.
pub struct McpRuntime {
    pub config: McpConfig,
    connections: Vec<Arc<Connection>>,
    changes: watch::Receiver<u64>,
    /// Where it was loaded from, to load it again on `/reload`.
    agent_dir: PathBuf,
    cwd: PathBuf,
    project_trusted: bool,
    /// Servers a client gave (ACP's `mcpServers`), kept over the files' on reload.
    extra: Vec<config::ServerEntry>,
}

impl McpRuntime {
    /// Reads the configuration; nothing connects until [`McpRuntime::start`].
    pub fn load(agent_dir: &Path, cwd: &Path, project_trusted: bool) -> Self {
        Self::load_with(agent_dir, cwd, project_trusted, Vec::new())
    }

    /// [`Self::load`] with servers a client gave, which replace any of the same name.
    pub fn load_with(
        agent_dir: &Path,
        cwd: &Path,
        project_trusted: bool,
        extra: Vec<config::ServerEntry>,
    ) -> Self {
        let mut config = config::load(agent_dir, cwd, project_trusted);
        config
            .servers
            .retain(|s| !extra.iter().any(|e| e.name == s.name));
        config.servers.extend(extra.iter().cloned());
        let (sender, changes) = watch::channel(0u64);
        let sender = Arc::new(sender);
        let context = Context {
            cwd: cwd.to_path_buf(),
            home: std::env::var_os("HOME").map(PathBuf::from),
            log: super::server_log(agent_dir),
            resolve: super::value_resolver(),
            on_change: Arc::new(move |_server: &str| {
                sender.send_modify(|n| *n += 1);
            }),
            version: crate::PI_VERSION.to_owned(),
            auth: Some(pi_mcp::oauth::AuthStore::in_agent_dir(agent_dir)),
            provider_token: Some(super::provider_token(agent_dir)),
        };
        let connections = config
            .servers
            .iter()
            .map(|entry| Connection::new(entry.clone(), context.clone()))
            .collect();
        Self {
            config,
            connections,
            changes,
            agent_dir: agent_dir.to_path_buf(),
            cwd: cwd.to_path_buf(),
            project_trusted,
            extra,
        }
    }

    /// The configuration read again from the same files (not started).
    pub fn reloaded(&self) -> Self {
        Self::load_with(
            &self.agent_dir,
            &self.cwd,
            self.project_trusted,
            self.extra.clone(),
        )
    }

    /// The configuration read again, with these client servers instead of the earlier
    /// ones (not started).
    pub fn with_client_servers(&self, extra: Vec<config::ServerEntry>) -> Self {
        Self::load_with(&self.agent_dir, &self.cwd, self.project_trusted, extra)
    }

    /// The agent dir its global `mcp.json` is in.
    pub fn agent_dir(&self) -> &Path {
        &self.agent_dir
    }

    pub fn is_empty(&self) -> bool {
        self.connections.is_empty()
    }

    pub fn connections(&self) -> &[Arc<Connection>] {
        &self.connections
    }

    /// Connects every enabled server, each in its own task.
    pub fn start(&self) {
        for connection in &self.connections {
            if connection.entry.config.enabled {
                let connection = connection.clone();
                tokio::spawn(async move {
                    let _ = connection.connect().await;
                });
            }
        }
    }

    /// A receiver that changes whenever a server's state or tools change.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.changes.clone()
    }

    /// Waits (at most `limit`) until no server with declared tools is still connecting.
    pub async fn wait_for_declared(&self, limit: Duration) {
        self.wait_while_connecting(limit, declares_tools).await;
    }

    /// Waits (at most `limit`) until no enabled server is still connecting.
    pub async fn wait_for_all(&self, limit: Duration) {
        self.wait_while_connecting(limit, |_| true).await;
    }

    /// Waits until every enabled server's connection attempt ended (each is bounded by
    /// the server's own timeout), as pi's `/mcp` awaits its pending connections.
    pub async fn settled(&self) {
        let mut changes = self.changes.clone();
        while self
            .connections
            .iter()
            .any(|c| c.entry.config.enabled && c.status().state == State::Connecting)
        {
            if changes.changed().await.is_err() {
                break;
            }
        }
    }

    /// Waits until no enabled server that `counts` is connecting, or `limit` passed.
    async fn wait_while_connecting(&self, limit: Duration, counts: impl Fn(&Connection) -> bool) {
        let mut changes = self.changes.clone();
        let pending = || {
            self.connections.iter().any(|c| {
                c.entry.config.enabled && counts(c) && c.status().state == State::Connecting
            })
        };
        let _ = tokio::time::timeout(limit, async {
            while pending() {
                if changes.changed().await.is_err() {
                    break;
                }
            }
        })
        .await;
    }

    /// The MCP tools now, named so none takes a name in `taken`: those declared to the model
    /// (with the resource tools), and the `deferred` ones `tool_search` can load.
    pub fn tools(&self, taken: &[String]) -> McpTools {
        let mut names: Vec<String> = taken.to_vec();
        let mut tools = McpTools::default();
        for connection in &self.connections {
            let status = connection.status();
            if status.state != State::Connected {
                continue;
            }
            // Tools whose plain names collide all get the hash (as pi 1.6.0 and Codex), so
            // which keeps the plain name never depends on the order of the list.
            let plain = pi_mcp::naming::plain_names(connection.name(), &status.tools);
            for tool in &status.tools {
                let exposure = connection.entry.config.tool_exposure(&tool.name);
                if exposure == pi_mcp::exposure::Exposure::Hidden {
                    continue;
                }
                let name = pi_mcp::naming::tool_name(connection.name(), &tool.name, |n| {
                    names.iter().any(|t| t == n) || plain.iter().filter(|p| *p == n).count() > 1
                });
                names.push(name.clone());
                let made: Arc<dyn AgentTool> =
                    Arc::new(McpTool::new(connection.clone(), tool, name));
                if declared(exposure) {
                    tools.declared.push(made);
                } else {
                    match exposure {
                        pi_mcp::exposure::Exposure::Codemode => tools.wants_codemode = true,
                        _ => tools.wants_search = true,
                    }
                    tools.deferred.push(made);
                }
            }
        }
        tools
            .declared
            .extend(super::resources::tools(&self.connections));
        tools.wants_codemode &= self.config.auto_enable_codemode != Some(false);
        // `tool_search` is offered from the start for servers with `deferred` tools, before
        // they connect (a search waits for them).
        tools.wants_search |= self
            .connections
            .iter()
            .any(|c| c.entry.config.enabled && has_deferred(&c.entry.config));
        tools
    }

    /// The servers whose tools are not declared until `tool_search` loads them, a line each
    /// with what the server offers (its description, or the first line of its instructions).
    pub fn servers_section(&self) -> Option<String> {
        const MAX_SUMMARY_CHARS: usize = 250;
        let mut listed: Vec<&Arc<Connection>> = self
            .connections
            .iter()
            .filter(|c| {
                let config = &c.entry.config;
                config.enabled
                    && (config.exposure() == pi_mcp::exposure::Exposure::Deferred
                        || config
                            .tool_exposure
                            .iter()
                            .any(|(_, e)| *e == pi_mcp::exposure::Exposure::Deferred))
            })
            .collect();
        if listed.is_empty() {
            return None;
        }
        listed.sort_by(|a, b| a.name().cmp(b.name()));
        let mut lines = vec![
            "These MCP servers have tools that are not declared to you yet: find and load them with `tool_search`.".to_owned(),
        ];
        for connection in listed {
            let summary = connection
                .entry
                .config
                .description
                .clone()
                .filter(|d| !d.trim().is_empty())
                .or_else(|| connection.status().instructions)
                .unwrap_or_default();
            let summary: String = summary
                .trim()
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(MAX_SUMMARY_CHARS)
                .collect();
            let head = pi_mcp::naming::namespace(connection.name());
            lines.push(if summary.is_empty() {
                format!("- {head}")
            } else {
                format!("- {head}: {summary}")
            });
        }
        Some(lines.join("\n"))
    }

    /// The servers as `/mcp` lists them: state, exposure, where each is configured, its
    /// command or URL, its tools (with the names the model calls them by) and its error.
    pub fn describe(&self) -> String {
        let mut out = Vec::new();
        for connection in &self.connections {
            let config = &connection.entry.config;
            let status = connection.status();
            let needs_sign_in = format!("needs sign-in, run /mcp login {}", connection.name());
            let state = match status.state {
                _ if !config.enabled => "disabled",
                State::NeedsAuth => needs_sign_in.as_str(),
                other => other.as_str(),
            };
            let tools = if status.state == State::Connected {
                format!(
                    ", {} tool{}",
                    status.tools.len(),
                    if status.tools.len() == 1 { "" } else { "s" }
                )
            } else {
                String::new()
            };
            let exposure = match config.exposure() {
                pi_mcp::exposure::Exposure::Codemode if !CODEMODE_BUILT => {
                    "codemode, declared as direct".to_owned()
                }
                other => other.as_str().to_owned(),
            };
            out.push(format!(
                "{}: {state}{tools} ({exposure}, {})",
                connection.name(),
                connection.entry.scope.as_str()
            ));
            out.push(format!("  {}", config.describe_transport()));
            if !status.tools.is_empty() {
                let names: Vec<String> = status
                    .tools
                    .iter()
                    .map(|t| {
                        let exposure = config.tool_exposure(&t.name);
                        let pi_name =
                            pi_mcp::naming::tool_name(connection.name(), &t.name, |_| false);
                        if exposure == config.exposure() {
                            pi_name
                        } else {
                            format!("{pi_name} [{}]", exposure.as_str())
                        }
                    })
                    .collect();
                out.push(format!("  tools: {}", names.join(", ")));
            }
            if status.has_resources {
                out.push("  offers resources".to_owned());
            }
            if let Some(error) = status.error.filter(|_| status.state != State::Connected) {
                out.push(format!("  {}", error.replace('\n', "\n  ")));
            }
        }
        for error in &self.config.errors {
            out.push(format!("config error: {error}"));
        }
        out.join("\n")
    }

    /// Connects servers that needed sign-in and have tokens now (a `pi mcp login` run
    /// outside the session, by the user or by the agent).
    pub async fn reconnect_signed_in(&self) {
        let waiting = self.connections.iter().filter(|c| {
            c.status().state == State::NeedsAuth
                && c.server_auth().ok().flatten().is_some_and(|auth| {
                    auth.load()
                        .is_ok_and(|state| state.access_token().is_some())
                })
        });
        futures_util::future::join_all(waiting.map(|c| c.connect())).await;
    }

    /// The server named `name`.
    pub fn find(&self, name: &str) -> Option<&Arc<Connection>> {
        self.connections.iter().find(|c| c.name() == name)
    }

    /// Connects a server again (after a failure, or to pick up a changed server).
    pub async fn reconnect(&self, name: &str) -> Result<(), String> {
        let connection = self
            .find(name)
            .ok_or_else(|| format!("No MCP server named \"{name}\""))?;
        connection.reconnect().await
    }

    /// Closes every connection and stops every server process.
    pub async fn close(&self) {
        futures_util::future::join_all(self.connections.iter().map(|c| c.close())).await;
    }
}

/// Whether a server's exposure, or any of its `toolExposure` entries, is `deferred`.
fn has_deferred(config: &pi_mcp::config::ServerConfig) -> bool {
    config.exposure() == pi_mcp::exposure::Exposure::Deferred
        || config
            .tool_exposure
            .iter()
            .any(|(_, e)| *e == pi_mcp::exposure::Exposure::Deferred)
}

/// Whether a server may have tools the model is declared or codemode calls: its exposure,
/// or any `toolExposure` entry, is one of those.
fn declares_tools(connection: &Connection) -> bool {
    let config = &connection.entry.config;
    let reached =
        |e: pi_mcp::exposure::Exposure| e.declared() || e == pi_mcp::exposure::Exposure::Codemode;
    reached(config.exposure()) || config.tool_exposure.iter().any(|(_, e)| reached(*e))
}
