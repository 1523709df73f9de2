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

struct Args {
    gateway: PathBuf,
    mock: PathBuf,
    sessions: usize,
    words: usize,
    chunk: usize,
}

fn parse_args() -> anyhow::Result<Args> {
    let mut args = Args {
        gateway: PathBuf::from("target/release/pi-gateway"),
        mock: PathBuf::from("target/release/mock-llm"),
        sessions: 100,
        words: 120,
        chunk: 24,
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

struct SessionResult {
    latencies_us: Vec<u64>,
    /// Latency by event name, to tell the burst of starts from the streaming.
    by_event: Vec<(String, u64)>,
    events: usize,
}

async fn drive(
    url: String,
    work: String,
    created: Arc<Barrier>,
    go: Arc<Barrier>,
) -> anyhow::Result<SessionResult> {
    let mut client = Client::connect(&url, Some("bench-token")).await?;
    let session = client
        .call("session.create", json!({"cwd": work, "tools": []}))
        .await?;
    let id = session["sessionId"].as_str().unwrap_or_default().to_owned();
    created.wait().await;
    go.wait().await;
    client
        .call(
            "session.prompt",
            json!({"sessionId": id, "text": "stream please"}),
        )
        .await?;
    let mut latencies_us = Vec::new();
    let mut by_event = Vec::new();
    let mut events = 0;
    let mut pending: Vec<Value> = std::mem::take(&mut client.events);
    loop {
        let frame = match pending.pop() {
            Some(frame) => frame,
            None => match client.recv().await? {
                Some(frame) => frame,
                None => bail!("connection closed"),
            },
        };
        let received = now_micros();
        if frame["type"] != "event" {
            continue;
        }
        events += 1;
        if let Some(ts) = frame["ts"].as_u64() {
            let latency = received.saturating_sub(ts);
            latencies_us.push(latency);
            by_event.push((
                format!("{} {received}", frame["event"].as_str().unwrap_or("")),
                latency,
            ));
        }
        if frame["event"] == "agent_end" {
            break;
        }
    }
    client.close().await;
    Ok(SessionResult {
        latencies_us,
        by_event,
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
    let scripts: Vec<Value> = (0..args.sessions).map(|_| script.clone()).collect();
    let script_file = dir.path().join("scripts.json");
    std::fs::write(&script_file, Value::Array(scripts).to_string())?;
    let mut mock = Command::new(&args.mock);
    mock.args(["--port", &mock_port.to_string(), "--script"])
        .arg(&script_file);
    let (_mock, _) = spawn_until(mock, "listening").await?;
    write_agent_dir(&agent, mock_port)?;

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
    let pid = gateway.0.id();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (base_rss, _) = memory_kib(pid);

    let created = Arc::new(Barrier::new(args.sessions + 1));
    let go = Arc::new(Barrier::new(args.sessions + 1));
    let mut tasks = Vec::new();
    for _ in 0..args.sessions {
        tasks.push(tokio::spawn(drive(
            url.clone(),
            work.to_string_lossy().into_owned(),
            Arc::clone(&created),
            Arc::clone(&go),
        )));
    }
    created.wait().await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (idle_rss, _) = memory_kib(pid);
    let started = Instant::now();
    go.wait().await;

    let sampler = tokio::spawn(async move {
        let mut peak = 0;
        loop {
            let (rss, _) = memory_kib(pid);
            peak = peak.max(rss);
            tokio::time::sleep(Duration::from_millis(20)).await;
            if rss == 0 {
                return peak;
            }
        }
    });
    let mut latencies = Vec::new();
    let mut by_event: std::collections::BTreeMap<String, Vec<u64>> = Default::default();
    let mut events = 0usize;
    let mut failures = 0usize;
    for task in tasks {
        match task.await {
            Ok(Ok(result)) => {
                events += result.events;
                latencies.extend(result.latencies_us);
                for (name, latency) in result.by_event {
                    by_event.entry(name).or_default().push(latency);
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
    let wall = started.elapsed();
    let (end_rss, hwm) = memory_kib(pid);
    sampler.abort();
    latencies.sort_unstable();
    let per_session = |kib: u64| kib.saturating_sub(base_rss) as f64 / args.sessions as f64;
    println!(
        "{{\"sessions\":{},\"failed\":{},\"events\":{},\"wallSeconds\":{:.3},\"eventsPerSecond\":{:.0},\
\"latencyP50Ms\":{:.2},\"latencyP99Ms\":{:.2},\"latencyMaxMs\":{:.2},\"baseRssMiB\":{:.1},\
\"idleRssMiB\":{:.1},\"peakRssMiB\":{:.1},\"endRssMiB\":{:.1},\"idleKiBPerSession\":{:.1},\"peakKiBPerSession\":{:.1}}}",
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
    );
    // Per event name on stderr: where the slow tail comes from.
    if let Ok(path) = std::env::var("GATEWAY_LOAD_TRACE") {
        // Every event as "receipt_us latency_us name", for plotting the tail over time.
        let mut lines = String::new();
        for (key, values) in &by_event {
            let mut parts = key.split(' ');
            let (name, at) = (parts.next().unwrap_or(""), parts.next().unwrap_or("0"));
            for v in values {
                lines.push_str(&format!("{at} {v} {name}\n"));
            }
        }
        let _ = std::fs::write(path, lines);
    }
    let mut by_name: std::collections::BTreeMap<String, Vec<u64>> = Default::default();
    for (key, values) in by_event {
        let name = key.split(' ').next().unwrap_or("").to_owned();
        by_name.entry(name).or_default().extend(values);
    }
    for (name, mut values) in by_name {
        values.sort_unstable();
        eprintln!(
            "  {name}: n={} p50={:.1}ms p99={:.1}ms",
            values.len(),
            percentile(&values, 0.50) as f64 / 1000.0,
            percentile(&values, 0.99) as f64 / 1000.0
        );
    }
    drop(gateway);
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let args = parse_args()?;
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(run(args))
}
