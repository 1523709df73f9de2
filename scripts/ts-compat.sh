#!/usr/bin/env bash
# Cross-checks session files with the TypeScript pi 0.73.1 and 1.5.2: installs
# @mariozechner/pi-coding-agent@0.73.1 into target/ts-pi and @earendil-works/pi-coding-agent
# @1.5.2 (with its node 22) into target/ts-pi-15 (once each), then runs the ts_compat tests,
# which compact a session with each pi and continue it with the other, and the MCP
# side-by-side test (the same mcp.json in both).
# Needs node (20+) and npm. Exits 0 with a notice when they are missing or npm is
# unreachable; a failing test fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."

dir=target/ts-pi
cli="$dir/node_modules/@mariozechner/pi-coding-agent/dist/cli.js"

scripts/install-ts-pi.sh
if [ ! -f "$cli" ]; then
  echo "ts-compat: the TypeScript pi is not installed; skipped"
  exit 0
fi
ts15="$(scripts/install-ts-pi-15.sh)"
[ -n "$ts15" ] || echo "ts-compat: pi 1.5.2 is not installed; its checks are skipped"
PI_TS_CLI="$PWD/$cli" PI_TS15="$ts15" PI_TS16="${PI_TS16:-$(scripts/install-ts-pi-16.sh)}" \
  cargo test -p pi-coding-agent --test ts_compat -- --nocapture
# The same mcp.json in both: tools declared and results (needs scripts/install-mcp-servers.sh).
scripts/install-mcp-servers.sh
PI_TS15="$ts15" cargo test -p pi-coding-agent --test mcp_ts_compare -- --nocapture
# OAuth credentials signed in by either pi work in the other (a local authorization server).
PI_TS15="$ts15" cargo test -p pi-coding-agent --test mcp_oauth -- --nocapture
