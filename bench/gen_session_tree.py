#!/usr/bin/env python3
"""Writes a sessions folder like a heavy pi user's, for bench/session_list.sh.

usage: gen_session_tree.py SESSIONS_ROOT [--sessions N] [--total-mb MB] [--projects P]

Sizes follow a long tail, as real ones do: most sessions are a few hundred KB, a few are
tens or hundreds of MB. Session files are made by bench/gen_session.py from a handful of
templates of different sizes; each copy gets its own session id, file name and
modification time.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("root")
    parser.add_argument("--sessions", type=int, default=3000)
    parser.add_argument("--total-mb", type=float, default=4096)
    parser.add_argument("--projects", type=int, default=30)
    args = parser.parse_args()
    rnd = random.Random(3000)

    # A long tail of sizes (Pareto), scaled to the total.
    raw = sorted((rnd.paretovariate(1.1) for _ in range(args.sessions)), reverse=True)
    raw = [min(r, 400.0) for r in raw]
    scale = args.total_mb / sum(raw)
    sizes = [r * scale for r in raw]

    # Templates at sizes spaced by factors of two; each session takes the one closest to
    # its size, written up to that size.
    work = tempfile.mkdtemp(prefix="pi-session-tree-")
    templates = {}
    for mb in sorted({template_mb(s) for s in sizes}):
        path = os.path.join(work, f"t{mb}.jsonl")
        subprocess.run([sys.executable, os.path.join(HERE, "gen_session.py"), path, "/work/project",
                        "--target-mb", str(mb), "--tool-bytes", "4000"],
                       check=True, stdout=subprocess.DEVNULL)
        with open(path, "rb") as f:
            header = f.readline()
            templates[mb] = (json.loads(header), f.read())
        os.remove(path)
    os.rmdir(work)

    total = 0
    for n, size in enumerate(sizes):
        header, body = templates[template_mb(size)]
        sid = str(uuid.UUID(int=rnd.getrandbits(128), version=4))
        project = os.path.join(args.root, f"--work-project-{n % args.projects}--")
        os.makedirs(project, exist_ok=True)
        path = os.path.join(project, f"2026-01-01T00-00-00-000Z_{sid}.jsonl")
        line = dict(header, id=sid)
        with open(path, "wb") as f:
            f.write(json.dumps(line, separators=(",", ":")).encode() + b"\n")
            f.write(body)
        stamp = 1767225600 + n * 60
        os.utime(path, (stamp, stamp))
        total += len(body)
    print(f"{len(sizes)} sessions, {total / 2**20:.0f} MB in {args.root}")


def template_mb(size_mb):
    """The template size for a session of `size_mb`: a power of two from 1/8 MB."""
    mb = 0.125
    while mb * 1.5 < size_mb:
        mb *= 2
    return mb


if __name__ == "__main__":
    main()
