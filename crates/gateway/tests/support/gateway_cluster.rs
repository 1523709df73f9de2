//! Three NATS servers and three `pi-gateway --cluster` processes on loopback, each node
//! with its own agent dir (its own "disk") and one shared work dir, answered by mock-llm.
//! Nodes can be killed (SIGKILL), paused (SIGSTOP) and restarted.
#![allow(dead_code)]

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use mock_llm::MockServer;
use pi_gateway::server::client::Client;

use super::lossy_link::LossyLink;
use super::{ALICE, BOB, with_workspaces, write_agent_dir};
use super::{nats, netns};

const BIN: &str = env!("CARGO_BIN_EXE_pi-gateway");

/// One gateway node.
pub struct Node {
    pub id: String,
    pub agent: PathBuf,
    pub url: String,
    child: Option<Child>,
    /// Everything the node printed.
    pub log: Arc<Mutex<String>>,
}

/// The cluster under test.
pub struct GatewayCluster {
    pub nats: nats::Cluster,
    pub nodes: Vec<Node>,
    pub dir: tempfile::TempDir,
    pub work: PathBuf,
    pub mock: MockServer,
    ttl: String,
    extra: Vec<String>,
    /// The network namespaces node `i` and server `i` run in, if any (dropped last).
    pub net: Option<netns::Net>,
    /// The node that reaches the cluster only through a lossy link to server 0, and it.
    link: Option<(usize, LossyLink)>,
}

impl GatewayCluster {
    /// Starts the servers and three nodes with lease TTL `ttl` (e.g. `3s`) and `extra`
    /// flags; `None` when nats-server is not installed.
    pub async fn start(ttl: &str, extra: &[&str]) -> Option<GatewayCluster> {
        let binary = nats::nats_server()?;
        Some(Self::start_with(binary, None, ttl, extra, None).await)
    }

    /// [`Self::start`] with node `i` reaching the cluster through a [`LossyLink`] to server
    /// 0 (until it learns the other servers' addresses).
    pub async fn start_with_lossy_link(
        ttl: &str,
        extra: &[&str],
        i: usize,
    ) -> Option<GatewayCluster> {
        let binary = nats::nats_server()?;
        Some(Self::start_with(binary, None, ttl, extra, Some(i)).await)
    }

    /// The lossy link of [`Self::start_with_lossy_link`].
    pub fn link(&self) -> &LossyLink {
        &self.link.as_ref().expect("no lossy link").1
    }

    /// [`Self::start`] with NATS server `i` and node `i` in network namespace `i`, for
    /// partitions; `None` when nats-server is missing or namespaces cannot be made here.
    pub async fn start_in_netns(ttl: &str, extra: &[&str]) -> Option<GatewayCluster> {
        let binary = nats::nats_server()?;
        let net = netns::Net::create()?;
        Some(Self::start_with(binary, Some(net), ttl, extra, None).await)
    }

    async fn start_with(
        binary: PathBuf,
        net: Option<netns::Net>,
        ttl: &str,
        extra: &[&str],
        linked: Option<usize>,
    ) -> GatewayCluster {
        let nats = match &net {
            Some(net) => nats::Cluster::start_in(&binary, net),
            None => nats::Cluster::start(&binary),
        };
        let link = match linked {
            Some(i) => {
                let first = nats.urls()[0].trim_start_matches("nats://").to_owned();
                Some((i, LossyLink::start(first).await))
            }
            None => None,
        };
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        // The namespaces reach this process at the bridge's address.
        let mock = match &net {
            Some(net) => {
                let address = format!("{}:0", net.bridge_ip()).parse().unwrap();
                MockServer::start_on(address).await.unwrap()
            }
            None => MockServer::start().await.unwrap(),
        };
        let mut cluster = GatewayCluster {
            nats,
            nodes: Vec::new(),
            dir,
            work,
            mock,
            ttl: ttl.to_owned(),
            extra: extra.iter().map(|s| (*s).to_owned()).collect(),
            net,
            link,
        };
        for i in 1..=3 {
            let agent = cluster.dir.path().join(format!("gw{i}"));
            write_agent_dir(&agent, &cluster.mock);
            let mut file = with_workspaces(&agent, json!({}));
            for principal in ["alice", "bob"] {
                file["principals"][principal]["workspaces"] = json!([cluster.work]);
            }
            std::fs::write(agent.join("gateway.json"), file.to_string()).unwrap();
            let node = cluster.spawn(i - 1, &format!("gw{i}"), &agent);
            cluster.nodes.push(node);
        }
        cluster
    }

