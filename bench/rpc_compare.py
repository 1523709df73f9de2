#!/usr/bin/env python3
"""RPC mode side by side: the TypeScript pi 0.73.1 and ours against the same mock-llm.

Per run and implementation: time from spawn to the first `get_state` response (startup),
one `read hello.txt` prompt to `agent_end` (2 LLM calls, 1 tool call), a second prompt,
a manual `compact` (one summary call), 200 `get_state` round trips, and peak RSS (VmHWM)
before stdin closes. Medians over the runs; implementations alternate.

usage: bench/rpc_compare.py [runs=5]   (needs node >= 20, npm, cargo; installs the TS pi
into target/bench-pi like bench/pi_compare.sh)
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
import queue

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.environ.get("PI_BENCH_DIR", os.path.join(ROOT, "target", "bench-pi"))
PORT = int(os.environ.get("PI_BENCH_PORT", "18933"))


def setup():
    os.makedirs(WORK, exist_ok=True)
    ts_bin = os.path.join(WORK, "node_modules", ".bin", "pi")
    if not os.path.exists(ts_bin):
        subprocess.run("npm init -y >/dev/null && npm install --no-audit --no-fund "
                       "--ignore-scripts @mariozechner/pi-coding-agent@0.73.1 >/dev/null",
                       shell=True, cwd=WORK, check=True)
    subprocess.run(["cargo", "build", "-q", "--release", "-p", "pi-coding-agent", "-p", "mock-llm"],
                   cwd=ROOT, check=True)
    return ts_bin, os.path.join(ROOT, "target", "release", "pi")


def fresh_dirs():
    agent = os.path.join(WORK, "rpc-agent")
    work = os.path.join(WORK, "rpc-work")
    for d in (agent, work):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    with open(os.path.join(work, "hello.txt"), "w") as f:
        f.write("Hello from the anchor test file!\nSecond line.\n")
    models = {"providers": {"mock": {
        "baseUrl": f"http://127.0.0.1:{PORT}/v1", "api": "openai-completions", "apiKey": "mock-key",
        "models": [{"id": "mock-model", "name": "Mock Model", "contextWindow": 128000, "maxTokens": 16384}]}}}
    with open(os.path.join(agent, "models.json"), "w") as f:
        json.dump(models, f)
    with open(os.path.join(agent, "settings.json"), "w") as f:
        json.dump({"defaultProvider": "mock", "defaultModel": "mock-model",
                   "compaction": {"keepRecentTokens": 1}}, f)
    return agent, work


class Rpc:
    def __init__(self, command, agent, work):
        env = dict(os.environ, PI_CODING_AGENT_DIR=agent, HOME=WORK, PI_OFFLINE="1")
        self.proc = subprocess.Popen(command + ["--mode", "rpc"], cwd=work, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))

    def send(self, obj):
        self.proc.stdin.write(json.dumps(obj) + "\n")
        self.proc.stdin.flush()

    def until(self, match):
        while True:
            line = self.lines.get(timeout=60)
            if match(line):
                return line

    def call(self, id_, obj):
        obj["id"] = id_
        self.send(obj)
        return self.until(lambda l: l.get("type") == "response" and l.get("id") == id_)

    def peak_rss_mib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        return float("nan")

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def run_once(command):
    agent, work = fresh_dirs()
    start = time.perf_counter()
    rpc = Rpc(command, agent, work)
    rpc.call("s", {"type": "get_state"})
    ready = time.perf_counter() - start
    t = time.perf_counter()
    rpc.call("p1", {"type": "prompt", "message": "read hello.txt"})
    rpc.until(lambda l: l.get("type") == "agent_end")
    turn = time.perf_counter() - t
    rpc.call("p2", {"type": "prompt", "message": "and again"})
    rpc.until(lambda l: l.get("type") == "agent_end")
    t = time.perf_counter()
    compacted = rpc.call("c", {"type": "compact"})
    compact = time.perf_counter() - t
    if not compacted.get("success"):
        raise SystemExit(f"compact failed: {compacted}")
    t = time.perf_counter()
    for i in range(200):
        rpc.call(f"g{i}", {"type": "get_state"})
    state = (time.perf_counter() - t) / 200
    rss = rpc.peak_rss_mib()
    rpc.close()
    return {"startup": ready, "prompt": turn, "compact": compact, "get_state": state, "rss": rss}


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    ts_bin, ours = setup()
    mock = subprocess.Popen([os.path.join(ROOT, "target", "release", "mock-llm"), "--port", str(PORT)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    try:
        results = {"ts": [], "rust": []}
        for _ in range(runs):
            results["ts"].append(run_once([ts_bin]))
            results["rust"].append(run_once([ours]))
    finally:
        mock.kill()
    for key, unit, scale in [("startup", "ms", 1000), ("prompt", "ms", 1000),
                             ("compact", "ms", 1000), ("get_state", "us", 1e6), ("rss", "MiB", 1)]:
        row = []
        for impl in ("ts", "rust"):
            value = statistics.median(r[key] for r in results[impl]) * scale
            row.append(f"{impl} {value:9.1f} {unit}")
        print(f"{key:10} " + "   ".join(row) + f"   (n={runs})")


if __name__ == "__main__":
    main()
