#!/usr/bin/env bash
# Load benchmark of pi-gateway: N sessions streaming at once through one gateway process
# against mock-llm (release builds). Prints one JSON line per N: events/s, p50/p99 event
# latency (gateway timestamp to client receipt) and gateway memory per session.
#
# Usage: bench/gateway_load.sh [N ...]   (default: 1 10 100 1000)
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build -q --release -p pi-gateway --bin pi-gateway --example gateway_load
cargo build -q --release -p mock-llm --bin mock-llm

# Every session holds a client socket, a gateway socket and a provider connection.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1 10 100 1000)
for n in "${sizes[@]}"; do
  target/release/examples/gateway_load \
    --gateway target/release/pi-gateway --mock target/release/mock-llm --sessions "$n"
done
