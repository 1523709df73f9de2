//! Load benchmark: N sessions streaming at once through one `pi-gateway` process against
//! `mock-llm`. Reports events/s, p50/p99 event latency (gateway `ts` → client receipt)
//! and the gateway's memory per session. Run through `bench/gateway_load.sh`, which
//! builds release binaries and raises the open-file limit.
//!
//! Usage: gateway_load --gateway BIN --mock BIN --sessions N [--words W] [--chunk C]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Value, json};
use tokio::sync::Barrier;

use pi_gateway::server::client::Client;

mod cluster;

struct Args {
    gateway: PathBuf,
    mock: PathBuf,
    sessions: usize,
    words: usize,
    chunk: usize,
    /// A nats-server binary: run three gateway nodes on three servers instead of one.
    nats: Option<PathBuf>,
    /// Start the prompts evenly over this many seconds instead of all at once (a steady
    /// aggregate rate rather than one burst).
    spread: f64,
}

fn parse_args() -> anyhow::Result<Args> {
    let mut args = Args {
        gateway: PathBuf::from("target/release/pi-gateway"),
        mock: PathBuf::from("target/release/mock-llm"),
        sessions: 100,
        words: 120,
        chunk: 24,
        nats: None,
        spread: 0.0,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().with_context(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--gateway" => args.gateway = value.into(),
            "--mock" => args.mock = value.into(),
            "--sessions" => args.sessions = value.parse()?,
            "--words" => args.words = value.parse()?,
            "--chunk" => args.chunk = value.parse()?,
            "--nats" => args.nats = Some(value.into()),
            "--spread" => args.spread = value.parse()?,
            other => bail!("unknown flag {other}"),
        }
    }
    Ok(args)
}

/// A child process killed on drop.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// `VmRSS` and `VmHWM` of a process, in KiB.
fn memory_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// CPU time (user + system) a process has used, in milliseconds.
fn cpu_ms(pid: &str) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name (which may hold spaces): utime and stime are the
    // 12th and 13th of them, in clock ticks (100 per second on Linux).
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let tick = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (tick(11) + tick(12)) * 10.0
}

fn now_micros() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

fn reply_text(words: usize) -> String {
    let vocabulary = [
        "gateway", "session", "stream", "event", "lane", "token", "model", "reply",
    ];
    (0..words)
        .map(|i| vocabulary[i % vocabulary.len()])
        .collect::<Vec<_>>()
        .join(" ")
}

fn write_agent_dir(agent: &Path, mock_port: u16) -> anyhow::Result<()> {
    std::fs::create_dir_all(agent)?;
    let models = json!({"providers": {"mock": {
        "baseUrl": format!("http://127.0.0.1:{mock_port}/v1"), "api": "openai-completions",
        "apiKey": "mock-key",
        "models": [{"id": "mock-model", "name": "Mock Model", "contextWindow": 128000, "maxTokens": 16384}]
    }}});
    std::fs::write(agent.join("models.json"), models.to_string())?;
    let settings = json!({"defaultProvider": "mock", "defaultModel": "mock-model",
                          "retry": {"enabled": false}});
    std::fs::write(agent.join("settings.json"), settings.to_string())?;
    Ok(())
}

/// Starts `program`, returning it and the first stdout/stderr line containing `marker`.
async fn spawn_until(mut command: Command, marker: &str) -> anyhow::Result<(Proc, String)> {
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = command.spawn().context("spawn")?;
    let stdout = child.stdout.take().context("stdout")?;
    let stderr = child.stderr.take().context("stderr")?;
    let proc = Proc(child);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    for pipe in [
        Box::new(stdout) as Box<dyn std::io::Read + Send>,
        Box::new(stderr),
    ] {
        let tx = tx.clone();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(pipe).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
    }
    let line = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = rx.recv().await {
            if line.contains(marker) {
                return Some(line);
            }
        }
        None
    })
    .await
    .ok()
    .flatten()
    .with_context(|| format!("no line with {marker:?}"))?;
    Ok((proc, line))
}

/// One received event: its name's index in [`EVENT_NAMES`], receipt time and latency (µs).
struct Received {
    name: usize,
    at: u64,
    latency: u64,
}

/// The lifecycle events' names; anything else is counted as "other".
const EVENT_NAMES: [&str; 12] = [
    "agent_start",
    "turn_start",
    "message_start",
    "text_delta",
    "thinking_delta",
    "toolcall_delta",
    "message_end",
    "tool_execution_start",
    "tool_execution_end",
    "turn_end",
    "agent_end",
    "other",
];

struct SessionResult {
    /// Every event, to tell the burst of starts from the streaming.
    received: Vec<Received>,
    events: usize,
}

