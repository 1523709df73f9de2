#!/usr/bin/env python3
"""Runs one scripted RPC session of `pi --mode rpc -e <extension>` and records it.

    python3 driver.py SCENARIO.json --pi ts|ours|"CMD ..." [--out RAW.json] [--normalized OUT.json]

For each run the driver
  1. starts `mock-llm --port 0 --script <the scenario's model replies>`,
  2. makes a fresh scratch folder holding `agent/` (PI_CODING_AGENT_DIR: models.json with
     a `mock` provider on the mock server, settings.json) and `work/` (the cwd, with the
     scenario's files, optionally a git repo),
  3. starts pi in RPC mode there with `-e <extension>` and the scenario's extra args,
  4. sends the scenario's steps one by one; after each command it waits for the response
     with the command's id, then until the agent is idle (every `agent_start` has its
     `agent_end`) and stdout has been quiet for `quiet` seconds,
  5. answers every dialog `extension_ui_request` (select/confirm/input/editor) at once
     from the scenario's `ui` answer list, in order (defaults when the list is used up or
     the next answer is for another method: select -> first option, confirm -> true,
     input -> "oracle input", editor -> the prefill, else "oracle text"),
  6. closes stdin, waits for pi to exit, and collects the provider requests the mock
     server saw and the session files pi wrote.

The raw record (a dict, see `run`) holds every stdout line, every line sent, stderr,
the exit code, the provider requests and the session files. `normalize.py` turns it
into the form that is compared and stored as golden file.

Scenario file format: see scenarios/README.md.
"""
from __future__ import annotations

import argparse
import json
import os
import queue
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
TS_PI_DIR = Path(os.environ.get("PI_TS_DIR", REPO / "target/ts-pi"))
PI_PKG = TS_PI_DIR / "node_modules/@mariozechner/pi-coding-agent"
TS_CLI = PI_PKG / "dist/cli.js"
EXAMPLES = Path(os.environ.get("EXT_ORACLE_EXAMPLES", PI_PKG / "examples/extensions"))
# pi 1.6.0 (scripts/install-ts-pi-16.sh) and the copy of its examples with their npm
# dependencies (install-examples-16.sh), for `compare.py --pi16` (ext-oracle.sh --live16)
TS16_PI = Path(os.environ.get("PI_TS16", REPO / "target/ts-pi-16/bin/pi"))
EXAMPLES16 = Path(os.environ.get("EXT_ORACLE_EXAMPLES16", REPO / "target/ext-oracle/examples-16"))
NPM_DIR = Path(os.environ.get("EXT_ORACLE_NPM", REPO / "target/ext-oracle/npm"))
EXAMPLES_DEPS = Path(os.environ.get("EXT_ORACLE_EXAMPLES_DEPS", REPO / "target/ext-oracle/examples-deps"))
MOCK_LLM = Path(os.environ.get("MOCK_LLM", REPO / "target/debug/mock-llm"))
OUR_PI = Path(os.environ.get("PI_OURS", REPO / "target/debug/pi"))

HOST_DIR = Path(os.environ.get("PI_EXTENSION_HOST_DIR") or REPO / "target/ext-oracle/extension-host")
PASS_ENV = {"PI_NODE", "PI_NPM", "PI_EXTENSION_HOST_DIR"}

DIALOGS = ("select", "confirm", "input", "editor")


def use_examples16():
    """`examples:NAME` and `deps:NAME` name pi 1.6.0's examples (the copy with their
    npm dependencies installed) from now on."""
    global EXAMPLES, EXAMPLES_DEPS
    EXAMPLES = EXAMPLES_DEPS = EXAMPLES16


def pi_command(which: str) -> list[str]:
    """`ts` (0.73.1), `ts16` (1.6.0), `ours`, or an explicit command line."""
    if which == "ts":
        return ["node", str(TS_CLI)]
    if which == "ts16":
        return [str(TS16_PI)]
    if which == "ours":
        return [str(OUR_PI)]
    return shlex.split(which)


