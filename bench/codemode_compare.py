#!/usr/bin/env python3
"""codemode side by side: the TypeScript pi 1.6.0 and ours, whole process, the same mock.

Each run is `pi --tools +codemode -p go` with the mock model calling `codemode` once with a
script, then answering. Measured per run, implementations alternating, medians reported:
  script   from the request that carries the codemode call's answer being asked for (the
           model's first reply sent) to the next request arriving: the script's whole
           cost in pi (worker, VM, tool calls, result) plus one turn of the loop;
  per call (script with N `read` calls - no-op script) / N.

Scripts: `noop` returns 1; `reads` awaits N reads of one small file in parallel
(`Promise.all`); `serial` awaits them one after another.

usage: bench/codemode_compare.py [runs=5] [calls=100]
Needs the TypeScript pi 1.6.0 ($PI_TS16 or scripts/install-ts-pi-16.sh). Writes
target/bench-codemode/codemode_compare.md.
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
WORK = os.path.join(ROOT, "target", "bench-codemode")
PORT = int(os.environ.get("PI_BENCH_PORT", "18953"))


def mock(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{PORT}{path}", data=data, method=method,
                                 headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        text = resp.read()
        return json.loads(text) if text and "json" in resp.headers.get("content-type", "") else text


def setup_dirs():
    shutil.rmtree(WORK + "/run", ignore_errors=True)
    agent, work = WORK + "/run/agent", WORK + "/run/work"
    os.makedirs(agent)
    os.makedirs(work)
    json.dump({"providers": {"mock": {
        "baseUrl": f"http://127.0.0.1:{PORT}/v1", "api": "openai-completions", "apiKey": "mock-key",
        "models": [{"id": "mock-model", "name": "Mock", "contextWindow": 128000, "maxTokens": 16384}]}}},
        open(agent + "/models.json", "w"))
    json.dump({"defaultProvider": "mock", "defaultModel": "mock-model"}, open(agent + "/settings.json", "w"))
    with open(work + "/a.txt", "w") as f:
        f.write("alpha\n")
    return agent, work


def script(kind, calls):
    if kind == "noop":
        return "return 1;"
    if kind == "reads":
        return (f"const all = await Promise.all(Array.from({{ length: {calls} }}, () => "
                "tools.read({ path: \"a.txt\" })));\nreturn all.length;")
    return (f"let n = 0;\nfor (let i = 0; i < {calls}; i++) {{ await tools.read({{ path: \"a.txt\" }}); n++; }}\n"
            "return n;")


def run_script(program, code):
    """Seconds from the model's codemode call being sent to the answer's request."""
    agent, work = setup_dirs()
    mock("POST", "/_mock/reset")
    mock("POST", "/_mock/scripts", [
        {"items": [{"type": "toolCall", "name": "codemode", "arguments": {"code": code}}]},
        {"items": [{"type": "text", "text": "done"}]},
    ])
    env = dict(os.environ, PI_CODING_AGENT_DIR=agent, PI_OFFLINE="1", HOME=WORK + "/run")
    env.pop("OPENAI_API_KEY", None)
    proc = subprocess.Popen([program, "--tools", "+codemode", "-p", "go"], cwd=work, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    arrivals = []
    start = time.perf_counter()
    while proc.poll() is None:
        count = len(mock("GET", "/_mock/requests"))
        now = time.perf_counter() - start
        while len(arrivals) < count:
            arrivals.append(now)
        time.sleep(0.001)
    # Requests that came in after the last look (the process may end between two looks).
    count = len(mock("GET", "/_mock/requests"))
    while len(arrivals) < count:
        arrivals.append(time.perf_counter() - start)
    if proc.returncode != 0 or len(arrivals) < 2:
        raise RuntimeError(f"{program} failed: {proc.stderr.read().decode()[:500]}")
    return arrivals[1] - arrivals[0]


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    subprocess.run(["cargo", "build", "-q", "--release", "-p", "pi-coding-agent", "-p", "mock-llm"],
                   cwd=ROOT, check=True)
    ts = os.environ.get("PI_TS16") or subprocess.run(
        [os.path.join(ROOT, "scripts", "install-ts-pi-16.sh")], capture_output=True, text=True).stdout.strip()
    programs = {"ts": ts, "rust": os.path.join(ROOT, "target", "release", "pi")}
    os.makedirs(WORK, exist_ok=True)
    server = subprocess.Popen([os.path.join(ROOT, "target", "release", "mock-llm"), "--port", str(PORT)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    kinds = ["noop", "reads", "serial"]
    results = {name: {kind: [] for kind in kinds} for name in programs}
    try:
        for _ in range(100):
            try:
                mock("GET", "/_mock/health")
                break
            except OSError:
                time.sleep(0.05)
        for i in range(runs):
            for name, program in programs.items():
                line = []
                for kind in kinds:
                    took = run_script(program, script(kind, calls))
                    results[name][kind].append(took)
                    line.append(f"{kind} {took * 1000:.1f} ms")
                print(f"run {i + 1} {name:4}: " + ", ".join(line), flush=True)
    finally:
        server.kill()
        server.wait()
    med = lambda name, kind: statistics.median(results[name][kind]) * 1000
    rows = [("no-op script (`return 1`)", lambda n: med(n, "noop"), "{:.1f} ms"),
            (f"script with {calls} parallel `read` calls", lambda n: med(n, "reads"), "{:.1f} ms"),
            (f"script with {calls} `read` calls one after another", lambda n: med(n, "serial"), "{:.1f} ms"),
            ("per call, parallel (reads − no-op) / N", lambda n: (med(n, "reads") - med(n, "noop")) / calls, "{:.3f} ms"),
            ("per call, one after another", lambda n: (med(n, "serial") - med(n, "noop")) / calls, "{:.3f} ms")]
    lines = ["# codemode: the TypeScript pi 1.6.0 and ours, whole process", "",
             f"Medians of {runs} runs, alternating; mock-llm answers at once; each figure runs from "
             "the model's codemode call to the next request (script + one loop turn). "
             f"Command: `bench/codemode_compare.py {runs} {calls}`.", "",
             "| | TypeScript pi 1.6.0 | ours | ours / TS |", "|---|---:|---:|---:|"]
    for label, value, fmt in rows:
        t, r = value("ts"), value("rust")
        ratio = f"{r / t:.2f}×" if t > 0 else "–"
        lines.append(f"| {label} | {fmt.format(t)} | {fmt.format(r)} | {ratio} |")
    text = "\n".join(lines) + "\n"
    print("\n" + text)
    with open(os.path.join(WORK, "codemode_compare.md"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
