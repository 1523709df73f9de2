//! The gateways a load run drives: one process, or three `pi-gateway --cluster` nodes on
//! three NATS servers (JetStream, `sync_interval: always`), where each session is prompted
//! through one node and watched through another, and the failover time is measured.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::Context;
use serde_json::json;

use pi_gateway::server::client::Client;

use super::{Proc, free_port, memory_kib, spawn_until, write_agent_dir};

/// The gateway processes of a run (and the NATS servers under them).
pub struct Nodes {
    gateways: Vec<(Proc, String)>,
    _nats: Vec<Proc>,
}

impl Nodes {
    pub fn single(gateway: Proc, url: String) -> Self {
        Self {
            gateways: vec![(gateway, url)],
            _nats: Vec::new(),
        }
    }

    /// The URL of node `i` (modulo the number of nodes).
    pub fn url(&self, i: usize) -> String {
        self.gateways[i % self.gateways.len()].1.clone()
    }

    pub fn pids(&self) -> Vec<u32> {
        self.gateways.iter().map(|(p, _)| p.0.id()).collect()
    }

    /// Resident memory of every gateway, in KiB.
    pub fn rss_kib(&self) -> u64 {
        self.pids().into_iter().map(|p| memory_kib(p).0).sum()
    }

    /// Peak resident memory of every gateway, in KiB.
    pub fn hwm_kib(&self) -> u64 {
        self.pids().into_iter().map(|p| memory_kib(p).1).sum()
    }

    /// Seconds from killing the node running a session (-9) to a prompt of that session,
    /// sent to another node, finishing there.
    pub async fn failover(&mut self, work: &str) -> anyhow::Result<f64> {
        let mut owner = Client::connect(&self.url(0), Some("bench-token")).await?;
        let session = owner
            .call(
                "session.create",
                json!({"cwd": work, "tools": [], "subscribe": false}),
            )
            .await?;
        let id = session["sessionId"].as_str().unwrap_or_default().to_owned();
        owner
            .call(
                "session.prompt",
                json!({"sessionId": id, "text": "before", "wait": true}),
            )
            .await?;
        let mut other = Client::connect(&self.url(1), Some("bench-token")).await?;

        let (mut killed, _) = self.gateways.remove(0);
        let _ = killed.0.kill();
        let started = Instant::now();
        let done = other
            .call(
                "session.prompt",
                json!({"sessionId": id, "text": "after", "wait": true}),
            )
            .await?;
        anyhow::ensure!(
            done["terminationReason"] == "no_tool_calls",
            "the prompt after the kill ended with {done}"
        );
        Ok(started.elapsed().as_secs_f64())
    }
}

/// The lease TTL of a benchmark cluster (failover is measured against it).
pub const LEASE_TTL: &str = "3s";

/// Starts three NATS servers and three gateway nodes on them.
pub async fn start(
    nats: &Path,
    gateway: &Path,
    dir: &Path,
    mock_port: u16,
    work: &Path,
) -> anyhow::Result<Nodes> {
    let ports: Vec<(u16, u16, u16)> = (0..3)
        .map(|_| Ok((free_port()?, free_port()?, free_port()?)))
        .collect::<anyhow::Result<_>>()?;
    let routes: Vec<String> = ports
        .iter()
        .map(|(_, route, _)| format!("nats://127.0.0.1:{route}"))
        .collect();
    let mut servers = Vec::new();
    for (i, (client, route, monitor)) in ports.iter().enumerate() {
        let config = dir.join(format!("n{i}.conf"));
        std::fs::write(
            &config,
            format!(
                "server_name: n{i}\nlisten: 127.0.0.1:{client}\nhttp: 127.0.0.1:{monitor}\n\
                 jetstream {{ store_dir: \"{}\", sync_interval: always }}\n\
                 cluster {{ name: bench, listen: 127.0.0.1:{route}, routes: [{}] }}\n",
                dir.join(format!("n{i}")).display(),
                routes.join(", ")
            ),
        )?;
        let mut command = Command::new(nats);
        command.arg("-c").arg(&config);
        let (server, _) = spawn_until(command, "Server is ready").await?;
        servers.push(server);
    }
    for (_, _, monitor) in &ports {
        wait_healthy(*monitor).await?;
    }
    let urls: Vec<String> = ports
        .iter()
        .map(|(client, _, _)| format!("nats://127.0.0.1:{client}"))
        .collect();
    let mut gateways = Vec::new();
    for i in 0..3 {
        let agent = dir.join(format!("gw{i}"));
        write_agent_dir(&agent, mock_port)?;
        std::fs::write(
            agent.join("gateway.json"),
            json!({"principals": {"default": {"workspaces": [work]}}}).to_string(),
        )?;
        let mut command = Command::new(gateway);
        command
            .args(["--port", "0", "--token", "bench-token", "--agent-dir"])
            .arg(&agent)
            .args(["--cluster", &urls.join(","), "--node-id", &format!("gw{i}")])
            .args(["--lease-ttl", LEASE_TTL, "--idle-release", "600s"])
            .env("PI_CODING_AGENT_DIR", &agent);
        let (node, line) = spawn_until(command, "listening on").await.context(
            "a cluster node did not start (is pi-gateway built with --features cluster?)",
        )?;
        let url = line
            .split_whitespace()
            .last()
            .context("gateway url")?
            .to_owned();
        gateways.push((node, url));
    }
    Ok(Nodes {
        gateways,
        _nats: servers,
    })
}

/// Waits until a server's `/healthz` (JetStream included) answers 200.
async fn wait_healthy(port: u16) -> anyhow::Result<()> {
    use std::io::{Read, Write};
    let deadline = Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let healthy = std::net::TcpStream::connect(("127.0.0.1", port))
            .and_then(|mut stream| {
                write!(stream, "GET /healthz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")?;
                let mut text = String::new();
                stream.read_to_string(&mut text)?;
                Ok(text.starts_with("HTTP/1.1 200") || text.starts_with("HTTP/1.0 200"))
            })
            .unwrap_or(false);
        if healthy {
            return Ok(());
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "nats-server on {port} is not healthy"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}
