#!/usr/bin/env python3
"""End-to-end test of the real `pi` binary against a real model: llama.cpp's server with
Gemma 3 270M, set up by scripts/local-llm.sh. Not part of `cargo test` (the build takes
8-11 minutes); CI runs it as its own step.

Checks, each through `pi --model local/gemma-3-270m`:
  1. a plain prompt returns text (time to first token and tokens/s are reported);
  2. "read hello.txt" makes a `read` call whose result reaches the model and the loop ends
     with a text answer, 10 tries (the success rate is reported; at least 8 must pass);
  3. an abort mid-stream (RPC `abort`) ends the server's generation (`/slots` goes idle);
  4. the session file is valid JSONL and reloads (`--session FILE` continues it).

usage: scripts/local-llm-e2e.py [pi-binary]   (default: target/release/pi, built if absent)
Env: PI_LOCAL_LLM_AGENT_DIR (default target/local-llm-agent), PI_LOCAL_LLM_PORT (8181).
"""

import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AGENT = os.path.abspath(os.environ.get("PI_LOCAL_LLM_AGENT_DIR", os.path.join(ROOT, "target", "local-llm-agent")))
PORT = os.environ.get("PI_LOCAL_LLM_PORT", "8181")
MODEL = "local/gemma-3-270m"
failures = []


def check(ok, what):
    print(("PASS " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def pi_binary():
    if len(sys.argv) > 1:
        return os.path.abspath(sys.argv[1])
    path = os.path.join(ROOT, "target", "release", "pi")
    if not os.path.exists(path):
        subprocess.run(["cargo", "build", "-q", "--release", "-p", "pi-coding-agent"], cwd=ROOT, check=True)
    return path


def env():
    return dict(os.environ, PI_CODING_AGENT_DIR=AGENT, PI_LOCAL_LLM_PORT=PORT)


def json_run(pi, work, prompt, extra=()):
    """Runs pi in JSON mode; returns (events with arrival times, exit code, wall seconds)."""
    start = time.perf_counter()
    proc = subprocess.Popen([pi, "--model", MODEL, "--mode", "json", *extra, "-p", prompt], cwd=work,
                            env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    events = []
    for line in proc.stdout:
        events.append((time.perf_counter() - start, json.loads(line)))
    proc.wait(timeout=300)
    return events, proc.returncode, time.perf_counter() - start


def final_assistant(events):
    for _, e in reversed(events):
        if e.get("type") == "message_end" and e["message"].get("role") == "assistant":
            return e["message"]
    return None


def text_of(message):
    return "".join(b.get("text", "") for b in (message or {}).get("content", []) if b.get("type") == "text")


def main():
    setup_start = time.perf_counter()
    subprocess.run([os.path.join(ROOT, "scripts", "local-llm.sh"), "setup"], env=env(), check=True)
    setup_seconds = time.perf_counter() - setup_start
    pi = pi_binary()
    work = tempfile.mkdtemp(prefix="pi-local-llm-")
    with open(os.path.join(work, "hello.txt"), "w") as f:
        f.write("Hello from the local model test!\n")

    # 1. A plain prompt.
    events, code, wall = json_run(pi, work, "Say hello to the user.", ["--no-tools"])
    answer = final_assistant(events)
    first = next((t for t, e in events if e.get("type") == "message_update"
                  and e["assistantMessageEvent"]["type"] == "text_delta"), None)
    end = next((t for t, e in events if e.get("type") == "message_end"
                and e["message"].get("role") == "assistant"), wall)
    check(code == 0 and answer and answer["stopReason"] in ("stop", "length") and text_of(answer).strip(),
          f"plain prompt returns text: {text_of(answer)[:60]!r}")
    output_tokens = (answer or {}).get("usage", {}).get("output", 0)
    if first is not None and end > first and output_tokens:
        print(f"time to first token {first * 1000:.0f} ms (process start to first text delta), "
              f"{output_tokens / (end - first):.1f} tokens/s ({output_tokens} tokens)", flush=True)

    # 2. read hello.txt, 10 times.
    successes = 0
    session_file = None
    for attempt in range(10):
        events, code, wall = json_run(pi, work, "read hello.txt")
        calls = [e for _, e in events if e.get("type") == "tool_execution_end" and e.get("toolName") == "read"]
        ok_call = any(not e.get("isError") and "Hello from the local model test!" in json.dumps(e["result"])
                      for e in calls)
        answer = final_assistant(events)
        ended = bool(events) and events[-1][1].get("type") == "agent_end"
        ok = code == 0 and ok_call and ended and answer and answer["stopReason"] == "stop" and text_of(answer).strip()
        successes += bool(ok)
        print(f"  try {attempt + 1}: {'ok' if ok else 'failed'} in {wall:.1f}s — {text_of(answer)[:60]!r}", flush=True)
        if ok and session_file is None and events[0][1].get("type") == "session":
            header = events[0][1]
            sessions = os.path.join(AGENT, "sessions")
            for dirpath, _, files in os.walk(sessions):
                for name in files:
                    if header["id"] in name:
                        session_file = os.path.join(dirpath, name)
    print(f"read hello.txt: {successes}/10 succeeded", flush=True)
    check(successes >= 8, f"read tool loop succeeds at least 8 of 10 times ({successes}/10)")

    # 3. Abort mid-stream ends the server's generation.
    proc = subprocess.Popen([pi, "--model", MODEL, "--mode", "rpc", "--no-tools"], cwd=work, env=env(),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
    proc.stdin.write(json.dumps({"id": "p", "type": "prompt",
                                 "message": "Write a very long story about a lighthouse keeper, with many chapters."}) + "\n")
    streaming = False
    for line in proc.stdout:
        event = json.loads(line)
        if event.get("type") == "message_update" and event["assistantMessageEvent"]["type"] == "text_delta":
            streaming = True
            break
    proc.stdin.write(json.dumps({"id": "a", "type": "abort"}) + "\n")
    aborted_at = time.perf_counter()
    for line in proc.stdout:
        if json.loads(line).get("id") == "a":
            break
    idle_after = None
    while time.perf_counter() - aborted_at < 10:
        slots = json.load(urllib.request.urlopen(f"http://127.0.0.1:{PORT}/slots", timeout=5))
        if not any(s.get("is_processing") for s in slots):
            idle_after = time.perf_counter() - aborted_at
            break
        time.sleep(0.05)
    proc.stdin.close()
    proc.wait(timeout=30)
    check(streaming and idle_after is not None,
          f"abort mid-stream ends the server's generation (idle {idle_after and idle_after * 1000:.0f} ms after abort)")

    # 4. The session file is valid and reloads.
    valid = False
    if session_file:
        lines = [json.loads(l) for l in open(session_file) if l.strip()]
        valid = lines[0]["type"] == "session" and any(l.get("type") == "message" for l in lines)
        events, code, _ = json_run(pi, work, "Thanks.", ["--session", session_file, "--no-tools"])
        reloaded = json.loads(open(session_file).readlines()[-1])
        valid = valid and code == 0 and reloaded.get("type") == "message"
    check(valid, f"session file is valid JSONL and continues: {session_file}")

    print(f"setup: {setup_seconds:.0f} s (including the server start)", flush=True)
    if failures:
        print("FAILED: " + "; ".join(failures))
        sys.exit(1)


if __name__ == "__main__":
    main()
