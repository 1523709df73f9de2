#!/usr/bin/env python3
"""Medians of benchmark result lines, for the bench/*.sh scripts.

usage: medians.py RESULTS KEY_WORDS
Each line is KEY… SECONDS KIB [anything] (KEY_WORDS words of key), or KEY… FAILED(…).
Prints, per key in order of appearance: the median wall time, the median peak memory in
MiB, how many runs succeeded and how many failed.
"""
import statistics
import sys

path, key_words = sys.argv[1], int(sys.argv[2])
rows = {}
for line in open(path):
    parts = line.split()
    if len(parts) <= key_words:
        continue
    key = " ".join(parts[:key_words])
    value = parts[key_words]
    rows.setdefault(key, []).append(
        None if value.startswith("FAILED") else (float(value), int(parts[key_words + 1]) / 1024))
width = max([len(k) for k in rows] + [3]) + 2
print("%-*s %10s %12s %s" % (width, "run", "median s", "median MiB", "runs"))
for key, values in rows.items():
    ok = [v for v in values if v]
    failed = len(values) - len(ok)
    if not ok:
        print("%-*s %10s %12s %d failed" % (width, key, "-", "-", failed))
        continue
    print("%-*s %10.2f %12.0f %d%s" % (width, key, statistics.median(v[0] for v in ok),
          statistics.median(v[1] for v in ok), len(ok), " (%d failed)" % failed if failed else ""))
