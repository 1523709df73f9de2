#!/usr/bin/env python3
"""ACP start-up side by side: ours natively (`pi --mode acp`) and pi-acp in front of the
TypeScript pi 1.6.0 (how pi users reach editors today), whole process, the same mock.

Each run spawns the agent twice: from the protocol's TypeScript SDK client
(bench/acp_start.mjs, as a node editor plugin would) and from a bare line client here (the
agent's own time: no client start-up in the figure), and measures from the spawn to the
answer of `initialize`, and to the first chunk of the answer to a one-word prompt
(session/new, prompt, mock-llm answering at once). Runs alternate; medians reported.

usage: bench/acp_compare.py [runs=10]
Needs the TypeScript pi 1.6.0 ($PI_TS16 or scripts/install-ts-pi-16.sh) and pi-acp
(scripts/install-pi-acp.sh). Writes target/bench-acp/acp_compare.md.
"""

import json
import os
import threading
import shutil
import statistics
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(ROOT, "target", "bench-acp")
PORT = int(os.environ.get("PI_BENCH_PORT", "18957"))
ANSWER = "Hello from the mock."


def mock(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{PORT}{path}", data=data, method=method,
                                 headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return resp.read()


def setup_dirs():
    shutil.rmtree(WORK + "/run", ignore_errors=True)
    agent, work = WORK + "/run/agent", WORK + "/run/work"
    os.makedirs(agent)
    os.makedirs(work)
    json.dump({"providers": {"mock": {
        "baseUrl": f"http://127.0.0.1:{PORT}/v1", "api": "openai-completions", "apiKey": "mock-key",
        "models": [{"id": "mock-model", "name": "Mock", "contextWindow": 128000, "maxTokens": 16384}]}}},
        open(agent + "/models.json", "w"))
    json.dump({"defaultProvider": "mock", "defaultModel": "mock-model", "quietStartup": True},
              open(agent + "/settings.json", "w"))
    return agent, work


def run_once(sdk, command, extra_env):
    agent, work = setup_dirs()
    mock("POST", "/_mock/reset")
    mock("POST", "/_mock/scripts", [{"items": [{"type": "text", "text": ANSWER}]}])
    env = dict(os.environ, PI_CODING_AGENT_DIR=agent, PI_OFFLINE="1", HOME=WORK + "/run",
               npm_config_registry="http://127.0.0.1:9/", **extra_env)
    env.pop("OPENAI_API_KEY", None)
    out = subprocess.run(["node", os.path.join(ROOT, "bench", "acp_start.mjs"), sdk, work, ANSWER] + command,
                         env=env, capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-800:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def send(proc, message):
    proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()


def read_until(proc, wanted):
    """Reads the agent's messages until `wanted(message)` holds; requests are refused."""
    for line in proc.stdout:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if "method" in message and "id" in message:
            send(proc, {"jsonrpc": "2.0", "id": message["id"],
                        "error": {"code": -32601, "message": "not offered"}})
            continue
        if wanted(message):
            return message
    raise RuntimeError("the agent closed its output")


def run_bare(command, extra_env):
    """One timed session with a bare line client: the agent's own start, no client's."""
    agent, work = setup_dirs()
    mock("POST", "/_mock/reset")
    mock("POST", "/_mock/scripts", [{"items": [{"type": "text", "text": ANSWER}]}])
    env = dict(os.environ, PI_CODING_AGENT_DIR=agent, PI_OFFLINE="1", HOME=WORK + "/run",
               npm_config_registry="http://127.0.0.1:9/", **extra_env)
    env.pop("OPENAI_API_KEY", None)
    started = time.perf_counter()
    proc = subprocess.Popen(command, cwd=work, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    watchdog = threading.Timer(120, proc.kill)
    watchdog.start()
    try:
        send(proc, {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                    "params": {"protocolVersion": 1, "clientCapabilities": {}}})
        read_until(proc, lambda m: m.get("id") == 0)
        init_ms = (time.perf_counter() - started) * 1000
        send(proc, {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": work, "mcpServers": []}})
        session = read_until(proc, lambda m: m.get("id") == 1)["result"]["sessionId"]
        send(proc, {"jsonrpc": "2.0", "id": 2, "method": "session/prompt",
                    "params": {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}})

        def first_chunk(m):
            update = m.get("params", {}).get("update", {}) if m.get("method") == "session/update" else {}
            text = update.get("content", {}).get("text", "-")
            return update.get("sessionUpdate") == "agent_message_chunk" and ANSWER.startswith(text)

        read_until(proc, first_chunk)
        first_ms = (time.perf_counter() - started) * 1000
    finally:
        watchdog.cancel()
        proc.kill()
        proc.wait()
    return {"initMs": init_ms, "firstChunkMs": first_ms}


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    # PI_BENCH_BIN names a folder with pi and mock-llm already built (no release build).
    bin_dir = os.environ.get("PI_BENCH_BIN")
    if not bin_dir:
        subprocess.run(["cargo", "build", "-q", "--release", "-p", "pi-coding-agent", "-p", "mock-llm"],
                       cwd=ROOT, check=True)
        bin_dir = os.path.join(ROOT, "target", "release")
    subprocess.run([os.path.join(ROOT, "scripts", "install-pi-acp.sh")], check=True)
    ts = os.environ.get("PI_TS16") or subprocess.run(
        [os.path.join(ROOT, "scripts", "install-ts-pi-16.sh")], capture_output=True, text=True).stdout.strip()
    sdk = os.path.join(ROOT, "target", "pi-acp")
    adapter = os.path.join(sdk, "node_modules", "pi-acp", "dist", "index.js")
    agents = {
        "pi-acp + TypeScript pi 1.6.0": (["node", adapter], {"PI_ACP_PI_COMMAND": ts}),
        "ours (pi --mode acp)": ([os.path.join(bin_dir, "pi"), "--mode", "acp"], {}),
    }
    os.makedirs(WORK, exist_ok=True)
    server = subprocess.Popen([os.path.join(bin_dir, "mock-llm"), "--port", str(PORT)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    clients = {"SDK client": lambda command, extra: run_once(sdk, command, extra), "bare client": run_bare}
    results = {(client, name): {"initMs": [], "firstChunkMs": []} for client in clients for name in agents}
    try:
        for _ in range(100):
            try:
                mock("GET", "/_mock/health")
                break
            except OSError:
                time.sleep(0.05)
        for i in range(runs):
            for client, run in clients.items():
                for name, (command, extra) in agents.items():
                    r = run(command, extra)
                    for key in r:
                        results[(client, name)][key].append(r[key])
                    print(f"run {i + 1} {client}, {name}: initialize {r['initMs']:.0f} ms, "
                          f"first chunk {r['firstChunkMs']:.0f} ms", flush=True)
    finally:
        server.kill()
        server.wait()
    names = list(agents)
    med = lambda client, name, key: statistics.median(results[(client, name)][key])
    lines = ["# ACP start-up: pi-acp + TypeScript pi 1.6.0 and ours natively", "",
             f"Medians of {runs} runs, alternating; from the spawn of the agent, measured by the "
             "protocol's TypeScript SDK client (its own start in node is in the figure) and by a "
             "bare line client (the agent's time alone); mock-llm answers at once. "
             f"Command: `bench/acp_compare.py {runs}`.", "",
             f"| | {names[0]} | {names[1]} | faster |", "|---|---:|---:|---:|"]
    for client in clients:
        for label, key in [("`initialize` answered", "initMs"), ("first chunk of the answer", "firstChunkMs")]:
            theirs, ours = med(client, names[0], key), med(client, names[1], key)
            lines.append(f"| {label}, {client} | {theirs:.0f} ms | {ours:.0f} ms | {theirs / ours:.1f}× |")
    text = "\n".join(lines) + "\n"
    print("\n" + text)
    with open(os.path.join(WORK, "acp_compare.md"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
