#!/usr/bin/env bash
# Loop overhead side by side: the TypeScript pi-agent-core 0.73.1 (node) and ours (criterion),
# same scenarios: a text-only turn, a turn with 1 and with 10 instant tool calls.
# usage: bench/agent_loop_compare.sh        (needs node >= 20 and npm)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="${PI_BENCH_DIR:-$root/target/bench-agent}"
mkdir -p "$work"
if [ ! -d "$work/node_modules/@mariozechner/pi-agent-core" ]; then
  (cd "$work" && npm init -y >/dev/null && npm install --no-audit --no-fund --ignore-scripts @mariozechner/pi-agent-core@0.73.1 >/dev/null)
fi
cp "$root/bench/agent_loop_ts.mjs" "$work/"
(cd "$work" && node agent_loop_ts.mjs 20000)
(cd "$root" && cargo bench -q -p pi-agent-core --bench loop_overhead -- --warm-up-time 1 --measurement-time 4 2>/dev/null) \
  | awk '/^agent_loop\//{name=$1} /time:/{print "rust " name ": " $4 " " $5 " per run (median of criterion estimate)"}'