    /// Starts node `i` (in namespace `i`, listening on its address, when there are
    /// namespaces).
    fn spawn(&self, i: usize, id: &str, agent: &Path) -> Node {
        let mut command = match &self.net {
            Some(net) => {
                let mut command = net.command(i, Path::new(BIN));
                command.args(["--host", &net.ip(i)]);
                command
            }
            None => Command::new(BIN),
        };
        let urls = match &self.link {
            Some((linked, link)) if *linked == i => link.url(),
            _ => self.nats.urls().join(","),
        };
        let mut child = command
            .args(["--port", "0", "--node-id", id, "--lease-ttl", &self.ttl])
            .args(["--token", &format!("alice:{ALICE}")])
            .args(["--token", &format!("bob:{BOB}")])
            .arg("--cluster")
            .arg(urls)
            .args(&self.extra)
            .arg("--agent-dir")
            .arg(agent)
            .env("PI_CODING_AGENT_DIR", agent)
            .env_remove("PI_GATEWAY_TOKEN")
            .env("PI_GATEWAY_TRACE_CLUSTER", "1")
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let log = Arc::new(Mutex::new(String::new()));
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let url = loop {
            let line = lines
                .next()
                .unwrap_or_else(|| panic!("node {id} exited: {}", log.lock().unwrap()))
                .unwrap();
            log.lock().unwrap().push_str(&format!("{line}\n"));
            if let Some(url) = line.strip_prefix("pi-gateway listening on ") {
                break url.to_owned();
            }
        };
        let sink = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                sink.lock().unwrap().push_str(&format!("{line}\n"));
            }
        });
        Node {
            id: id.to_owned(),
            agent: agent.to_path_buf(),
            url,
            child: Some(child),
            log,
        }
    }

    /// A client of node `i` (0-based) as alice.
    pub async fn client(&self, i: usize) -> Client {
        Client::connect(&self.nodes[i].url, Some(ALICE))
            .await
            .unwrap()
    }

    /// Creates a session of alice in the work dir through `client`; its id.
    pub async fn create(&self, client: &mut Client) -> String {
        let result = client
            .call(
                "session.create",
                json!({"cwd": self.work.to_string_lossy(), "subscribe": true}),
            )
            .await
            .unwrap();
        result["sessionId"].as_str().unwrap().to_owned()
    }

    /// Kills node `i` with SIGKILL.
    pub fn kill(&mut self, i: usize) {
        if let Some(mut child) = self.nodes[i].child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Sends `signal` (`STOP`, `CONT`) to node `i`.
    pub fn signal(&self, i: usize, signal: &str) {
        if let Some(child) = &self.nodes[i].child {
            let status = Command::new("kill")
                .arg(format!("-{signal}"))
                .arg(child.id().to_string())
                .status()
                .unwrap();
            assert!(status.success());
        }
    }

    /// Starts node `i` again (same id and agent dir).
    pub fn restart(&mut self, i: usize) {
        self.kill(i);
        let id = self.nodes[i].id.clone();
        let agent = self.nodes[i].agent.clone();
        self.nodes[i] = self.spawn(i, &id, &agent);
    }

    /// Node `i`'s OpenClaw listener (`ws://…`), when it was started with `--openclaw-port`.
    pub fn openclaw_url(&self, i: usize) -> String {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let log = self.nodes[i].log.lock().unwrap().clone();
            if let Some(url) = log
                .lines()
                .find_map(|l| l.strip_prefix("pi-gateway: OpenClaw protocol on "))
            {
                return url.to_owned();
            }
            assert!(
                std::time::Instant::now() < deadline,
                "node {i} has no OpenClaw listener: {log}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// What every node printed, for failure messages.
    pub fn logs(&self) -> String {
        self.nodes
            .iter()
            .map(|n| format!("--- {}\n{}", n.id, n.log.lock().unwrap()))
            .collect()
    }

    /// A session's file as the cluster stores it (`pi-gateway export`).
    pub fn export(&self, session: &str) -> String {
        let output = Command::new(BIN)
            .args(["export", session, "--cluster"])
            .arg(self.nats.urls().join(","))
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "export failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    }

    /// [`Self::export`], or nothing when the cluster holds no entry of the session yet.
    pub fn export_or_empty(&self, session: &str) -> String {
        let output = Command::new(BIN)
            .args(["export", session, "--cluster"])
            .arg(self.nats.urls().join(","))
            .output()
            .unwrap();
        String::from_utf8(output.stdout).unwrap()
    }

    /// Writes `text` to a file in the scratch dir; its path.
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::File::create(&path)
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        path
    }
}

impl Drop for GatewayCluster {
    fn drop(&mut self) {
        for i in 0..self.nodes.len() {
            self.signal(i, "CONT");
            self.kill(i);
        }
    }
}

/// The events among `frames` of session `id`, as `(seq, event name, payload)`.
pub fn session_events(frames: &[Value], id: &str) -> Vec<(u64, String, Value)> {
    frames
        .iter()
        .filter(|f| f["type"] == "event" && f["sessionId"] == id)
        .map(|f| {
            (
                f["seq"].as_u64().unwrap(),
                f["event"].as_str().unwrap().to_owned(),
                f["payload"].clone(),
            )
        })
        .collect()
}

/// Every line of an exported session parses, starts with the header, and names only
/// parents written before it (no entries of two owners interleaved).
pub fn check_export(text: &str) -> Vec<Value> {
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(lines[0]["type"], "session", "{text}");
    let mut ids = HashSet::new();
    for line in &lines[1..] {
        if let Some(parent) = line["parentId"].as_str() {
            assert!(ids.contains(parent), "parent {parent} unknown: {text}");
        }
        assert!(ids.insert(line["id"].as_str().unwrap().to_owned()));
    }
    lines
}

/// Waits (bounded) for `check` to hold; on timeout the panic says `explain()`.
pub async fn eventually(
    what: &str,
    limit: Duration,
    mut check: impl FnMut() -> bool,
    explain: impl FnOnce() -> String,
) {
    let deadline = tokio::time::Instant::now() + limit;
    while !check() {
        if tokio::time::Instant::now() >= deadline {
            panic!("timed out: {what}\n{}", explain());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