_VERSIONS: dict = {}


def pi_version(cmd: list) -> str | None:
    """`pi --version` (0.73.1 prints it on stderr), once per command line."""
    key = tuple(cmd)
    if key not in _VERSIONS:
        try:
            r = subprocess.run(cmd + ["--version"], capture_output=True, text=True, timeout=60,
                               env={k: v for k, v in os.environ.items() if not k.startswith("PI_")})
            m = re.search(r"\b\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?\b", r.stdout + r.stderr)
            _VERSIONS[key] = m.group(0) if m else None
        except (OSError, subprocess.TimeoutExpired):
            _VERSIONS[key] = None
    return _VERSIONS[key]


def extension_path(spec: str) -> Path:
    """`examples:<name>` (the pi package's examples/extensions), `deps:<name>` (a copy of
    an example with its own npm dependencies installed), `npm:<pkg>` (a package
    installed by install-third-party.sh), or a path relative to this folder."""
    if spec.startswith("examples:"):
        return EXAMPLES / spec[len("examples:"):]
    if spec.startswith("deps:"):
        return EXAMPLES_DEPS / spec[len("deps:"):]
    if spec.startswith("npm:"):
        return NPM_DIR / "node_modules" / spec[len("npm:"):]
    return (HERE / spec).resolve()


def load_scenario(path: str | Path) -> dict:
    with open(path) as f:
        sc = json.load(f)
    sc.setdefault("name", Path(path).stem)
    return sc


