#!/usr/bin/env python3
"""Extensions, side by side: the TypeScript pi 0.73.1 and ours against the same mock-llm.

Measured per implementation (medians over the runs, implementations alternating):
- startup: spawn to the first RPC `get_state` answer with no extension, with `hello.ts`,
  and with every loadable example of the TS package (all but `sandbox/`, which needs its own
  npm install);
- the added latency of a no-op `tool_call` handler per tool call: `pi -p` whose replies ask
  for N `read` calls (10 per turn), and for none, with and without the handler:
  ((with N - with 0) - (without N - without 0)) / N, from medians (these runs come after all
  startup runs);
- peak RSS (VmHWM) after startup with all examples: pi plus its extension host for ours.

usage: bench/extensions_compare.py [runs=5] [tool_calls=400]
(needs node >= 20, npm and cargo; installs the TS pi into target/bench-pi like
bench/rpc_compare.py, and the extension host's packages into target/bench-pi/ext-host)
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
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.environ.get("PI_BENCH_DIR", os.path.join(ROOT, "target", "bench-pi"))
PORT = int(os.environ.get("PI_BENCH_PORT", "18934"))
HOST_DIR = os.path.join(WORK, "ext-host")


def setup():
    os.makedirs(WORK, exist_ok=True)
    ts_bin = os.path.join(WORK, "node_modules", ".bin", "pi")
    if not os.path.exists(ts_bin):
        subprocess.run("npm init -y >/dev/null && npm install --no-audit --no-fund "
                       "--ignore-scripts @mariozechner/pi-coding-agent@0.73.1 >/dev/null",
                       shell=True, cwd=WORK, check=True)
    subprocess.run(["cargo", "build", "-q", "--release", "-p", "pi-coding-agent", "-p", "mock-llm"],
                   cwd=ROOT, check=True)
    examples = os.path.join(WORK, "node_modules", "@mariozechner", "pi-coding-agent",
                            "examples", "extensions")
    return ts_bin, os.path.join(ROOT, "target", "release", "pi"), examples


def loadable_examples(folder):
    found = []
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if name in ("sandbox", "with-deps"):  # both need their own npm install
            continue
        if name.endswith(".ts"):
            found.append(path)
        elif os.path.isdir(path) and (os.path.exists(os.path.join(path, "index.ts"))
                                      or os.path.exists(os.path.join(path, "package.json"))):
            found.append(path)
    return found


def loadable_together(ts_bin, examples):
    """Drops the examples the TypeScript pi refuses next to the others (tool-name conflicts
    such as two overrides of `bash` make it exit), until it starts with the rest."""
    import re
    chosen = list(examples)
    for _ in range(len(examples)):
        agent, work = fresh_dirs()
        args = [ts_bin, "--mode", "rpc"]
        for path in chosen:
            args += ["-e", path]
        env = dict(os.environ, PI_CODING_AGENT_DIR=agent, HOME=WORK, PI_OFFLINE="1")
        run = subprocess.run(args, input='{"id":"s","type":"get_state"}\n', capture_output=True,
                             text=True, cwd=work, env=env, timeout=120)
        failed = set(re.findall(r'Failed to load extension "([^"]+)"', run.stderr))
        if run.returncode == 0 and not failed:
            return chosen
        if not failed:
            raise SystemExit("the TypeScript pi does not start with the examples:\n" + run.stderr[-2000:])
        chosen = [p for p in chosen if p not in failed]
    return chosen


def fresh_dirs():
    agent = os.path.join(WORK, "ext-agent")
    work = os.path.join(WORK, "ext-work")
    for d in (agent, work):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    with open(os.path.join(work, "hello.txt"), "w") as f:
        f.write("Hello!\n")
    models = {"providers": {"mock": {
        "baseUrl": f"http://127.0.0.1:{PORT}/v1", "api": "openai-completions", "apiKey": "mock-key",
        "models": [{"id": "mock-model", "name": "Mock Model", "contextWindow": 128000, "maxTokens": 16384}]}}}
    with open(os.path.join(agent, "models.json"), "w") as f:
        json.dump(models, f)
    with open(os.path.join(agent, "settings.json"), "w") as f:
        json.dump({"defaultProvider": "mock", "defaultModel": "mock-model"}, f)
    return agent, work


class Rpc:
    def __init__(self, command, agent, work):
        env = dict(os.environ, PI_CODING_AGENT_DIR=agent, HOME=WORK, PI_OFFLINE="1",
                   PI_EXTENSION_HOST_DIR=HOST_DIR)
        self.proc = subprocess.Popen(command + ["--mode", "rpc"], cwd=work, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            try:
                self.lines.put(json.loads(line))
            except ValueError:
                pass

    def send(self, obj):
        self.proc.stdin.write(json.dumps(obj) + "\n")
        self.proc.stdin.flush()

    def until(self, match):
        while True:
            line = self.lines.get(timeout=120)
            if line.get("type") == "extension_ui_request" and line.get("method") in (
                    "select", "confirm", "input", "editor"):
                self.send({"type": "extension_ui_response", "id": line["id"], "cancelled": True})
            if match(line):
                return line

    def call(self, id_, obj):
        obj["id"] = id_
        self.send(obj)
        return self.until(lambda l: l.get("type") == "response" and l.get("id") == id_)

    def tree_rss_mib(self):
        """Peak RSS of the process plus its descendants (ours: pi and the node host)."""
        total = 0
        pending = [self.proc.pid]
        while pending:
            pid = pending.pop()
            try:
                with open(f"/proc/{pid}/status") as f:
                    for line in f:
                        if line.startswith("VmHWM:"):
                            total += int(line.split()[1])
                for task in os.listdir(f"/proc/{pid}/task"):
                    with open(f"/proc/{pid}/task/{task}/children") as f:
                        pending.extend(int(p) for p in f.read().split())
            except OSError:
                pass
        return total / 1024

    def close(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def push_scripts(scripts):
    request = urllib.request.Request(f"http://127.0.0.1:{PORT}/_mock/scripts",
                                     data=json.dumps(scripts).encode(), method="POST",
                                     headers={"content-type": "application/json"})
    urllib.request.urlopen(request).read()


def startup(command, extensions):
    agent, work = fresh_dirs()
    args = []
    for path in extensions:
        args += ["-e", path]
    start = time.perf_counter()
    rpc = Rpc(command + args, agent, work)
    rpc.call("s", {"type": "get_state"})
    ready = time.perf_counter() - start
    rss = rpc.tree_rss_mib()
    rpc.close()
    return ready, rss


def tool_calls(command, extensions, n):
    """Seconds for `pi -p` whose replies ask for N `read` calls, 10 per turn (one message
    with all N would make every streamed update carry the whole growing message)."""
    agent, work = fresh_dirs()
    args = list(command)
    for path in extensions:
        args += ["-e", path]
    call = {"type": "toolCall", "name": "read", "arguments": {"path": "hello.txt"}}
    turns = [{"items": [call] * min(10, n - i)} for i in range(0, n, 10)]
    push_scripts(turns + [{"items": [{"type": "text", "text": "done"}]}])
    env = dict(os.environ, PI_CODING_AGENT_DIR=agent, HOME=WORK, PI_OFFLINE="1",
               PI_EXTENSION_HOST_DIR=HOST_DIR)
    start = time.perf_counter()
    subprocess.run(args + ["-p", "read them all"], cwd=work, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
    return time.perf_counter() - start


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 400
    ts_bin, ours, examples_dir = setup()
    examples = loadable_together(ts_bin, loadable_examples(examples_dir))
    noop = os.path.join(WORK, "noop-tool-call.ts")
    with open(noop, "w") as f:
        f.write('export default function (pi) { pi.on("tool_call", async () => undefined); }\n')
    hello = os.path.join(examples_dir, "hello.ts")
    mock = subprocess.Popen([os.path.join(ROOT, "target", "release", "mock-llm"), "--port", str(PORT)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    impls = {"ts": [ts_bin], "rust": [ours]}
    results = {impl: {"bare": [], "hello": [], "all": [], "rss": [], "without": [], "with": [],
                      "without0": [], "with0": []}
               for impl in impls}
    try:
        # One warm-up each: npm install of the host, jiti's transform cache, page cache.
        for command in impls.values():
            startup(command, examples)
        for _ in range(runs):
            for impl, command in impls.items():
                results[impl]["bare"].append(startup(command, [])[0])
                results[impl]["hello"].append(startup(command, [hello])[0])
                ready, rss = startup(command, examples)
                results[impl]["all"].append(ready)
                results[impl]["rss"].append(rss)
        # The hook runs on their own, after the startups (a run with every example loaded
        # leaves the machine busy for a while), implementations still alternating.
        for _ in range(runs):
            for impl, command in impls.items():
                for key, exts in (("without", []), ("with", [noop])):
                    results[impl][key + "0"].append(tool_calls(command, exts, 0))
                    results[impl][key].append(tool_calls(command, exts, n))
    finally:
        mock.kill()
    # The hook's cost per call: (the run's time per call with the handler) minus (without),
    # the same run with no call subtracted (startup, the host). From the fastest of each
    # kind of run: a difference of differences, so noise that only ever adds time (the other
    # implementation's runs, the machine) must not land on one side of it.
    for impl in impls:
        r = {k: min(v) for k, v in results[impl].items() if v}
        results[impl]["hook"] = [((r["with"] - r["with0"]) - (r["without"] - r["without0"])) / n]
    print(f"examples loaded: {len(examples)}; tool calls per hook run: {n}; runs: {runs}")
    for key, label, unit, scale in [("bare", "startup, no extension", "ms", 1000),
                                    ("hello", "startup, hello.ts", "ms", 1000),
                                    ("all", "startup, all examples", "ms", 1000),
                                    ("rss", "peak RSS, all examples", "MiB", 1),
                                    ("hook", "no-op tool_call hook", "us/call", 1e6)]:
        ts = statistics.median(results["ts"][key]) * scale
        rust = statistics.median(results["rust"][key]) * scale
        print(f"{label:26} ts {ts:9.1f} {unit:8} ours {rust:9.1f} {unit:8} ({rust / ts:4.2f}x)")


if __name__ == "__main__":
    main()
