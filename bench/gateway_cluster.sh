#!/usr/bin/env bash
# pi-gateway on one node and as a cluster of three nodes on three NATS servers
# (JetStream, sync_interval: always), side by side in one run, against mock-llm (release
# builds). For each N, one JSON line per mode: events/s, p50/p99 latency from the event's
# emission on the node running the session to its receipt by a client of another node
# (the same node for the single gateway), memory, CPU; the cluster line adds the failover
# time: kill -9 of the node running a session until a prompt sent to another node ends
# (lease TTL 3 s).
#
# Usage: bench/gateway_cluster.sh [N ...]   (default: 100 500)
#   GATEWAY_LOAD_WORDS=W   words per reply (default 600), GATEWAY_LOAD_CHUNK=C (default 8)
#   GATEWAY_LOAD_SPREAD=S  start the prompts evenly over S seconds (default 0: one burst)
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build -q --release -p pi-gateway --features cluster --bin pi-gateway --example gateway_load
cargo build -q --release -p mock-llm --bin mock-llm
nats="$(scripts/install-nats.sh | tail -1)"
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

words="${GATEWAY_LOAD_WORDS:-600}"
chunk="${GATEWAY_LOAD_CHUNK:-8}"
spread="${GATEWAY_LOAD_SPREAD:-0}"
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(100 500)
for n in "${sizes[@]}"; do
  for mode in single cluster; do
    extra=()
    [ "$mode" = cluster ] && extra=(--nats "$nats")
    printf '%s ' "$mode"
    target/release/examples/gateway_load --gateway target/release/pi-gateway \
      --mock target/release/mock-llm --sessions "$n" --words "$words" --chunk "$chunk" --spread "$spread" \
      "${extra[@]}" 2>/dev/null | tail -1
  done
done
