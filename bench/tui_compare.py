#!/usr/bin/env python3
"""Interactive mode side by side: what rendering one long streamed reply costs in the TypeScript
pi 0.73.1 and in ours, both driven through tmux against the same mock-llm.

Each run starts pi in interactive mode in a detached tmux server (120x40, TERM=xterm-256color),
records every byte it writes to the terminal with `pipe-pane`, waits for the footer, types a
prompt and presses Enter. mock-llm answers with ~2,000 words of markdown (headings, prose with
inline styles, lists, a code block) in 8-character deltas. The run ends when the reply's last
word is on screen and the terminal output has been quiet for 1 s. For that phase only (Enter to
the last byte) it measures bytes written, frames (synchronized-output blocks), CPU time of pi's
process tree (utime+stime from /proc), wall time; peak RSS (VmHWM) at the end. Before the
prompt it also times opening: from starting pi to its screen settling with the footer shown
(with PI_BENCH_TUI_SESSION, the resumed conversation drawn); after the reply, `/tree`: from
Enter to the tree drawn and settled, then 20 Up keys to the screen settled again.

Two delivery modes (PI_BENCH_TUI_MODES, default "paced,burst"):
  paced  a small proxy in this script replays mock-llm's SSE stream one event every
         PI_BENCH_DELTA_MS ms (default 5), like a fast model: every delta can become a frame;
  burst  pi talks to mock-llm directly, which sends the whole stream as fast as it can.
Medians over the runs; implementations alternate. Also runs pi-tui's render_cost example
(differential renderer against full redraws on a virtual terminal).

usage: bench/tui_compare.py [runs=5]   (needs node >= 20, npm, cargo, tmux; installs the TS pi
into target/bench-pi like bench/pi_compare.sh; writes target/bench-pi/tui_compare.md)

Environment: PI_BENCH_TS=1.5 compares with the TypeScript pi 1.5.2 (scripts/install-ts-pi-15.sh
or $PI_TS15) instead of 0.73.1, PI_BENCH_TS=1.6 with pi 1.6.0 (scripts/install-ts-pi-16.sh or
$PI_TS16); PI_BENCH_TUI_LAYOUT=fullscreen runs both in pi 1.6's fullscreen mode (`tuiMode`,
1.6 only) and, after the reply, sends PI_BENCH_WHEEL_EVENTS (default 200) wheel-up events one
every 10 ms, measuring CPU per wheel event (regular, the default, sets `tuiMode: "regular"`);
PI_BENCH_TUI_WORDS=20000 makes the reply longer (default 2000); PI_BENCH_TUI_SESSION=FILE resumes a copy of FILE before the prompt (e.g. the 52 MB
session of bench/big_session.sh: target/bench-big/sessions/resume52.jsonl).
"""

import http.client
import http.server
import json
import math
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.environ.get("PI_BENCH_DIR", os.path.join(ROOT, "target", "bench-pi"))
PORT = int(os.environ.get("PI_BENCH_PORT", "18934"))
PROXY_PORT = int(os.environ.get("PI_BENCH_PROXY_PORT", str(PORT + 1)))
DELTA_MS = float(os.environ.get("PI_BENCH_DELTA_MS", "5"))
MODES = [m for m in os.environ.get("PI_BENCH_TUI_MODES", "paced,burst").split(",") if m]
# Which TypeScript pi: "0.73" (npm, into WORK) or "1.5" (scripts/install-ts-pi-15.sh, or $PI_TS15).
TS_VERSION = os.environ.get("PI_BENCH_TS", "0.73")
# Reply length in words (about), and a session file to resume before the prompt (copied per run).
REPLY_WORDS = int(os.environ.get("PI_BENCH_TUI_WORDS", "2000"))
SESSION = os.environ.get("PI_BENCH_TUI_SESSION", "")
# pi 1.6's layouts: "regular" (the terminal's scrollback) or "fullscreen" (the alternate screen).
LAYOUT = os.environ.get("PI_BENCH_TUI_LAYOUT", "regular")
WHEEL_EVENTS = int(os.environ.get("PI_BENCH_WHEEL_EVENTS", "200"))
COLS, ROWS = 120, 40
CHUNK = 8
END_MARKER = "QUOKKAEND"
PROMPT = "Explain how the terminal renderer works, in detail."
CLK_TCK = os.sysconf("SC_CLK_TCK")
SYNC_BEGIN = b"\x1b[?2026h"
# Paced mode: pi's pid for the proxy, and pi's CPU ticks when the proxy sent the first event.
STREAM_MARK = {}


