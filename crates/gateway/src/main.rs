//! `pi-gateway`: serves pi sessions over WebSocket; `pi-gateway sessions …` talks to one.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Parser, Subcommand};
use serde_json::json;

use pi_gateway::events::Limits;
use pi_gateway::server::client::Client;
use pi_gateway::server::{GatewayConfig, serve, tree};

#[derive(Parser, Debug)]
#[command(
    name = "pi-gateway",
    version,
    about = "Serves pi sessions over WebSocket"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    serve: ServeArgs,
}

#[derive(Args, Debug)]
struct ServeArgs {
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    #[arg(long, default_value_t = 7878)]
    port: u16,
    /// The pi agent dir (default: $PI_CODING_AGENT_DIR or ~/.pi/agent).
    #[arg(long)]
    agent_dir: Option<PathBuf>,
    /// An accepted token, `[PRINCIPAL:]TOKEN` (repeatable; also PI_GATEWAY_TOKEN,
    /// comma-separated). Without a principal, the token's principal is `default`.
    #[arg(long = "token")]
    tokens: Vec<String>,
    /// Run limits `HARD,IDLE`, e.g. `48h,120s` or `500ms,200ms` (units ms, s, m, h).
    #[arg(long)]
    limits: Option<String>,
    /// Events kept per session for replay.
    #[arg(long, default_value_t = 4096)]
    event_log: usize,
    /// Also serve OpenClaw's gateway protocol v4 on this port (same host and tokens), for
    /// OpenClaw's own clients; `openclawPort` in gateway.json does the same.
    #[arg(long)]
    openclaw_port: Option<u16>,
    /// Serve OpenClaw's web Control UI from this folder (the `dist/control-ui` of the
    /// `openclaw` npm package) on the OpenClaw port; `openclawControlUi` in gateway.json.
    #[arg(long)]
    openclaw_control_ui: Option<PathBuf>,
    #[command(flatten)]
    cluster: ClusterArgs,
}

/// Running as one node of a cluster on NATS JetStream (built with the `cluster` feature).
#[derive(Args, Debug, Clone)]
struct ClusterArgs {
    /// NATS server URLs (`nats://HOST:PORT`, repeatable or comma-separated): run as a node
    /// of the cluster these servers hold.
    #[arg(long = "cluster", value_delimiter = ',')]
    urls: Vec<String>,
    /// This node's id (default: the host name and the port).
    #[arg(long)]
    node_id: Option<String>,
    /// How long a node keeps a session's lane without renewing it (its failover time).
    #[arg(long, default_value = "10s")]
    lease_ttl: String,
    /// A lane idle this long is given up (another node may take it).
    #[arg(long, default_value = "60s")]
    idle_release: String,
    /// Replicas of the cluster's streams and buckets (at most the number of servers).
    #[arg(long, default_value_t = 3)]
    replicas: usize,
    /// Snapshot a session's workspace at the end of each run when its files weigh at most
    /// this many MiB (0: never), so another node can restore it if this one dies.
    #[arg(long, default_value_t = 64)]
    snapshot_limit_mib: u64,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print a session's file as a cluster stores it (JSONL, byte for byte what the owner
    /// wrote), for pi or another gateway to open.
    Export {
        /// The session id.
        session: String,
        #[command(flatten)]
        cluster: ClusterArgs,
    },
    /// Inspect and move between a running gateway's sessions.
    Sessions {
        #[command(flatten)]
        target: Target,
        #[command(subcommand)]
        action: SessionsAction,
    },
}

#[derive(Args, Debug)]
struct Target {
    #[arg(long, global = true, default_value = "ws://127.0.0.1:7878/")]
    url: String,
    /// The token (default: the first of PI_GATEWAY_TOKEN).
    #[arg(long, global = true)]
    token: Option<String>,
}

#[derive(Subcommand, Debug)]
enum SessionsAction {
    /// Print the sessions as a tree.
    Tree {
        #[arg(long)]
        json: bool,
    },
    /// Make a session current (resuming it on the gateway).
    Switch { id: String },
    /// Branch the current (or given) session at a message.
    Branch {
        #[arg(long)]
        from: String,
        #[arg(long)]
        session: Option<String>,
    },
}

/// Parses `500ms`, `120s`, `5m`, `48h` (a bare number is milliseconds).
fn parse_duration(text: &str) -> anyhow::Result<Duration> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: u64 = number
        .parse()
        .with_context(|| format!("invalid duration {text}"))?;
    Ok(match unit {
        "" | "ms" => Duration::from_millis(value),
        "s" => Duration::from_secs(value),
        "m" => Duration::from_secs(value * 60),
        "h" => Duration::from_secs(value * 3600),
        other => bail!("unknown duration unit {other} in {text}"),
    })
}

fn parse_limits(text: &str) -> anyhow::Result<Limits> {
    let (hard, idle) = text.split_once(',').context("--limits takes HARD,IDLE")?;
    Ok(Limits {
        hard: parse_duration(hard)?,
        idle: parse_duration(idle)?,
    })
}