/// The parts of a frame the benchmark reads; the payload is skipped unparsed, so the
/// client's own work stays small next to the gateway's.
#[derive(serde::Deserialize)]
struct FrameHead<'a> {
    #[serde(rename = "type", borrow)]
    kind: &'a str,
    #[serde(default, borrow)]
    event: Option<&'a str>,
    #[serde(default)]
    id: Option<u64>,
    #[serde(default)]
    ok: Option<bool>,
    #[serde(default)]
    ts: Option<u64>,
}

/// One session: created and prompted through `url`, its events read through `watch`
/// (another node of a cluster, or the same gateway).
async fn drive(
    url: String,
    watch: String,
    work: String,
    created: Arc<Barrier>,
    go: Arc<Barrier>,
    delay: Duration,
) -> anyhow::Result<SessionResult> {
    let mut owner = Client::connect(&url, Some("bench-token")).await?;
    let separate = watch != url;
    let session = owner
        .call(
            "session.create",
            json!({"cwd": work, "tools": [], "subscribe": !separate}),
        )
        .await?;
    let id = session["sessionId"].as_str().unwrap_or_default().to_owned();
    let mut watcher = if separate {
        let mut watcher = Client::connect(&watch, Some("bench-token")).await?;
        watcher
            .call("session.subscribe", json!({"sessionId": id}))
            .await?;
        Some(watcher)
    } else {
        None
    };
    created.wait().await;
    go.wait().await;
    tokio::time::sleep(delay).await;
    let prompt = owner
        .send(
            "session.prompt",
            json!({"sessionId": id, "text": "stream please"}),
        )
        .await?;
    let client = watcher.as_mut().unwrap_or(&mut owner);
    let mut received_events = Vec::with_capacity(64);
    let mut events = 0;
    // Frames are read in order, each timed as it arrives (also those before the response).
    loop {
        let Some(text) = client.recv_text().await? else {
            bail!("connection closed");
        };
        let received = now_micros();
        let frame: FrameHead = serde_json::from_str(&text)?;
        if frame.kind == "response" && frame.id == Some(prompt) && frame.ok != Some(true) {
            bail!("prompt refused: {text}");
        }
        if frame.kind != "event" {
            continue;
        }
        events += 1;
        let name = frame.event.unwrap_or("");
        if let Some(ts) = frame.ts {
            received_events.push(Received {
                name: EVENT_NAMES
                    .iter()
                    .position(|n| *n == name)
                    .unwrap_or(EVENT_NAMES.len() - 1),
                at: received,
                latency: received.saturating_sub(ts),
            });
        }
        if name == "agent_end" {
            break;
        }
    }
    if let Some(watcher) = watcher {
        watcher.close().await;
    }
    owner.close().await;
    Ok(SessionResult {
        received: received_events,
        events,
    })
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let index = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

async fn run(args: Args) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let agent = dir.path().join("agent");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work)?;

    let mock_port = free_port()?;
    let chunk = args.chunk;
    let script = json!({"items": [{"type": "text", "text": reply_text(args.words)}],
                        "chunkSize": chunk});
    // Two more for the failover measure of a cluster run.
    let scripts: Vec<Value> = (0..args.sessions + 2).map(|_| script.clone()).collect();
    let script_file = dir.path().join("scripts.json");
    std::fs::write(&script_file, Value::Array(scripts).to_string())?;
    let mut mock = Command::new(&args.mock);
    mock.args(["--port", &mock_port.to_string(), "--script"])
        .arg(&script_file);
    let (mock, _) = spawn_until(mock, "listening").await?;
    let mock_pid = mock.0.id().to_string();
    write_agent_dir(&agent, mock_port)?;
    // The sessions open in `work`: the workspace of the bench token's principal.
    std::fs::write(
        agent.join("gateway.json"),
        json!({"principals": {"default": {"workspaces": [work]}}}).to_string(),
    )?;

    let mut nodes = match &args.nats {
        Some(nats) => cluster::start(nats, &args.gateway, dir.path(), mock_port, &work).await?,
        None => {
            let mut gateway = Command::new(&args.gateway);
            gateway
                .args(["--port", "0", "--token", "bench-token", "--agent-dir"])
                .arg(&agent)
                .env("PI_CODING_AGENT_DIR", &agent);
            let (gateway, line) = spawn_until(gateway, "listening on").await?;
            let url = line
                .split_whitespace()
                .last()
                .context("gateway url")?
                .to_owned();
            cluster::Nodes::single(gateway, url)
        }
    };
    let pids = nodes.pids();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let base_rss = nodes.rss_kib();
    let created = Arc::new(Barrier::new(args.sessions + 1));
    let go = Arc::new(Barrier::new(args.sessions + 1));
    let mut tasks = Vec::new();
    for i in 0..args.sessions {
        tasks.push(tokio::spawn(drive(
            nodes.url(i),
            nodes.url(i + 1),
            work.to_string_lossy().into_owned(),
            Arc::clone(&created),
            Arc::clone(&go),
            Duration::from_secs_f64(args.spread * i as f64 / args.sessions as f64),
        )));
    }
    created.wait().await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let idle_rss = nodes.rss_kib();
    let gateway_cpu = || pids.iter().map(|p| cpu_ms(&p.to_string())).sum::<f64>();
    let cpu_before = [gateway_cpu(), cpu_ms("self"), cpu_ms(&mock_pid)];
    let started = Instant::now();
    go.wait().await;

    // Results are gathered only once every session ended, so that the client does no
    // bookkeeping while others still stream.
    let mut outcomes = Vec::with_capacity(tasks.len());
    for task in tasks {
        outcomes.push(task.await);
    }
    let wall = started.elapsed();
    let end_rss = nodes.rss_kib();
    let hwm = nodes.hwm_kib();
    let cpu_after = [gateway_cpu(), cpu_ms("self"), cpu_ms(&mock_pid)];
    let cpu: Vec<f64> = cpu_after
        .iter()
        .zip(cpu_before)
        .map(|(a, b)| a - b)
        .collect();
    let mut latencies = Vec::new();
    let mut by_name: Vec<Vec<u64>> = vec![Vec::new(); EVENT_NAMES.len()];
    // Every event as "receipt_us latency_us name session", for plotting the tail over time.
    let trace_path = std::env::var("GATEWAY_LOAD_TRACE").ok();
    let mut trace = String::new();
    let mut events = 0usize;
    let mut failures = 0usize;
    for (index, outcome) in outcomes.into_iter().enumerate() {
        match outcome {
            Ok(Ok(result)) => {
                events += result.events;
                for r in result.received {
                    latencies.push(r.latency);
                    by_name[r.name].push(r.latency);
                    if trace_path.is_some() {
                        trace.push_str(&format!(
                            "{} {} {} {index}\n",
                            r.at, r.latency, EVENT_NAMES[r.name]
                        ));
                    }
                }
            }
            Ok(Err(e)) => {
                failures += 1;
                if failures <= 3 {
                    eprintln!("session failed: {e:#}");
                }
            }
            Err(e) => {
                failures += 1;
                eprintln!("task failed: {e}");
            }
        }
    }
    latencies.sort_unstable();
    let per_session = |kib: u64| kib.saturating_sub(base_rss) as f64 / args.sessions as f64;
    let failover = match args.nats {
        Some(_) => format!(
            ",\"nodes\":3,\"failoverSeconds\":{:.2}",
            nodes.failover(&work.to_string_lossy()).await?
        ),
        None => String::new(),
    };
    println!(
        "{{\"sessions\":{},\"failed\":{},\"events\":{},\"wallSeconds\":{:.3},\"eventsPerSecond\":{:.0},\
\"latencyP50Ms\":{:.2},\"latencyP99Ms\":{:.2},\"latencyMaxMs\":{:.2},\"baseRssMiB\":{:.1},\
\"idleRssMiB\":{:.1},\"peakRssMiB\":{:.1},\"endRssMiB\":{:.1},\"idleKiBPerSession\":{:.1},\"peakKiBPerSession\":{:.1},\
\"cpuMs\":{{\"gateway\":{:.0},\"client\":{:.0},\"mock\":{:.0}}}{failover}}}",
        args.sessions,
        failures,
        events,
        wall.as_secs_f64(),
        events as f64 / wall.as_secs_f64(),
        percentile(&latencies, 0.50) as f64 / 1000.0,
        percentile(&latencies, 0.99) as f64 / 1000.0,
        latencies.last().copied().unwrap_or(0) as f64 / 1000.0,
        base_rss as f64 / 1024.0,
        idle_rss as f64 / 1024.0,
        hwm as f64 / 1024.0,
        end_rss as f64 / 1024.0,
        per_session(idle_rss),
        per_session(hwm),
        cpu[0],
        cpu[1],
        cpu[2],
    );
    if let Some(path) = trace_path {
        let _ = std::fs::write(path, trace);
    }
    // Per event name on stderr: where the slow tail comes from.
    for (name, mut values) in EVENT_NAMES.iter().zip(by_name) {
        if values.is_empty() {
            continue;
        }
        values.sort_unstable();
        eprintln!(
            "  {name}: n={} p50={:.1}ms p99={:.1}ms",
            values.len(),
            percentile(&values, 0.50) as f64 / 1000.0,
            percentile(&values, 0.99) as f64 / 1000.0
        );
    }
    drop(nodes);
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let args = parse_args()?;
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(run(args))
}