def setup():
    os.makedirs(WORK, exist_ok=True)
    subprocess.run(["cargo", "build", "-q", "--release", "-p", "pi-coding-agent", "-p", "mock-llm"],
                   cwd=ROOT, check=True)
    ours = os.path.join(ROOT, "target", "release", "pi")
    if TS_VERSION in ("1.5", "1.6"):
        short = TS_VERSION.replace(".", "")
        ts_bin = os.environ.get(f"PI_TS{short}") or subprocess.run(
            [os.path.join(ROOT, "scripts", f"install-ts-pi-{short}.sh")], capture_output=True,
            text=True, check=True).stdout.strip()
        return ts_bin, ours
    ts_bin = os.path.join(WORK, "node_modules", ".bin", "pi")
    if not os.path.exists(ts_bin):
        subprocess.run("npm init -y >/dev/null && npm install --no-audit --no-fund "
                       "--ignore-scripts @mariozechner/pi-coding-agent@0.73.1 >/dev/null",
                       shell=True, cwd=WORK, check=True)
    return ts_bin, ours


# --- the reply ------------------------------------------------------------------------------

WORDS = ("the renderer writes only lines that changed since last frame and keeps cursor "
         "position stable while text streams into scrollback buffer terminal width wraps "
         "every paragraph again when new tokens arrive so cost grows with visible output "
         "differential update compares previous lines against next lines then emits escape "
         "sequences moving cursor up clearing rows painting styled spans markdown headings "
         "lists code blocks syntax highlighting theme colors footer editor spinner").split()


class Lcg:
    def __init__(self, seed):
        self.state = seed

    def below(self, n):
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        return (self.state >> 33) % n


def sentence(rng):
    words = [WORDS[rng.below(len(WORDS))] for _ in range(8 + rng.below(12))]
    style = rng.below(6)
    if style == 0:
        words[2] = f"**{words[2]}**"
    elif style == 1:
        words[3] = f"`{words[3]}()`"
    elif style == 2:
        words[1] = f"*{words[1]}*"
    text = " ".join(words)
    return text[0].upper() + text[1:] + "."


def paragraph(rng, sentences):
    return " ".join(sentence(rng) for _ in range(sentences))


CODE = """```rust
pub fn render(&mut self, lines: Vec<String>) -> std::io::Result<()> {
    let first_changed = self
        .previous
        .iter()
        .zip(&lines)
        .position(|(old, new)| old != new)
        .unwrap_or(self.previous.len().min(lines.len()));
    let mut out = String::from("\\x1b[?2026h");
    self.move_cursor_to(&mut out, first_changed);
    for line in &lines[first_changed..] {
        out.push_str("\\x1b[2K");
        out.push_str(line);
        out.push_str("\\r\\n");
    }
    if lines.len() < self.previous.len() {
        out.push_str("\\x1b[J");
    }
    out.push_str("\\x1b[?2026l");
    self.terminal.write_all(out.as_bytes())?;
    self.previous = lines;
    Ok(())
}
```"""