/// `[PRINCIPAL:]TOKEN` → (token, principal).
fn parse_token(entry: &str) -> (String, String) {
    match entry.split_once(':') {
        Some((principal, token)) if !principal.is_empty() => {
            (token.to_owned(), principal.to_owned())
        }
        _ => (entry.to_owned(), "default".to_owned()),
    }
}

fn env_tokens() -> Vec<String> {
    std::env::var("PI_GATEWAY_TOKEN")
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Where `sessions switch` remembers the current session.
fn current_file() -> PathBuf {
    pi_coding_agent::config::paths::agent_dir().join("gateway-current-session")
}

async fn run_serve(args: ServeArgs) -> anyhow::Result<()> {
    let agent_dir = args
        .agent_dir
        .unwrap_or_else(pi_coding_agent::config::paths::agent_dir);
    let mut config = GatewayConfig::new(agent_dir);
    for entry in args.tokens.iter().cloned().chain(env_tokens()) {
        let (token, principal) = parse_token(&entry);
        config.tokens.insert(token, principal);
    }
    if config.tokens.is_empty() {
        bail!("no token configured: pass --token [PRINCIPAL:]TOKEN or set PI_GATEWAY_TOKEN");
    }
    if let Some(limits) = &args.limits {
        config.limits = parse_limits(limits)?;
    }
    config.event_log = args.event_log;
    let clustered = !args.cluster.urls.is_empty();
    if clustered && !cfg!(feature = "cluster") {
        bail!(
            "--cluster needs a pi-gateway built with the cluster feature \
             (cargo build --release -p pi-gateway --features cluster)"
        );
    }
    // Ready before the first client: built lazily, the first prompts of a burst would wait
    // for it with every worker thread.
    let _ = pi_ai::http::warm_shared_client().join();
    let listener = tokio::net::TcpListener::bind((args.host.as_str(), args.port))
        .await
        .with_context(|| format!("cannot listen on {}:{}", args.host, args.port))?;
    let handle = serve(listener, config).await?;
    #[cfg(feature = "cluster")]
    let node = if clustered {
        Some(cluster::join(&args.cluster, handle.gateway(), args.port, args.event_log).await?)
    } else {
        None
    };
    eprintln!("pi-gateway listening on {}", handle.url());
    let openclaw_port = args
        .openclaw_port
        .or_else(|| handle.gateway().file().openclaw_port);
    let _openclaw = match openclaw_port {
        Some(port) => {
            let listener = tokio::net::TcpListener::bind((args.host.as_str(), port))
                .await
                .with_context(|| format!("cannot listen on {}:{port}", args.host))?;
            let ui = args
                .openclaw_control_ui
                .clone()
                .or_else(|| handle.gateway().file().openclaw_control_ui.clone());
            let served = pi_gateway::openclaw::serve_with_ui(
                listener,
                std::sync::Arc::clone(handle.gateway()),
                ui,
            )?;
            eprintln!("pi-gateway: OpenClaw protocol on {}", served.url());
            Some(served)
        }
        None => None,
    };
    wait_for_signal().await;
    eprintln!("pi-gateway: shutting down");
    handle.shutdown().await;
    #[cfg(feature = "cluster")]
    if let Some(node) = node {
        node.shutdown().await;
    }
    Ok(())
}

async fn wait_for_signal() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    let terminated = async {
        match term.as_mut() {
            Some(term) => {
                term.recv().await;
            }
            None => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = terminated => {}
    }
}

async fn run_sessions(target: Target, action: SessionsAction) -> anyhow::Result<()> {
    let token = target
        .token
        .or_else(|| env_tokens().first().map(|entry| parse_token(entry).0));
    let mut client = Client::connect(&target.url, token.as_deref()).await?;
    match action {
        SessionsAction::Tree { json } => {
            let result = client.call("sessions.tree", json!({})).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&result)?);
            } else {
                let roots = result["roots"].as_array().cloned().unwrap_or_default();
                let current = std::fs::read_to_string(current_file()).unwrap_or_default();
                for line in tree::render(&roots).lines() {
                    let marker = if !current.trim().is_empty()
                        && line.trim_start().starts_with(current.trim())
                    {
                        "* "
                    } else {
                        "  "
                    };
                    println!("{marker}{line}");
                }
            }
        }
        SessionsAction::Switch { id } => {
            let result = client
                .call(
                    "session.resume",
                    json!({ "sessionId": id, "subscribe": false }),
                )
                .await?;
            std::fs::write(current_file(), &id)
                .with_context(|| format!("cannot write {}", current_file().display()))?;
            println!("Switched to {id}");
            println!("{}", serde_json::to_string_pretty(&result["node"])?);
        }
        SessionsAction::Branch { from, session } => {
            let session = match session {
                Some(id) => id,
                None => std::fs::read_to_string(current_file())
                    .map(|s| s.trim().to_owned())
                    .ok()
                    .filter(|s| !s.is_empty())
                    .context("no current session: pass --session or run `sessions switch <id>`")?,
            };
            let result = client
                .call(
                    "session.branch",
                    json!({ "sessionId": session, "fromMessage": from, "subscribe": false }),
                )
                .await?;
            let id = result["sessionId"].as_str().unwrap_or_default().to_owned();
            std::fs::write(current_file(), &id)
                .with_context(|| format!("cannot write {}", current_file().display()))?;
            println!("Branched {session} at {from}: {id}");
        }
    }
    client.close().await;
    Ok(())
}

