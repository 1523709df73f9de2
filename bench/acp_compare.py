#!/usr/bin/env python3
"""ACP start-up side by side: ours natively (`pi --mode acp`) and pi-acp in front of the
TypeScript pi 1.6.0 (how pi users reach editors today), whole process, the same mock.

Each run spawns the agent from the protocol's TypeScript SDK client (bench/acp_start.mjs)
and measures from the spawn to the answer of `initialize`, and to the first chunk of the
answer to a one-word prompt (session/new, prompt, mock-llm answering at once). Runs
alternate; medians reported.

usage: bench/acp_compare.py [runs=10]
Needs the TypeScript pi 1.6.0 ($PI_TS16 or scripts/install-ts-pi-16.sh) and pi-acp
(scripts/install-pi-acp.sh). Writes target/bench-acp/acp_compare.md.
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
    results = {name: {"initMs": [], "firstChunkMs": []} for name in agents}
    try:
        for _ in range(100):
            try:
                mock("GET", "/_mock/health")
                break
            except OSError:
                time.sleep(0.05)
        for i in range(runs):
            for name, (command, extra) in agents.items():
                r = run_once(sdk, command, extra)
                for key in r:
                    results[name][key].append(r[key])
                print(f"run {i + 1} {name}: initialize {r['initMs']:.0f} ms, first chunk {r['firstChunkMs']:.0f} ms",
                      flush=True)
    finally:
        server.kill()
        server.wait()
    names = list(agents)
    med = lambda name, key: statistics.median(results[name][key])
    lines = ["# ACP start-up: pi-acp + TypeScript pi 1.6.0 and ours natively", "",
             f"Medians of {runs} runs, alternating; from the spawn of the agent, measured by the "
             "protocol's TypeScript SDK client; mock-llm answers at once. "
             f"Command: `bench/acp_compare.py {runs}`.", "",
             f"| | {names[0]} | {names[1]} | faster |", "|---|---:|---:|---:|"]
    for label, key in [("`initialize` answered", "initMs"), ("first chunk of the answer", "firstChunkMs")]:
        theirs, ours = med(names[0], key), med(names[1], key)
        lines.append(f"| {label} | {theirs:.0f} ms | {ours:.0f} ms | {theirs / ours:.1f}× |")
    text = "\n".join(lines) + "\n"
    print("\n" + text)
    with open(os.path.join(WORK, "acp_compare.md"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
