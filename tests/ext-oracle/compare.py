#!/usr/bin/env python3
"""Runs the extension scenarios against two pis and compares the normalized streams.

    python3 compare.py [NAME ...] [--a golden|ts|ours|CMD] [--b ours|ts|golden|CMD]
    python3 compare.py --record [NAME ...]          # run the TypeScript pi, write golden/
    python3 compare.py --a ts --b ts                # determinism: TS against itself
    python3 compare.py --twice --a ts --b golden    # each TS scenario twice, then golden
    python3 compare.py --renormalize ts             # golden/ again from the last TS run's raw records
    python3 compare.py --pi16 [NAME ...]            # pi 1.6.0 live vs ours, on 1.6.0's examples

Sides: `golden` (tests/ext-oracle/golden/NAME.json, recorded from the TypeScript pi),
`ts` (node target/ts-pi/.../dist/cli.js, live), `ours` (target/debug/pi, live), or any
command line. The defaults compare golden (TypeScript) against ours.

--pi16 (scripts/ext-oracle.sh --live16): side A is pi 1.6.0 (`ts16`, $PI_TS16 or
target/ts-pi-16/bin/pi), side B ours; `examples:NAME` and `deps:NAME` name the copy of
1.6.0's examples/extensions in target/ext-oracle/examples-16 (install-examples-16.sh) on
both sides, scenarios whose extension is not there are skipped with a note, the
allowlist is known-failures-16.txt, and results go to results/ts16 and results/ours16.

Per scenario it prints PASS or FAIL with the first difference (section, index, both
values), then `N/M passed`. A failing scenario listed in known-failures.txt does not
fail the run; the exit code is 1 when another scenario fails (or a listed one passes,
with --strict). Normalized results of each live run are kept under
target/ext-oracle/results/<side>/ for a closer look (diff -u works on them).

Sections compared (see normalize.py): stream, requests, session, files, exit, error.
stderr only with --stderr.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import driver  # noqa: E402
import normalize  # noqa: E402

SCENARIOS = HERE / "scenarios"
GOLDEN = HERE / "golden"
RESULTS = driver.REPO / "target/ext-oracle/results"
KNOWN = HERE / "known-failures.txt"
KNOWN16 = HERE / "known-failures-16.txt"
SECTIONS = ["exit", "error", "stream", "requests", "session", "files"]

# The same session without any extension, with the default tools, all built-in tools
# and no tools: the pi's own system prompt lines and tool schemas, against which the
# requests of the scenarios are digested (normalize.digest_request).
BASELINES = [
    {"name": "_baseline" + suffix, "args": args,
     "model": [{"items": [{"type": "text", "text": "hi"}]}],
     "steps": [{"cmd": {"type": "prompt", "message": "hello"}}]}
    for suffix, args in (("", []), ("-all-tools", ["--tools", "read,bash,edit,write,grep,find,ls"]),
                         ("-no-tools", ["--no-tools"]))
]


def load_known(path: Path = KNOWN) -> dict[str, str]:
    """known-failures.txt: `name  # reason` per line; blank lines and comment lines skipped."""
    known = {}
    if path.exists():
        for line in path.read_text().splitlines():
            body, _, reason = line.partition("#")
            name = body.strip()
            if name:
                known[name] = reason.strip()
    return known


def scenario_names() -> list[str]:
    return sorted(p.stem for p in SCENARIOS.glob("*.json"))


class Side:
    def __init__(self, spec: str, label: str | None = None):
        self.spec = spec
        self.baseline = None
        self.label = label or (spec if spec in ("golden", "ts", "ts16", "ours") else "custom")
        # for our pi: built-in tool schemas of the reference pi that count as built-in
        self.alt_tools = None

    @property
    def live(self):
        return self.spec != "golden"

    def prepare(self):
        if self.live:
            recs = []
            out = RESULTS / self.label
            out.mkdir(parents=True, exist_ok=True)
            for b in BASELINES:
                rec = driver.run(dict(b), self.spec)
                (out / (b["name"] + ".raw.json")).write_text(json.dumps(rec, indent=1, ensure_ascii=False))
                if rec.get("error"):
                    raise SystemExit("%s: the baseline run %s failed: %s\n%s" % (
                        self.spec, b["name"], rec["error"], rec["stderr"][-2000:]))
                recs.append(rec)
            self.baseline = normalize.baseline_of(recs)

    def result(self, name: str, sc: dict) -> tuple[dict | None, float]:
        if not self.live:
            p = GOLDEN / (name + ".json")
            if not p.exists():
                return None, 0.0
            return normalize.rewritten(json.loads(p.read_text())), 0.0
        rec = driver.run(sc, self.spec)
        alt = self.alt_tools
        if alt is None and self.label == "ours" and (GOLDEN / "_baseline.json").exists():
            alt = json.loads((GOLDEN / "_baseline.json").read_text()).get("tools")
        norm = normalize.normalize(rec, sc, self.baseline, alt)
        out = RESULTS / self.label
        out.mkdir(parents=True, exist_ok=True)
        (out / (name + ".json")).write_text(normalize.dumps(norm))
        (out / (name + ".raw.json")).write_text(json.dumps(rec, indent=1, ensure_ascii=False))
        return norm, rec["seconds"]


def first_diff(a, b, path=""):
    """The first place where a and b differ: (path, a_value, b_value) or None."""
    if type(a) is not type(b):
        return path or "/", a, b
    if isinstance(a, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b:
                return "%s/%s" % (path, k), a.get(k, "<missing>"), b.get(k, "<missing>")
            d = first_diff(a[k], b[k], "%s/%s" % (path, k))
            if d:
                return d
        return None
    if isinstance(a, list):
        for i in range(min(len(a), len(b))):
            d = first_diff(a[i], b[i], "%s[%d]" % (path, i))
            if d:
                return d
        if len(a) != len(b):
            i = min(len(a), len(b))
            return ("%s[%d] (length %d vs %d)" % (path, i, len(a), len(b)),
                    a[i] if i < len(a) else "<end>", b[i] if i < len(b) else "<end>")
        return None
    return None if a == b else (path or "/", a, b)


def short(v, n=700):
    s = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
    return s if len(s) <= n else s[:n] + "…(%d chars)" % len(s)


def compare(a: dict, b: dict, sections) -> list[str] | None:
    for sec in sections:
        d = first_diff(a.get(sec), b.get(sec), sec)
        if d:
            path, va, vb = d
            lines = ["first difference at %s" % path]
            # the whole stream item, for context
            if sec in ("stream", "requests", "session") and "[" in path:
                idx = int(path.split("[", 1)[1].split("]", 1)[0])
                la, lb = a.get(sec) or [], b.get(sec) or []
                if idx > 0 and idx - 1 < len(la):
                    lines.append("  before: %s" % short(la[idx - 1], 300))
                lines.append("  A item: %s" % short(la[idx] if idx < len(la) else "<end>"))
                lines.append("  B item: %s" % short(lb[idx] if idx < len(lb) else "<end>"))
            lines.append("  A: %s" % short(va, 400))
            lines.append("  B: %s" % short(vb, 400))
            return lines
    return None


def run_all(names, side_a: Side, side_b: Side | None, jobs: int, twice: bool):
    """Yields (name, results dict) as scenarios finish; results hold the normalized
    records per side and the seconds each live run took."""
    scs = {n: driver.load_scenario(SCENARIOS / (n + ".json")) for n in names}

    def one(name):
        sc = scs[name]
        res = {"times": {}}
        na, ta = side_a.result(name, sc)
        res["a"], res["times"]["a"] = na, ta
        if twice:
            na2, ta2 = side_a.result(name, sc)
            res["a2"], res["times"]["a2"] = na2, ta2
        if side_b is not None:
            nb, tb = side_b.result(name, sc)
            res["b"], res["times"]["b"] = nb, tb
        return name, res

    parallel = [n for n in names if not scs[n].get("exclusive")]
    serial = [n for n in names if scs[n].get("exclusive")]
    with cf.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for fut in cf.as_completed([pool.submit(one, n) for n in parallel]):
            yield fut.result()
    for n in serial:  # they use fixed paths outside the scratch folder
        yield one(n)


def renormalize(label: str, names: list) -> int:
    src = RESULTS / label
    recs = [json.loads((src / (b["name"] + ".raw.json")).read_text()) for b in BASELINES]
    base = normalize.baseline_of(recs)
    GOLDEN.mkdir(exist_ok=True)
    (GOLDEN / "_baseline.json").write_text(json.dumps(base, indent=1, ensure_ascii=False) + "\n")
    for name in names or scenario_names():
        raw = src / (name + ".raw.json")
        if not raw.exists():
            print("no raw record for", name)
            continue
        sc = driver.load_scenario(SCENARIOS / (name + ".json"))
        norm = normalize.normalize(json.loads(raw.read_text()), sc, base)
        (GOLDEN / (name + ".json")).write_text(normalize.dumps(norm))
    print("golden files rewritten from", src)
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", help="scenario names (default: all)")
    ap.add_argument("--a", default="golden", help="reference side (default golden)")
    ap.add_argument("--b", default="ours", help="side under test (default ours)")
    ap.add_argument("--record", action="store_true", help="run the TypeScript pi and write golden/")
    ap.add_argument("--twice", action="store_true", help="run side A twice and require identical results")
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("EXT_ORACLE_JOBS", "2")))
    ap.add_argument("--stderr", action="store_true", help="compare stderr too")
    ap.add_argument("--strict", action="store_true", help="also fail when a known failure passes")
    ap.add_argument("--pi16", action="store_true",
                    help="pi 1.6.0 live (A) vs ours (B) on 1.6.0's examples, with known-failures-16.txt")
    ap.add_argument("--renormalize", metavar="SIDE",
                    help="rewrite golden/ from the raw records of the last live run of SIDE (ts) "
                         "under target/ext-oracle/results/SIDE/, after a change to normalize.py")
    a = ap.parse_args(argv)
    if a.renormalize:
        return renormalize(a.renormalize, a.names)

    names = a.names or scenario_names()
    unknown = [n for n in names if not (SCENARIOS / (n + ".json")).exists()]
    if unknown:
        raise SystemExit("unknown scenarios: %s" % ", ".join(unknown))
    sections = SECTIONS + (["stderr"] if a.stderr else [])
    # known-failures.txt is about our pi; TS against golden (determinism) ignores it
    known = load_known() if a.record or not {a.a, a.b} <= {"golden", "ts"} else {}
    skipped = []
    if a.pi16:
        if a.record:
            raise SystemExit("--pi16 has no golden files to record")
        driver.use_examples16()
        if not driver.EXAMPLES16.is_dir():
            raise SystemExit("%s missing: run tests/ext-oracle/install-examples-16.sh" % driver.EXAMPLES16)
        known = load_known(KNOWN16)
    # a scenario whose example is not in this pi's examples folder (0.73.1 has no
    # debug-provider..., 1.6.0 no sandbox) is skipped
    if driver.EXAMPLES.is_dir() and not a.renormalize:
        keep = []
        for n in names:
            ext = driver.load_scenario(SCENARIOS / (n + ".json")).get("extension")
            missing = [e for e in (ext if isinstance(ext, list) else [ext] if ext else [])
                       if e.split(":", 1)[0] in ("examples", "deps") and not driver.extension_path(e).exists()]
            if missing:
                skipped.append(n)
                print("SKIP %s (not in pi %s's examples: %s)" % (n, "1.6.0" if a.pi16 else "0.73.1", ", ".join(missing)),
                      flush=True)
            else:
                keep.append(n)
        names = keep

    if a.record:
        side_a, side_b = Side("ts"), None
    elif a.pi16:
        side_a = Side("ts16" if a.a == "golden" else a.a, "ts16")
        side_b = Side(a.b, "ours16" if a.b == "ours" else None)
    else:
        side_a = Side(a.a)
        side_b = Side(a.b)
    for s in (side_a, side_b):
        if s is not None:
            s.prepare()
    if a.pi16 and side_b is not None:
        side_b.alt_tools = (side_a.baseline or {}).get("tools")
    if a.record:
        GOLDEN.mkdir(exist_ok=True)
        (GOLDEN / "_baseline.json").write_text(json.dumps(side_a.baseline, indent=1, ensure_ascii=False) + "\n")

    started = time.monotonic()
    passed = failed_unexpected = 0
    rows = []
    flaky = []
    for name, res in run_all(names, side_a, side_b, a.jobs, a.twice):
        ta = res["times"].get("a", 0)
        tb = res["times"].get("b", 0)
        notes = []
        if a.twice:
            d = compare(res["a"], res["a2"], sections + ["notes"])
            if d:
                flaky.append(name)
                print("FLAKY %s (side A differs between two runs)\n    %s" % (name, "\n    ".join(d)), flush=True)
        if a.record:
            norm = res["a"]
            (GOLDEN / (name + ".json")).write_text(normalize.dumps(norm))
            state = "RECORDED"
            if norm.get("error") or norm.get("notes"):
                notes = ["error: %s" % norm.get("error")] if norm.get("error") else []
                notes += norm.get("notes", [])
            print("%-8s %-34s %5.1fs  %s" % (state, name, ta, "; ".join(notes)), flush=True)
            rows.append((name, state, ta, tb))
            continue
        if res["a"] is None or res["b"] is None:
            diff = ["no result for side %s (golden file missing?)" % ("A" if res["a"] is None else "B")]
        else:
            diff = compare(res["a"], res["b"], sections)
        if diff is None:
            passed += 1
            word, suffix = "PASS", ""
            if name in known:
                suffix = " (listed in %s: remove it)" % (KNOWN16 if a.pi16 else KNOWN).name
                if a.strict:
                    failed_unexpected += 1
        else:
            word = "FAIL"
            suffix = " (known: %s)" % known[name] if name in known else ""
            if name not in known:
                failed_unexpected += 1
        state = word
        times = "  ".join("%s %.1fs" % (k, v) for k, v in (("A", ta), ("B", tb)) if v)
        print("%s %s%s  [%s]" % (word, name, suffix, times), flush=True)
        if diff:
            for line in diff:
                print("    " + line, flush=True)
        rows.append((name, state, ta, tb))

    total = time.monotonic() - started
    if a.record:
        print("recorded %d scenarios into %s in %.0fs%s" % (
            len(rows), GOLDEN, total, ("; %d flaky: %s" % (len(flaky), ", ".join(flaky))) if flaky else ""))
        return 1 if flaky else 0
    print()
    print("%d/%d passed (%d failing outside %s)%s%s in %.0fs" % (
        passed, len(rows), failed_unexpected, (KNOWN16 if a.pi16 else KNOWN).name,
        ("; %d flaky: %s" % (len(flaky), ", ".join(flaky))) if a.twice else "",
        ("; %d skipped (example not there): %s" % (len(skipped), ", ".join(skipped))) if skipped else "", total))
    return 1 if failed_unexpected or flaky else 0


if __name__ == "__main__":
    sys.exit(main())