#[cfg(feature = "cluster")]
async fn run_export(session: &str, args: &ClusterArgs) -> anyhow::Result<()> {
    use std::io::Write;
    if args.urls.is_empty() {
        bail!("pass --cluster nats://HOST:PORT (a server of the cluster)");
    }
    let engine = cluster::engine(args, 4096).await?;
    // The server reached may be cut off from the others, or its streams electing leaders:
    // tried again (through another server) for half a minute.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let lines = loop {
        match engine.load_entries(session).await {
            Ok((lines, _)) => break lines,
            Err(_) if std::time::Instant::now() < deadline => {
                let _ = engine.client.force_reconnect().await;
                tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            }
            Err(e) => return Err(e).with_context(|| format!("cannot read session {session}")),
        }
    };
    if lines.is_empty() {
        bail!("the cluster holds no entries of session {session}");
    }
    let mut out = std::io::stdout().lock();
    for line in lines {
        out.write_all(&line)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

#[cfg(not(feature = "cluster"))]
async fn run_export(_session: &str, _args: &ClusterArgs) -> anyhow::Result<()> {
    bail!(
        "export needs a pi-gateway built with the cluster feature \
         (cargo build --release -p pi-gateway --features cluster)"
    )
}

/// Joining a cluster (the `cluster` feature).
#[cfg(feature = "cluster")]
mod cluster {
    use std::sync::Arc;

    use anyhow::Context;
    use pi_gateway::cluster::{ClusterConfig, ClusterNode, Engine, NodeSettings};
    use pi_gateway::server::Gateway;

    use super::{ClusterArgs, parse_duration};

    /// Connects to the cluster's servers (creating its streams and buckets if needed).
    pub async fn engine(args: &ClusterArgs, event_log: usize) -> anyhow::Result<Engine> {
        let node_id = args.node_id.clone().unwrap_or_else(|| {
            let host = std::fs::read_to_string("/etc/hostname").unwrap_or_default();
            format!("{}-{}", host.trim(), std::process::id())
        });
        // A node id is part of NATS subjects: keep it to letters, digits, `-` and `_`.
        let node_id: String = node_id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let mut config = ClusterConfig::new(args.urls.clone(), node_id);
        config.lease_ttl = parse_duration(&args.lease_ttl)?;
        config.replicas = args.replicas.max(1);
        config.events_per_session = i64::try_from(event_log.max(1)).unwrap_or(i64::MAX);
        Engine::connect(config)
            .await
            .context("cannot join the cluster")
    }

    /// Makes `gateway` a node of the cluster.
    pub async fn join(
        args: &ClusterArgs,
        gateway: &Arc<Gateway>,
        port: u16,
        event_log: usize,
    ) -> anyhow::Result<Arc<ClusterNode>> {
        let mut args = args.clone();
        if args.node_id.is_none() {
            let host = std::fs::read_to_string("/etc/hostname").unwrap_or_default();
            args.node_id = Some(format!("{}-{port}", host.trim()));
        }
        let engine = engine(&args, event_log).await?;
        let settings = NodeSettings {
            idle_release: parse_duration(&args.idle_release)?,
            snapshot_limit: args.snapshot_limit_mib.saturating_mul(1024 * 1024),
            ..NodeSettings::default()
        };
        let node = ClusterNode::start(engine, gateway, settings)
            .await
            .context("cannot start the cluster node")?;
        eprintln!(
            "pi-gateway: node {} of the cluster at {}",
            node.node_id(),
            args.urls.join(",")
        );
        Ok(node)
    }
}

fn main() {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("Error: {e}");
            std::process::exit(1);
        }
    };
    let result = runtime.block_on(async move {
        match cli.command {
            Some(Command::Sessions { target, action }) => run_sessions(target, action).await,
            Some(Command::Export { session, cluster }) => run_export(&session, &cluster).await,
            None => {
                // What a killed gateway left in the temp dir (extension host sockets).
                pi_coding_agent::temp_files::sweep_stale();
                run_serve(cli.serve).await
            }
        }
    });
    if let Err(e) = result {
        eprintln!("Error: {e:#}");
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_and_tokens_parse() {
        let limits = parse_limits("48h,120s").unwrap_or_default();
        assert_eq!(limits, Limits::default());
        let limits = parse_limits("500ms,20").unwrap_or_default();
        assert_eq!(limits.idle, Duration::from_millis(20));
        assert_eq!(parse_token("alice:abc"), ("abc".into(), "alice".into()));
        assert_eq!(parse_token("abc"), ("abc".into(), "default".into()));
    }
}
