#!/usr/bin/env bash
# Side-by-side: the same SSE bodies streamed over loopback HTTP, decoded by the TypeScript
# pi-ai (`complete()`, node) and by ours (`complete()`, release build). Two workloads per API:
# "text" (~64 KB of text in ~12-byte deltas) and "write" (the same text, then a `write` tool
# call carrying a 48 KB file in ~8-byte argument fragments).
# Runs alternate (TS, Rust, TS, Rust …) so machine drift affects both equally.
#
# usage: bench/sse_compare.sh [rounds=3] [runs-per-round=10]     (needs node >= 20 and npm)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
rounds="${1:-3}"
runs="${2:-10}"
work="${PI_BENCH_DIR:-$root/target/bench-sse}"
port="${PI_BENCH_PORT:-18931}"
mkdir -p "$work"

if [ ! -d "$work/node_modules/@mariozechner/pi-ai" ]; then
  (cd "$work" && npm init -y >/dev/null && npm install --no-audit --no-fund --ignore-scripts @mariozechner/pi-ai@0.73.1 >/dev/null)
fi
cp "$root/bench/ts_sse_client.mjs" "$root/bench/sse_server.mjs" "$work/"
(cd "$root" && cargo build -q --release -p pi-ai --example sse_client)
client="$root/target/release/examples/sse_client"
"$client" gen "$work"
ls -l "$work"/*.sse | awk '{print "body:", $NF, $5, "bytes"}'

node "$work/sse_server.mjs" "$work" "$port" >/dev/null &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
sleep 0.5

for api in openai-completions anthropic-messages; do
  for workload in text write; do
    prefix=""; file_suffix=""
    [ "$workload" = text ] && { prefix="/text"; file_suffix="-text"; }
    case "$api" in
      openai-completions) url="http://127.0.0.1:$port$prefix/v1"; size=$(stat -c %s "$work/openai$file_suffix.sse") ;;
      *) url="http://127.0.0.1:$port$prefix"; size=$(stat -c %s "$work/anthropic$file_suffix.sse") ;;
    esac
    for round in $(seq "$rounds"); do
      (cd "$work" && node ts_sse_client.mjs "$api" "$url" "$runs")
      "$client" run "$api" "$url" "$runs"
    done | python3 -c "
import json, sys, statistics
rows = [json.loads(l) for l in sys.stdin if l.strip()]
size = $size
label = '$api/$workload'
meds = {impl: statistics.median(r['median_ms'] for r in rows if r['impl'] == impl) for impl in ('ts', 'rust')}
for impl, med in meds.items():
    print(f'{label:32} {impl:>4}: {med:9.2f} ms per response ({size} B)  {size / med / 1e3:7.1f} MB/s')
print(f'{label:32} TS/Rust time ratio: {meds[\"ts\"] / meds[\"rust\"]:.1f}x')
"
  done
done