class MockLlm:
    """mock-llm on a free port; the scripted replies are queued after it started, so
    that they can name its URL (`${mock_url}`)."""

    def __init__(self):
        self.proc = subprocess.Popen(
            [str(MOCK_LLM), "--port", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        m = re.search(r"listening on (http://\S+)", line)
        if not m:
            self.proc.kill()
            raise RuntimeError("mock-llm did not start: %r %s" % (line, self.proc.stderr.read()))
        self.url = m.group(1)

    def push(self, scripts: list):
        if not scripts:
            return
        req = urllib.request.Request(self.url + "/_mock/scripts", data=json.dumps(scripts).encode(),
                                     headers={"content-type": "application/json"}, method="POST")
        with urllib.request.urlopen(req, timeout=10) as r:
            r.read()

    def requests(self) -> list:
        with urllib.request.urlopen(self.url + "/_mock/requests", timeout=10) as r:
            return json.loads(r.read())

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def default_usage(scripts: list) -> list:
    """Usage is derived from the request size when a script gives none; the request size
    differs between two pis (and with path lengths), so every reply gets a fixed usage."""
    out = []
    for s in scripts:
        s = dict(s)
        s.setdefault("usage", {"input": 100, "output": 20})
        out.append(s)
    return out


def write_env(root: Path, mock_url: str, sc: dict) -> tuple[Path, Path]:
    agent = root / "agent"
    work = root / "work"
    agent.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    models = {"providers": {"mock": {
        "baseUrl": mock_url + "/v1", "api": "openai-completions", "apiKey": "mock-key",
        "models": [
            {"id": "mock-model", "name": "Mock Model", "contextWindow": 128000, "maxTokens": 16384},
            {"id": "mock-thinker", "name": "Mock Thinker", "reasoning": True, "contextWindow": 128000,
             "maxTokens": 16384},
        ]}}}
    (agent / "models.json").write_text(json.dumps(models))
    settings = {"defaultProvider": "mock", "defaultModel": "mock-model"}
    settings.update(sc.get("settings", {}))
    (agent / "settings.json").write_text(json.dumps(settings))
    for rel, content in sc.get("agentFiles", {}).items():
        p = agent / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(content if isinstance(content, str) else json.dumps(content))
    for rel, content in sc.get("homeFiles", {}).items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(content if isinstance(content, str) else json.dumps(content))
    for rel, content in sc.get("files", {}).items():
        p = work / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(content if isinstance(content, str) else json.dumps(content))
    if sc.get("git"):
        git = ["git", "-c", "user.name=oracle", "-c", "user.email=oracle@example.invalid",
               "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"]
        subprocess.run(git + ["init", "-q"], cwd=work, check=True)
        subprocess.run(git + ["add", "-A"], cwd=work, check=True)
        subprocess.run(git + ["commit", "-q", "--allow-empty", "-m", "initial"], cwd=work, check=True,
                       env=dict(os.environ, GIT_AUTHOR_DATE="2026-01-01T00:00:00Z",
                                GIT_COMMITTER_DATE="2026-01-01T00:00:00Z"))
        for rel, content in sc.get("dirtyFiles", {}).items():
            (work / rel).write_text(content)
    return agent, work


class Session:
    """One running pi: records lines, answers dialogs, waits for settle points."""

    def __init__(self, cmd, cwd, env, answers, quiet):
        self.t0 = time.monotonic()
        self.log: list[dict] = []  # {"t", "dir": in|out|err, "obj" | "raw"}
        self.answers = list(answers)
        self.quiet = quiet
        self.inbox: queue.Queue = queue.Queue()
        self.running_agents = 0
        self.proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.stderr_chunks: list[bytes] = []
        self.harness_notes: list[str] = []
        threading.Thread(target=self._pump_stdout, daemon=True).start()
        threading.Thread(target=self._pump_stderr, daemon=True).start()
        self.eof = False
        self.vars: dict = {"work": str(cwd)}

    def now(self):
        return round(time.monotonic() - self.t0, 4)

    def _pump_stdout(self):
        pending = b""
        while True:
            chunk = self.proc.stdout.read1(65536)
            if not chunk:
                break
            pending += chunk
            while b"\n" in pending:  # the protocol splits on LF only
                raw, pending = pending.split(b"\n", 1)
                self.inbox.put((self.now(), raw.decode("utf-8", "replace")))
        if pending:
            self.inbox.put((self.now(), pending.decode("utf-8", "replace")))
        self.inbox.put(None)

    def _pump_stderr(self):
        for chunk in iter(lambda: self.proc.stderr.read1(65536), b""):
            self.stderr_chunks.append(chunk)

    # -- sending ----------------------------------------------------------------------
    def send(self, obj: dict):
        text = json.dumps(obj, ensure_ascii=False)
        self.log.append({"t": self.now(), "dir": "in", "obj": obj})
        try:
            self.proc.stdin.write((text + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            self.harness_notes.append("stdin closed before sending %s" % obj.get("type"))

    def send_raw(self, text: str):
        self.log.append({"t": self.now(), "dir": "in", "raw": text})
        try:
            self.proc.stdin.write((text + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            self.harness_notes.append("stdin closed before sending raw line")

    # -- receiving ----------------------------------------------------------------------
    def _take(self, timeout: float):
        """Next stdout line (parsed), None at EOF, or raises queue.Empty."""
        item = self.inbox.get(timeout=max(0.0, timeout))
        if item is None:
            self.eof = True
            return None
        t, text = item
        try:
            obj = json.loads(text)
            entry = {"t": t, "dir": "out", "obj": obj}
        except ValueError:
            obj = {"_raw": text}
            entry = {"t": t, "dir": "out", "raw": text}
        self.log.append(entry)
        self._react(obj)
        return obj

    def _react(self, obj: dict):
        typ = obj.get("type")
        if typ == "agent_start":
            self.running_agents += 1
        elif typ == "agent_end":
            self.running_agents = max(0, self.running_agents - 1)
        elif typ == "extension_ui_request" and obj.get("method") in DIALOGS:
            self._answer(obj)

    def _answer(self, req: dict):
        method = req["method"]
        answer = None
        if self.answers and self.answers[0].get("method", method) == method:
            answer = self.answers.pop(0)
        elif self.answers:
            self.harness_notes.append("ui answer for %s skipped: request is %s" %
                                      (self.answers[0].get("method"), method))
        if answer is None:
            if method == "select":
                opts = req.get("options") or []
                answer = {"value": opts[0]} if opts else {"cancelled": True}
            elif method == "confirm":
                answer = {"confirmed": True}
            elif method == "input":
                answer = {"value": "oracle input"}
            else:
                answer = {"value": req.get("prefill") or "oracle text"}
        answer = dict(answer)
        answer.pop("method", None)
        if answer.pop("ignore", False):  # let it time out / stay open
            return
        delay = answer.pop("delay", 0)
        if "option" in answer:  # pick an option by index
            answer = {"value": (req.get("options") or [None])[answer.pop("option")]}
        if delay:
            self.pump(delay)
        self.send(dict({"type": "extension_ui_response", "id": req["id"]}, **answer))

    def pump(self, seconds: float):
        """Process lines for `seconds` (or until EOF)."""
        end = time.monotonic() + seconds
        while not self.eof:
            left = end - time.monotonic()
            if left <= 0:
                return
            try:
                self._take(left)
            except queue.Empty:
                return

    def wait_for(self, pred, label: str, timeout: float):
        end = time.monotonic() + timeout
        while True:
            if self.eof:
                raise HarnessError("pi exited while waiting for " + label)
            left = end - time.monotonic()
            if left <= 0:
                raise HarnessError("timed out waiting for " + label)
            try:
                obj = self._take(left)
            except queue.Empty:
                continue
            if obj is not None and pred(obj):
                return obj

    def settle(self, timeout: float, quiet: float | None = None):
        """Wait until no agent run is active and stdout was quiet for `quiet` seconds."""
        quiet = self.quiet if quiet is None else quiet
        end = time.monotonic() + timeout
        while not self.eof:
            left = end - time.monotonic()
            if left <= 0:
                raise HarnessError("timed out waiting for the agent to settle")
            try:
                self._take(min(quiet, left))
            except queue.Empty:
                if self.running_agents == 0:
                    return

    def close(self, timeout: float):
        try:
            self.proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        end = time.monotonic() + timeout
        while not self.eof:
            left = end - time.monotonic()
            if left <= 0:
                break
            try:
                self._take(left)
            except queue.Empty:
                break
        try:
            rc = self.proc.wait(timeout=max(0.1, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            rc = "killed"
        # drain what is left
        while True:
            try:
                if self._take(0.2) is None:
                    break
            except queue.Empty:
                break
        time.sleep(0.05)
        return rc


class HarnessError(Exception):
    pass


def run(sc: dict, which: str, keep: bool = False) -> dict:
    """Runs scenario `sc` against pi `which` (ts|ours|command); returns the raw record."""
    started = time.monotonic()
    root = Path(tempfile.mkdtemp(prefix="ext-oracle-"))
    mock = None
    record = {"scenario": sc["name"], "pi": which}
    for f in sc.get("removeBefore", []):  # absolute paths an extension hard-codes
        Path(f).unlink(missing_ok=True)
    try:
        mock = MockLlm()
        vars_ = {"mock_url": mock.url, "root": str(root), "home": str(root), "work": str(root / "work"),
                 "agent": str(root / "agent"), "fixtures": str(HERE / "fixtures"), "python": sys.executable}
        sc = substitute(sc, vars_)
        mock.push(default_usage(sc.get("model", [])))
        agent, work = write_env(root, mock.url, sc)
        ext = sc.get("extension")
        exts = ext if isinstance(ext, list) else ([ext] if ext else [])
        cmd = pi_command(which) + ["--mode", "rpc"]
        for e in exts:
            cmd += ["-e", str(extension_path(e))]
        cmd += sc.get("args", [])
        # The developer's own PI_* settings and API keys stay out, except the ones that
        # only say where our pi finds node, npm and its extension host.
        env = {k: v for k, v in os.environ.items()
               if not k.endswith("_API_KEY") and (not k.startswith("PI_") or k in PASS_ENV)}
        env.update({
            "PI_CODING_AGENT_DIR": str(agent), "PI_OFFLINE": "1", "HOME": str(root),
            "TZ": "UTC", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
        })
        # Our pi installs its node extension host (npm ci) into <agent dir>/extension-host
        # on first use; one shared folder saves that install in every fresh agent dir.
        env.setdefault("PI_EXTENSION_HOST_DIR", str(HOST_DIR))
        env.update(sc.get("env", {}))
        version = pi_version(pi_command(which))
        record["versions"] = [version] if version else []
        record.update({"root": str(root), "agent": str(agent), "work": str(work),
                       "mock_url": mock.url, "cmd": cmd, "extensions": [str(extension_path(e)) for e in exts]})
        s = Session(cmd, work, env, sc.get("ui", []), sc.get("quiet", 0.4))
        s.vars.update(vars_)
        error = None
        try:
            # The first command goes out at once, so that its place in the stream does not
            # depend on how fast pi starts; get_commands also shows what the extension
            # registered. Then wait until start-up work (session_start handlers) is done.
            s.send({"type": "get_commands", "id": "ready"})
            s.wait_for(lambda o: o.get("type") == "response" and o.get("id") == "ready", "start-up",
                       sc.get("startTimeout", 60))
            s.settle(sc.get("startTimeout", 60), quiet=sc.get("startQuiet", 0.6))
            for n, step in enumerate(sc.get("steps", []), 1):
                run_step(s, step, n)
        except HarnessError as e:
            error = str(e)
        rc = s.close(sc.get("exitTimeout", 15))
        record.update({
            "log": s.log, "stderr": b"".join(s.stderr_chunks).decode("utf-8", "replace"),
            "exit": rc, "error": error, "notes": s.harness_notes,
            "unused_answers": s.answers,
        })
        try:
            record["requests"] = mock.requests()
        except OSError as e:
            record["requests"] = []
            record["notes"].append("could not read mock requests: %s" % e)
        record["sessions"] = read_sessions(agent)
        n_scripts = len(sc.get("model", []))
        n_reqs = len([r for r in record["requests"] if not r.get("path", "").startswith("/_mock")])
        if n_reqs != n_scripts:
            record["notes"].append("model replies: %d scripted, %d requests" % (n_scripts, n_reqs))
        record["files"] = {rel: read_text(work / rel) for rel in sc.get("collectFiles", [])}
        for name, shell in sc.get("collectCommands", {}).items():
            r = subprocess.run(["bash", "-c", shell], cwd=work, capture_output=True, text=True, env=env)
            record["files"]["$ " + name] = r.stdout + r.stderr
    finally:
        if mock:
            mock.stop()
        for f in sc.get("removeAfter", []):
            Path(f).unlink(missing_ok=True)
        if not keep:
            shutil.rmtree(root, ignore_errors=True)
    record["seconds"] = round(time.monotonic() - started, 2)
    return record


def read_text(p: Path):
    try:
        return p.read_text()
    except OSError:
        return None


def read_sessions(agent: Path) -> list:
    out = []
    base = agent / "sessions"
    for p in sorted(base.rglob("*.jsonl")) if base.exists() else []:
        entries = []
        for line in p.read_text().splitlines():
            try:
                entries.append(json.loads(line))
            except ValueError:
                entries.append({"_raw": line})
        out.append({"file": str(p), "entries": entries})
    # creation order (file names start with an ISO timestamp)
    out.sort(key=lambda s: os.path.basename(s["file"]))
    return out


def substitute(obj, vars_: dict):
    """Replaces "${name}" with values known so far (paths, the mock URL, values saved by
    earlier steps); unknown names are left for later."""
    if isinstance(obj, dict):
        return {k: substitute(v, vars_) for k, v in obj.items()}
    if isinstance(obj, list):
        return [substitute(v, vars_) for v in obj]
    if isinstance(obj, str):
        m = re.fullmatch(r"\$\{(\w+)\}", obj)
        if m and m.group(1) in vars_:
            return vars_[m.group(1)]
        return re.sub(r"\$\{(\w+)\}", lambda m: str(vars_[m.group(1)]) if m.group(1) in vars_ else m.group(0), obj)
    return obj


def dig(obj, path: str):
    """`data.messages.0.entryId`; a list step may also be `[field=value]`."""
    for part in path.split("."):
        m = re.fullmatch(r"\[(\w+)=(.*)\]", part)
        if m:
            obj = next(x for x in obj if str(x.get(m.group(1))) == m.group(2))
        elif isinstance(obj, list):
            obj = obj[int(part)]
        else:
            obj = obj[part]
    return obj


def run_step(s: Session, step: dict, n: int):
    timeout = step.get("timeout", 60)
    if "sleep" in step:
        s.pump(step["sleep"])
        return
    if "writeFile" in step:  # {"path": absolute or relative to the work dir, "content"}
        wf = step["writeFile"]
        p = Path(s.vars["work"]) / substitute(wf["path"], s.vars)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(wf["content"])
        if "waitFor" in step:
            want = step["waitFor"]
            s.wait_for(lambda o: all(o.get(k) == v for k, v in want.items()), json.dumps(want), timeout)
        s.settle(timeout, step.get("quiet"))
        return
    if "raw" in step:
        s.send_raw(step["raw"])
        s.wait_for(lambda o: o.get("type") == "response" and o.get("command") == "parse", "parse error", timeout)
        s.settle(timeout, step.get("quiet"))
        return
    if "waitFor" in step and "cmd" not in step:
        want = step["waitFor"]
        s.wait_for(lambda o: all(o.get(k) == v for k, v in want.items()), json.dumps(want), timeout)
        s.settle(timeout, step.get("quiet"))
        return
    cmd = substitute(dict(step["cmd"]), s.vars)
    cmd.setdefault("id", "c%d" % n)
    s.send(cmd)
    if step.get("noResponse"):
        s.settle(timeout, step.get("quiet"))
        return
    cid = cmd["id"]
    resp = s.wait_for(lambda o: o.get("type") == "response" and o.get("id") == cid,
                      "response %s (%s)" % (cid, cmd["type"]), timeout)
    for var, path in step.get("save", {}).items():
        try:
            s.vars[var] = dig(resp, path)
        except (KeyError, IndexError, StopIteration, TypeError) as e:
            raise HarnessError("cannot save %s from %s: %r" % (var, path, e))
    if "waitFor" in step:
        want = step["waitFor"]
        s.wait_for(lambda o: all(o.get(k) == v for k, v in want.items()), json.dumps(want), timeout)
    if step.get("noSettle"):  # the next step goes out while the run goes on (steering)
        return
    s.settle(timeout, step.get("quiet"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenario")
    ap.add_argument("--pi", default="ts", help="ts, ts16, ours, or a command line")
    ap.add_argument("--out", help="write the raw record here (JSON)")
    ap.add_argument("--normalized", help="write the normalized record here (JSON)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    ap.add_argument("--pi16", action="store_true", help="examples: and deps: name pi 1.6.0's examples")
    a = ap.parse_args(argv)
    if a.pi16:
        use_examples16()
    sc = load_scenario(a.scenario)
    rec = run(sc, a.pi, keep=a.keep)
    if a.out:
        Path(a.out).write_text(json.dumps(rec, indent=1, ensure_ascii=False))
    if a.normalized:
        import normalize
        Path(a.normalized).write_text(normalize.dumps(normalize.normalize(rec, sc)))
    if not a.out and not a.normalized:
        for e in rec["log"]:
            print(e["dir"], json.dumps(e.get("obj", e.get("raw")), ensure_ascii=False)[:400])
        print("exit", rec["exit"], "error", rec["error"], "notes", rec["notes"], "seconds", rec["seconds"])
        print("stderr:", rec["stderr"][:2000])
    return 0 if not rec.get("error") else 1


if __name__ == "__main__":
    sys.exit(main())