def reply_text():
    rng = Lcg(42)
    parts = ["# How the renderer works", paragraph(rng, 6), paragraph(rng, 5),
             "## Differential updates", paragraph(rng, 7), CODE, paragraph(rng, 5),
             "## What costs time"]
    parts.append("\n".join(f"- {sentence(rng)}" for _ in range(10)))
    parts += [paragraph(rng, 6), "## Step by step"]
    parts.append("\n".join(f"{i}. {sentence(rng)}" for i in range(1, 9)))
    # About 84 words a paragraph: 14 make the 2,000-word reply, more make longer ones.
    for _ in range(max(14, 14 + (REPLY_WORDS - 2000) // 84)):
        parts.append(paragraph(rng, 6))
    parts += ["## Summary", paragraph(rng, 6), paragraph(rng, 5), END_MARKER]
    return "\n\n".join(parts)


REPLY = reply_text()
TS_LABEL = {"1.5": "1.5.2", "1.6": "1.6.0"}.get(TS_VERSION, "0.73.1")
DELTAS = -(-len(REPLY) // CHUNK)  # mock-llm splits text into CHUNK-character pieces
SCRIPT = {"items": [{"type": "text", "text": REPLY}], "chunkSize": CHUNK,
          "usage": {"input": 1200, "output": 2600}}


# --- mock-llm and the pacing proxy ---------------------------------------------------------

def mock_call(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{PORT}{path}", data=data, method=method,
                                 headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        text = resp.read()
        is_json = "json" in resp.headers.get("content-type", "")
    return json.loads(text) if text and is_json else text


class PacedHandler(http.server.BaseHTTPRequestHandler):
    """Forwards a request to mock-llm, then replays its SSE events one per DELTA_MS."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def setup(self):
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def read_body(self):
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            body = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    return body
                body += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("content-length", "0")))

    def forward(self):
        body = self.read_body() if self.command == "POST" else None
        headers = {k: v for k, v in self.headers.items()
                   if k.lower() not in ("host", "connection", "content-length", "transfer-encoding",
                                        "accept-encoding")}
        conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=60)
        conn.request(self.command, self.path, body=body, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        conn.close()
        ctype = resp.getheader("content-type", "")
        if resp.status != 200 or "event-stream" not in ctype:
            self.send_response(resp.status)
            self.send_header("content-type", ctype or "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        events = [e + b"\n\n" for e in data.replace(b"\r\n", b"\n").split(b"\n\n") if e.strip()]
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        # The request has been built and sent by now: what pi spends from here on is the
        # stream's own cost (per delta), apart from building a big session's request.
        STREAM_MARK["cpu"] = tree_cpu_ticks(STREAM_MARK["pid"]) if STREAM_MARK.get("pid") else None
        start = time.perf_counter()
        for i, event in enumerate(events):
            delay = start + i * DELTA_MS / 1000 - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
        self.wfile.write(b"0\r\n\r\n")

    def handle_one_request(self):
        try:
            super().handle_one_request()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # pi went away mid-stream (killed on cleanup)

    do_POST = forward
    do_GET = forward


# --- tmux and /proc -------------------------------------------------------------------------

class Pane:
    def __init__(self, name, command, agent, work, home, out_file):
        self.socket = f"pi-tui-bench-{os.getpid()}-{name}"
        self.out_file = out_file
        env = {"PI_CODING_AGENT_DIR": agent, "HOME": home, "PI_OFFLINE": "1",
               "PI_SKIP_VERSION_CHECK": "1", "COLORTERM": "truecolor", "TERM": "xterm-256color"}
        shell = "exec env " + " ".join(f"{k}={shq(v)}" for k, v in env.items()) + " " + \
            " ".join(shq(c) for c in command)
        self.socket_path = os.path.join(os.environ.get("TMUX_TMPDIR", "/tmp"),
                                        f"tmux-{os.getuid()}", self.socket)
        try:
            self.tmux("-f", "/dev/null", "new-session", "-d", "-s", "pi", "-x", str(COLS),
                      "-y", str(ROWS), "-c", work, shell, check=True,
                      env={**{k: v for k, v in os.environ.items() if k != "TMUX"}, "HOME": home})
            self.tmux("set-option", "-t", "pi", "history-limit", "20000")
            self.tmux("pipe-pane", "-o", "-t", "pi", f"cat >> {shq(out_file)}", check=True)
            self.pid = int(self.tmux("display", "-p", "-t", "pi", "#{pane_pid}").strip())
        except BaseException:
            self.kill()
            raise

    def tmux(self, *args, check=False, env=None):
        out = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True,
                             env=env)
        if check and out.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)}: {out.stderr.strip()}")
        return out.stdout

    def screen(self):
        return self.tmux("capture-pane", "-p", "-t", "pi")

    def size(self):
        try:
            return os.path.getsize(self.out_file)
        except OSError:
            return 0

    def kill(self):
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)
        try:
            os.unlink(self.socket_path)  # kill-server leaves the socket file behind
        except OSError:
            pass


def shq(s):
    return "'" + str(s).replace("'", "'\\''") + "'"


def proc_stat(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[1]), [int(x) for x in fields[11:15]]  # ppid, utime stime cutime cstime


def tree_cpu_ticks(root):
    """utime+stime of `root` and its live descendants, plus what reaped children used."""
    parents, times = {}, {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parents[int(entry)], times[int(entry)] = proc_stat(entry)
            except (OSError, ValueError, IndexError):
                pass
    tree, frontier = {root}, [root]
    while frontier:
        pid = frontier.pop()
        for child, parent in parents.items():
            if parent == pid and child not in tree:
                tree.add(child)
                frontier.append(child)
    return sum(sum(times[p]) for p in tree if p in times)


def peak_rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def wait_until(what, pane, check, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        screen = pane.screen()
        if check(screen):
            return screen
        time.sleep(0.1)
    raise RuntimeError(f"timed out waiting for {what}; screen:\n{pane.screen()}")


def wait_quiet(pane, quiet, timeout):
    """Waits until the output file has not grown for `quiet` s; returns when it last grew."""
    last_size, last_change = pane.size(), time.perf_counter()
    deadline = last_change + timeout
    while time.perf_counter() < deadline:
        time.sleep(0.02)
        size = pane.size()
        now = time.perf_counter()
        if size != last_size:
            last_size, last_change = size, now
        elif now - last_change >= quiet:
            return last_change
    return last_change


# --- one run ---------------------------------------------------------------------------------

def fresh_dirs(port):
    base = os.path.join(WORK, "tui-run")
    shutil.rmtree(base, ignore_errors=True)
    agent, work, home = (os.path.join(base, d) for d in ("agent", "work", "home"))
    for d in (agent, work, home):
        os.makedirs(d)
    models = {"providers": {"mock": {
        "baseUrl": f"http://127.0.0.1:{port}/v1", "api": "openai-completions", "apiKey": "mock-key",
        "models": [{"id": "mock-model", "name": "Mock Model", "contextWindow": 128000,
                    "maxTokens": 16384}]}}}
    with open(os.path.join(agent, "models.json"), "w") as f:
        json.dump(models, f)
    with open(os.path.join(agent, "settings.json"), "w") as f:
        settings = {"defaultProvider": "mock", "defaultModel": "mock-model", "quietStartup": True,
                    "tuiMode": LAYOUT, "fullscreenWheelScrollLines": 3}
        if SESSION:
            # The big session is far over the mock's window: no compaction, as in big_session.sh.
            settings["compaction"] = {"enabled": False}
        json.dump(settings, f)
    return base, agent, work, home


def run_once(name, command, mode, panes):
    base, agent, work, home = fresh_dirs(PROXY_PORT if mode == "paced" else PORT)
    mock_call("POST", "/_mock/reset")
    mock_call("POST", "/_mock/scripts", SCRIPT)
    if SESSION:
        resumed = os.path.join(base, "resumed.jsonl")
        shutil.copyfile(SESSION, resumed)
        command = [*command, "--session", resumed]
    opened = time.perf_counter()
    pane = Pane(name, command, agent, work, home, os.path.join(base, "terminal.out"))
    panes.append(pane)
    try:
        wait_until("the footer", pane, lambda s: "mock-model" in s, 180)
        # Opening: start to the screen settled (the resumed conversation drawn), ±0.1 s.
        open_s = wait_quiet(pane, 0.5, 60) - opened
        pane.tmux("send-keys", "-t", "pi", "-l", PROMPT)
        wait_until("the typed prompt", pane, lambda s: PROMPT[:40] in s, 10)
        wait_quiet(pane, 0.3, 5)
        bytes0, cpu0 = pane.size(), tree_cpu_ticks(pane.pid)
        STREAM_MARK.clear()
        STREAM_MARK["pid"] = pane.pid
        with open(pane.out_file, "rb") as f:
            frames0 = f.read().count(SYNC_BEGIN)
        start = time.perf_counter()
        pane.tmux("send-keys", "-t", "pi", "Enter")
        wait_until("the end of the reply", pane, lambda s: END_MARKER in s, 600)
        end = wait_quiet(pane, 1.0, 30)
        cpu_end = tree_cpu_ticks(pane.pid)
        cpu = cpu_end - cpu0
        stream_cpu0 = STREAM_MARK.get("cpu") if mode == "paced" else None
        request_cpu = float("nan") if stream_cpu0 is None else stream_cpu0 - cpu0
        stream_cpu = float("nan") if stream_cpu0 is None else cpu_end - stream_cpu0
        rss = peak_rss_mib(pane.pid)
        written = pane.size() - bytes0
        with open(pane.out_file, "rb") as f:
            frames = f.read().count(SYNC_BEGIN) - frames0
        wheel_us = wheel_cost(pane) if LAYOUT == "fullscreen" else float("nan")
        tree_s, tree_keys_s = open_tree(pane)
        requests = mock_call("GET", "/_mock/requests")
        if len(requests) != 1:
            print(f"  note: {name} sent {len(requests)} LLM requests", file=sys.stderr)
    finally:
        pane.kill()
        panes.remove(pane)
    cpu_ms = cpu * 1000 / CLK_TCK
    return {"open_s": open_s, "bytes": written, "frames": frames, "cpu_ms": cpu_ms, "wall_s": end - start,
            "bytes_per_delta": written / DELTAS, "cpu_us_per_delta": cpu_ms * 1000 / DELTAS,
            "request_cpu_ms": request_cpu * 1000 / CLK_TCK,
            "stream_us_per_delta": stream_cpu * 1000 / CLK_TCK * 1000 / DELTAS,
            "rss": rss, "tree_s": tree_s, "tree_keys_s": tree_keys_s, "wheel_us": wheel_us}


def wheel_cost(pane):
    """Fullscreen: WHEEL_EVENTS wheel events (SGR reports over the transcript), one every
    10 ms, alternating up and down so that each one moves the viewport whatever the
    transcript's length (all-up events stop moving at its top, which made a short transcript
    look cheap), then Ctrl+End; CPU of pi's process tree per event, in µs, until the screen
    is quiet again."""
    wait_quiet(pane, 0.5, 30)
    cpu0 = tree_cpu_ticks(pane.pid)
    for i in range(WHEEL_EVENTS):
        button = 64 if i % 2 == 0 else 65
        pane.tmux("send-keys", "-t", "pi", "-l", f"\x1b[<{button};20;10M")
        time.sleep(0.01)
    wait_quiet(pane, 0.5, 60)
    cpu = tree_cpu_ticks(pane.pid) - cpu0
    pane.tmux("send-keys", "-t", "pi", "C-End")
    wait_quiet(pane, 0.5, 30)
    return cpu * 1000 / CLK_TCK * 1000 / WHEEL_EVENTS


def open_tree(pane):
    """After the reply: `/tree` from Enter to its screen settled, then 20 Up keys sent at once
    to the screen settled again (each ±0.05 s)."""
    pane.tmux("send-keys", "-t", "pi", "-l", "/tree")
    wait_until("the typed /tree", pane, lambda s: "/tree" in s, 10)
    wait_quiet(pane, 0.3, 5)
    start = time.perf_counter()
    pane.tmux("send-keys", "-t", "pi", "Enter")
    wait_until("the session tree", pane, lambda s: "Session Tree" in s, 300)
    tree_s = wait_quiet(pane, 0.3, 120) - start
    start = time.perf_counter()
    pane.tmux("send-keys", "-t", "pi", *(["Up"] * 20))
    keys_s = wait_quiet(pane, 0.5, 120) - start
    return tree_s, keys_s


ROWS_SPEC = [("open_s", "opening (start → screen settled)", "s", "{:.2f}"),
             ("wall_s", "wall time (Enter → last byte)", "s", "{:.2f}"),
             ("bytes", "bytes written to the terminal", "B", "{:,.0f}"),
             ("frames", "frames (synchronized-output blocks)", "", "{:,.0f}"),
             ("bytes_per_delta", "bytes per delta", "B", "{:,.0f}"),
             ("cpu_ms", "CPU time (user+sys)", "ms", "{:,.0f}"),
             ("cpu_us_per_delta", "CPU per delta", "µs", "{:,.0f}"),
             ("request_cpu_ms", "CPU from Enter to the first event (paced)", "ms", "{:,.0f}"),
             ("stream_us_per_delta", "CPU per delta while streaming (paced)", "µs", "{:,.0f}"),
             ("rss", "peak RSS (VmHWM)", "MiB", "{:.1f}"),
             ("wheel_us", "CPU per wheel event (fullscreen)", "µs", "{:,.0f}"),
             ("tree_s", "/tree (Enter → tree settled)", "s", "{:.2f}"),
             ("tree_keys_s", "20 Up keys in /tree (→ settled)", "s", "{:.2f}")]


def table(results, mode, runs):
    title = (f"{mode}: {DELTAS} deltas of {CHUNK} chars"
             + (f", one every {DELTA_MS:g} ms" if mode == "paced" else ", as fast as mock-llm sends"))
    lines = [f"### {title} (medians of {runs})", "",
             f"| metric | TypeScript pi {TS_LABEL} | ours | ours / TS |", "|---|---:|---:|---:|"]
    for key, label, unit, fmt in ROWS_SPEC:
        ts = statistics.median(r[key] for r in results["ts"])
        rs = statistics.median(r[key] for r in results["rust"])
        if math.isnan(ts) and math.isnan(rs):
            continue  # not measured in this mode or layout
        ratio = f"{rs / ts:.2f}×" if ts else "–"
        u = f" {unit}" if unit else ""
        lines.append(f"| {label} | {fmt.format(ts)}{u} | {fmt.format(rs)}{u} | {ratio} |")
    return "\n".join(lines)


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    ts_bin, ours = setup()
    words = len(REPLY.split())
    print(f"reply: {words} words, {len(REPLY)} chars, {DELTAS} SSE text deltas; "
          f"terminal {COLS}x{ROWS}; {runs} runs per implementation and mode", flush=True)
    mock = subprocess.Popen([os.path.join(ROOT, "target", "release", "mock-llm"), "--port", str(PORT)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    proxy = None
    panes = []
    sections = []
    try:
        for _ in range(50):
            try:
                mock_call("GET", "/_mock/health")
                break
            except OSError:
                time.sleep(0.1)
        if "paced" in MODES:
            proxy = http.server.ThreadingHTTPServer(("127.0.0.1", PROXY_PORT), PacedHandler)
            proxy.daemon_threads = True
            threading.Thread(target=proxy.serve_forever, daemon=True).start()
        for mode in MODES:
            results = {"ts": [], "rust": []}
            for i in range(runs):
                for impl, command in (("ts", [ts_bin]), ("rust", [ours])):
                    r = run_once(impl, command, mode, panes)
                    results[impl].append(r)
                    print(f"  {mode} run {i + 1} {impl:4}: {r['wall_s']:.2f} s, {r['bytes']:,} B, "
                          f"{r['frames']} frames, {r['cpu_ms']:.0f} ms CPU, {r['rss']:.1f} MiB",
                          flush=True)
            sections.append(table(results, mode, runs))
            print("\n" + sections[-1] + "\n", flush=True)
    finally:
        for pane in list(panes):
            pane.kill()
        if proxy is not None:
            proxy.shutdown()
            proxy.server_close()
        mock.kill()
        mock.wait()
    render = subprocess.run(["cargo", "run", "-q", "--release", "-p", "pi-tui", "--example",
                             "render_cost"], cwd=ROOT, capture_output=True, text=True)
    render_out = (render.stdout + render.stderr).strip()
    print("render_cost (pi-tui, virtual terminal):\n" + render_out)
    md = ["# Interactive mode: rendering one long streamed reply", "",
          f"Reply: {words} words of markdown ({len(REPLY)} chars) in {DELTAS} SSE text deltas; "
          f"tmux {COLS}x{ROWS}, TERM=xterm-256color; TypeScript pi {TS_LABEL}; "
          + (f"in a resumed session ({os.path.basename(SESSION)}); " if SESSION else "in a fresh session; ")
          + f"measured from Enter until the last byte "
          f"written. CPU is utime+stime of pi's process tree. Command: `bench/tui_compare.py {runs}`.",
          "", *("\n\n".join(sections).splitlines()), "",
          "## pi-tui render_cost example", "", "```", render_out, "```", ""]
    path = os.path.join(WORK, "tui_compare.md")
    with open(path, "w") as f:
        f.write("\n".join(md))
    print(f"\nmarkdown: {path}")


if __name__ == "__main__":
    main()
