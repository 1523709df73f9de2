//! Three NATS servers (2.15.1, installed by `scripts/install-nats.sh`) clustered on loopback
//! with JetStream and `sync_interval: always`, for the cluster tests; stopped when dropped.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The nats-server binary, or `None` (then the test says it skipped, unless CI requires it).
pub fn nats_server() -> Option<PathBuf> {
    let path = std::env::var_os("PI_TEST_NATS_SERVER").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/nats/venv/bin/nats-server"),
        PathBuf::from,
    );
    if !path.exists() {
        assert!(
            std::env::var_os("PI_TEST_REQUIRE_NATS").is_none(),
            "nats-server is not installed (scripts/install-nats.sh)"
        );
        eprintln!("nats-server is not installed: skipped (scripts/install-nats.sh)");
        return None;
    }
    Some(path)
}

/// A port nothing listens on, below the kernel's ephemeral range (32768 and up) so that no
/// outgoing connection of another test can take it between now and the server binding it;
/// each call in this process gets a different one.
fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    const LOW: u32 = 12_000;
    const SPAN: u32 = 20_000;
    let start = std::process::id().wrapping_mul(7_919) % SPAN;
    loop {
        let offset = NEXT.fetch_add(1, Ordering::Relaxed);
        let port = (LOW + (start + offset) % SPAN) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// One server of the cluster.
pub struct Server {
    pub name: String,
    /// The address it listens on (loopback, or its network namespace's).
    pub host: String,
    /// The network namespace it runs in, if any.
    pub netns: Option<String>,
    pub client_port: u16,
    pub monitor_port: u16,
    pub route_port: u16,
    config: PathBuf,
    child: Option<Child>,
}

/// The three servers.
pub struct Cluster {
    pub dir: tempfile::TempDir,
    pub servers: Vec<Server>,
    binary: PathBuf,
    _slot: Slot,
}

/// How many clusters of one test binary run at once: a test binary runs its tests side by
/// side, and more than two clusters of three servers, each syncing every write to disk,
/// starve each other on two cores until timeouts that mean nothing fire.
const AT_ONCE: usize = 2;

static RUNNING: std::sync::Mutex<usize> = std::sync::Mutex::new(0);
static FREED: std::sync::Condvar = std::sync::Condvar::new();

/// One of the [`AT_ONCE`] places, held while a cluster runs.
struct Slot;

impl Slot {
    fn take() -> Slot {
        let mut running = RUNNING.lock().unwrap_or_else(|p| p.into_inner());
        while *running >= AT_ONCE {
            running = FREED.wait(running).unwrap_or_else(|p| p.into_inner());
        }
        *running += 1;
        Slot
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        *RUNNING.lock().unwrap_or_else(|p| p.into_inner()) -= 1;
        FREED.notify_one();
    }
}

impl Cluster {
    /// Starts three clustered servers and waits until each is healthy; when a server exits
    /// at start (its port was taken after all), starts the three again on other ports.
    pub fn start(binary: &Path) -> Cluster {
        Self::start_placed(binary, None)
    }

    /// [`Self::start`], server `i` in namespace `i` of `net`.
    pub fn start_in(binary: &Path, net: &super::netns::Net) -> Cluster {
        Self::start_placed(binary, Some(net))
    }

    fn start_placed(binary: &Path, net: Option<&super::netns::Net>) -> Cluster {
        let mut last = String::new();
        for _ in 0..3 {
            match Self::try_start(binary, net, Slot::take()) {
                Ok(cluster) => return cluster,
                Err(log) => last = log,
            }
        }
        panic!("nats-server did not start three times; the last log:\n{last}");
    }

    fn try_start(
        binary: &Path,
        net: Option<&super::netns::Net>,
        slot: Slot,
    ) -> Result<Cluster, String> {
        let dir = tempfile::tempdir().unwrap();
        let mut servers: Vec<Server> = (0..3)
            .map(|i| {
                // In a namespace of its own a server has the usual ports to itself.
                let (host, netns, ports) = match net {
                    Some(net) => (net.ip(i), Some(net.names[i].clone()), (4222, 8222, 6222)),
                    None => (
                        "127.0.0.1".to_owned(),
                        None,
                        (free_port(), free_port(), free_port()),
                    ),
                };
                Server {
                    name: format!("n{}", i + 1),
                    host,
                    netns,
                    client_port: ports.0,
                    monitor_port: ports.1,
                    route_port: ports.2,
                    config: dir.path().join(format!("n{}.conf", i + 1)),
                    child: None,
                }
            })
            .collect();
        let routes: Vec<String> = servers
            .iter()
            .map(|s| format!("nats://{}:{}", s.host, s.route_port))
            .collect();
        for server in &servers {
            let store = dir.path().join(&server.name);
            let text = format!(
                "server_name: {name}\nlisten: {host}:{client}\nhttp: {host}:{monitor}\n\
                 jetstream {{ store_dir: \"{store}\", sync_interval: always }}\n\
                 cluster {{ name: pi, listen: {host}:{route}, routes: [{routes}] }}\n",
                name = server.name,
                host = server.host,
                client = server.client_port,
                monitor = server.monitor_port,
                store = store.display(),
                route = server.route_port,
                routes = routes.join(", "),
            );
            std::fs::write(&server.config, text).unwrap();
        }
        let mut cluster = Cluster {
            dir,
            servers: Vec::new(),
            binary: binary.to_path_buf(),
            _slot: slot,
        };
        for server in &mut servers {
            server.child = Some(spawn(binary, server));
        }
        cluster.servers = servers;
        for i in 0..cluster.servers.len() {
            let deadline = Instant::now() + Duration::from_secs(60);
            let (host, port) = (
                cluster.servers[i].host.clone(),
                cluster.servers[i].monitor_port,
            );
            while http_get(&host, port, "/healthz").is_none() {
                let exited = cluster.servers[i]
                    .child
                    .as_mut()
                    .is_some_and(|c| c.try_wait().ok().flatten().is_some());
                if exited || Instant::now() >= deadline {
                    return Err(cluster.log_tails(20));
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        Ok(cluster)
    }

    /// `nats://…` of every server.
    pub fn urls(&self) -> Vec<String> {
        self.servers
            .iter()
            .map(|s| format!("nats://{}:{}", s.host, s.client_port))
            .collect()
    }

    /// Kills server `i` with SIGKILL.
    pub fn kill(&mut self, i: usize) {
        if let Some(mut child) = self.servers[i].child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts server `i` again (same ports and store) and waits for its health.
    pub fn restart(&mut self, i: usize) {
        let child = spawn(&self.binary, &self.servers[i]);
        self.servers[i].child = Some(child);
        wait_healthy(&self.servers[i].host, self.servers[i].monitor_port);
    }

    /// Each running server's view of every stream's leader and replicas (for failure
    /// messages).
    pub fn describe(&self) -> String {
        let mut out = String::new();
        for server in &self.servers {
            let Some(body) = http_get(&server.host, server.monitor_port, "/jsz?streams=true")
            else {
                out.push_str(&format!(
                    "{} (port {}): down\n",
                    server.name, server.client_port
                ));
                continue;
            };
            let value: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
            out.push_str(&format!(
                "{} (port {}): meta {}\n",
                server.name, server.client_port, value["meta_cluster"]
            ));
            for account in value["account_details"]
                .as_array()
                .cloned()
                .unwrap_or_default()
            {
                for stream in account["stream_detail"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
                {
                    out.push_str(&format!(
                        "  {} leader {} replicas {} msgs {}\n",
                        stream["name"],
                        stream["cluster"]["leader"],
                        stream["cluster"]["replicas"],
                        stream["state"]["messages"]
                    ));
                }
            }
        }
        out
    }

    /// Each server's `(stream, messages, last sequence)` list, sorted; `None` for a server
    /// that does not answer.
    pub fn stream_states(&self) -> Vec<Option<Vec<(String, u64, u64)>>> {
        self.servers
            .iter()
            .map(|server| {
                let body = http_get(&server.host, server.monitor_port, "/jsz?streams=true")?;
                let value: serde_json::Value = serde_json::from_str(&body).ok()?;
                let mut states = Vec::new();
                for account in value["account_details"].as_array()? {
                    for stream in account["stream_detail"].as_array()? {
                        states.push((
                            stream["name"].as_str()?.to_owned(),
                            stream["state"]["messages"].as_u64()?,
                            stream["state"]["last_seq"].as_u64()?,
                        ));
                    }
                }
                states.sort();
                Some(states)
            })
            .collect()
    }

    /// Each server's state of the streams `names`: messages, first and last sequence,
    /// leader, and each replica as the leader sees it (current, lag, last active); for
    /// failure messages.
    pub fn stream_report(&self, names: &[&str]) -> String {
        let mut out = String::new();
        for server in &self.servers {
            let Some(body) = http_get(&server.host, server.monitor_port, "/jsz?streams=true")
            else {
                out.push_str(&format!("{}: no answer\n", server.name));
                continue;
            };
            let value: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
            out.push_str(&format!("{}:\n", server.name));
            let streams = value["account_details"].as_array().into_iter().flatten();
            for stream in streams.flat_map(|a| a["stream_detail"].as_array().into_iter().flatten())
            {
                if !names.iter().any(|n| stream["name"] == *n) {
                    continue;
                }
                let (state, cluster) = (&stream["state"], &stream["cluster"]);
                let replicas: Vec<String> = cluster["replicas"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|r| {
                        format!(
                            "{} current {} lag {} offline {} active {}ms",
                            r["name"],
                            r["current"],
                            r["lag"].as_u64().unwrap_or(0),
                            r["offline"].as_bool().unwrap_or(false),
                            r["active"].as_u64().unwrap_or(0) / 1_000_000
                        )
                    })
                    .collect();
                out.push_str(&format!(
                    "  {} msgs {} seq {}..{} deleted {} leader {} replicas [{}]\n",
                    stream["name"],
                    state["messages"],
                    state["first_seq"],
                    state["last_seq"],
                    state["num_deleted"].as_u64().unwrap_or(0),
                    cluster["leader"],
                    replicas.join("; ")
                ));
            }
        }
        out
    }

    /// The end of every server's log.
    pub fn log_tails(&self, lines: usize) -> String {
        let mut out = String::new();
        for server in &self.servers {
            let text =
                std::fs::read_to_string(server.config.with_extension("log")).unwrap_or_default();
            let all: Vec<&str> = text
                .lines()
                .filter(|l| !l.contains("Error trying to connect to route"))
                .collect();
            out.push_str(&format!("=== {}\n", server.name));
            for line in &all[all.len().saturating_sub(lines)..] {
                out.push_str(line);
                out.push('\n');
            }
        }
        out
    }

    /// The index of the server leading `stream`, from the monitoring endpoint.
    pub fn stream_leader(&self, stream: &str) -> Option<usize> {
        for server in &self.servers {
            let Some(body) = http_get(&server.host, server.monitor_port, "/jsz?streams=true")
            else {
                continue;
            };
            let Ok(value) = serde_json::from_str::<serde_json::Value>(&body) else {
                continue;
            };
            let accounts = value["account_details"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            for account in accounts {
                for found in account["stream_detail"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
                {
                    if found["name"] == stream
                        && let Some(leader) = found["cluster"]["leader"].as_str()
                    {
                        return self.servers.iter().position(|s| s.name == leader);
                    }
                }
            }
        }
        None
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for server in &mut self.servers {
            if let Some(mut child) = server.child.take() {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}

/// Starts `server` (in its namespace, if it has one).
fn spawn(binary: &Path, server: &Server) -> Child {
    let config = &server.config;
    let mut command = match &server.netns {
        Some(name) => {
            let mut command = Command::new("ip");
            command.args(["netns", "exec", name]).arg(binary);
            command
        }
        None => Command::new(binary),
    };
    command
        .arg("-c")
        .arg(config)
        .arg("-l")
        .arg(config.with_extension("log"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// `GET http://host:port/path`: the body when the status is 200.
pub fn http_get(host: &str, port: u16, path: &str) -> Option<String> {
    let address: std::net::SocketAddr = format!("{host}:{port}").parse().ok()?;
    let mut stream = std::net::TcpStream::connect_timeout(&address, Duration::from_secs(2)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {host}:{port}\r\n\r\n").ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.1 200")
        .then(|| body.to_owned())
        .or_else(|| head.starts_with("HTTP/1.0 200").then(|| body.to_owned()))
}

fn wait_healthy(host: &str, port: u16) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while http_get(host, port, "/healthz").is_none() {
        assert!(
            Instant::now() < deadline,
            "nats-server on monitor port {port} did not become healthy"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
