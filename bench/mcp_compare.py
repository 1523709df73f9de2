#!/usr/bin/env python3
"""MCP side by side: the TypeScript pi 1.5.2 and ours with the same mcp.json (server-everything
over stdio, `exposure: direct` so the first prompt waits for it and its tools are declared).

Measured per run, implementations alternating, medians reported:
  ready    from starting `pi -p` to mock-llm receiving the first request (the server started,
           initialized and listed, its tools declared); and the same without mcp.json;
  per turn a run with N sequential `echo` calls (one per model turn): from the first request
           to the last, divided by N: a turn of the mock model plus one MCP call (the mock
           answers at once, so this is pi's own cost and the server's);
  list     wall time of `pi mcp list` (connect, list tools, close).

usage: bench/mcp_compare.py [runs=5] [calls=30]
Needs scripts/install-mcp-servers.sh, and the TypeScript pi 1.5.2 ($PI_TS15 or
scripts/install-ts-pi-15.sh). Writes target/bench-mcp/mcp_compare.md.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(ROOT, "target", "bench-mcp")
PORT = int(os.environ.get("PI_BENCH_PORT", "18951"))
EVERYTHING = os.path.join(ROOT, "target", "mcp-servers", "node_modules", "@modelcontextprotocol",
                          "server-everything", "dist", "index.js")


def mock(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{PORT}{path}", data=data, method=method,
                                 headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        text = resp.read()
        return json.loads(text) if text and "json" in resp.headers.get("content-type", "") else text


def setup_dirs(with_mcp):
    shutil.rmtree(WORK + "/run", ignore_errors=True)
    agent, work = WORK + "/run/agent", WORK + "/run/work"
    os.makedirs(agent)
    os.makedirs(work)
    json.dump({"providers": {"mock": {
        "baseUrl": f"http://127.0.0.1:{PORT}/v1", "api": "openai-completions", "apiKey": "mock-key",
        "models": [{"id": "mock-model", "name": "Mock", "contextWindow": 128000, "maxTokens": 16384}]}}},
        open(agent + "/models.json", "w"))
    json.dump({"defaultProvider": "mock", "defaultModel": "mock-model"}, open(agent + "/settings.json", "w"))
    if with_mcp:
        json.dump({"mcpServers": {"everything": {"command": "node", "args": [EVERYTHING, "stdio"],
                                                 "exposure": "direct"}}}, open(agent + "/mcp.json", "w"))
    return agent, work


def env_for(agent):
    env = dict(os.environ, PI_CODING_AGENT_DIR=agent, PI_OFFLINE="1", HOME=WORK + "/run")
    env.pop("OPENAI_API_KEY", None)
    return env


def run_prompt(program, calls, with_mcp):
    """Seconds to the first request, and the whole run's wall time."""
    agent, work = setup_dirs(with_mcp)
    mock("POST", "/_mock/reset")
    scripts = [{"items": [{"type": "toolCall", "name": "mcp__everything__echo",
                           "arguments": {"message": f"call {i}"}}]} for i in range(calls)]
    scripts.append({"items": [{"type": "text", "text": "done"}]})
    mock("POST", "/_mock/scripts", scripts)
    start = time.perf_counter()
    proc = subprocess.Popen([program, "-p", "go"], cwd=work, env=env_for(agent),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    arrivals = []
    while proc.poll() is None:
        count = len(mock("GET", "/_mock/requests"))
        now = time.perf_counter() - start
        while len(arrivals) < count:
            arrivals.append(now)
        time.sleep(0.002)
    wall = time.perf_counter() - start
    first = arrivals[0] if arrivals else wall
    # Time per model turn with one echo call: from the first request to the last.
    per_turn = (arrivals[-1] - arrivals[0]) / calls if calls and len(arrivals) > 1 else 0.0
    if proc.returncode != 0:
        raise RuntimeError(f"{program} failed: {proc.stderr.read().decode()[:500]}")
    got = len(mock("GET", "/_mock/requests"))
    if got != calls + 1:
        raise RuntimeError(f"{program}: {got} requests, expected {calls + 1}")
    return first, per_turn


def run_list(program):
    agent, work = setup_dirs(True)
    start = time.perf_counter()
    subprocess.run([program, "mcp", "list"], cwd=work, env=env_for(agent), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    if not os.path.exists(EVERYTHING):
        subprocess.run([os.path.join(ROOT, "scripts", "install-mcp-servers.sh")], check=True)
    subprocess.run(["cargo", "build", "-q", "--release", "-p", "pi-coding-agent", "-p", "mock-llm"],
                   cwd=ROOT, check=True)
    ts = os.environ.get("PI_TS15") or subprocess.run(
        [os.path.join(ROOT, "scripts", "install-ts-pi-15.sh")], capture_output=True, text=True).stdout.strip()
    programs = {"ts": ts, "rust": os.path.join(ROOT, "target", "release", "pi")}
    os.makedirs(WORK, exist_ok=True)
    server = subprocess.Popen([os.path.join(ROOT, "target", "release", "mock-llm"), "--port", str(PORT)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results = {name: {"ready": [], "bare": [], "per_call": [], "list": []} for name in programs}
    try:
        for _ in range(100):
            try:
                mock("GET", "/_mock/health")
                break
            except OSError:
                time.sleep(0.05)
        for i in range(runs):
            for name, program in programs.items():
                bare, _ = run_prompt(program, 0, False)
                ready, _ = run_prompt(program, 0, True)
                _, per_turn = run_prompt(program, calls, True)
                listed = run_list(program)
                r = results[name]
                r["bare"].append(bare)
                r["ready"].append(ready)
                r["per_call"].append(per_turn)
                r["list"].append(listed)
                print(f"run {i + 1} {name:4}: first request {bare * 1000:.0f} ms without MCP, "
                      f"{ready * 1000:.0f} ms with; {per_turn * 1000:.1f} ms per echo turn; "
                      f"mcp list {listed * 1000:.0f} ms", flush=True)
    finally:
        server.kill()
        server.wait()
    med = lambda name, key: statistics.median(results[name][key]) * 1000
    rows = [("first request, no mcp.json", "bare", "{:.0f} ms"),
            ("first request, MCP tools ready (server started, listed, declared)", "ready", "{:.0f} ms"),
            (f"a model turn with one echo call ({calls} turns: first request to last, / {calls})", "per_call", "{:.1f} ms"),
            ("`pi mcp list` (connect, list, close)", "list", "{:.0f} ms")]
    lines = ["# MCP: the TypeScript pi 1.5.2 and ours, server-everything over stdio", "",
             f"Medians of {runs} runs, alternating; mock-llm answers at once. "
             f"Command: `bench/mcp_compare.py {runs} {calls}`.", "",
             "| | TypeScript pi 1.5.2 | ours | ours / TS |", "|---|---:|---:|---:|"]
    for label, key, fmt in rows:
        t, r = med("ts", key), med("rust", key)
        lines.append(f"| {label} | {fmt.format(t)} | {fmt.format(r)} | {r / t:.2f}× |")
    text = "\n".join(lines) + "\n"
    print("\n" + text)
    with open(os.path.join(WORK, "mcp_compare.md"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
