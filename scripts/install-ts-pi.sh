#!/usr/bin/env bash
# Installs the TypeScript pi (@mariozechner/pi-coding-agent@0.73.1) from npm into
# target/ts-pi once; the oracle tests, the extension tests (its example extensions) and
# scripts/ts-compat.sh use it. Exits 0 with a notice when node/npm are missing or npm fails,
# so the tests that need it skip themselves.
set -euo pipefail
cd "$(dirname "$0")/.."

version=0.73.1
dir=target/ts-pi
cli="$dir/node_modules/@mariozechner/pi-coding-agent/dist/cli.js"

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "install-ts-pi: node/npm not found; skipped"
  exit 0
fi
if [ ! -f "$cli" ]; then
  mkdir -p "$dir"
  echo "install-ts-pi: installing the TypeScript pi $version into $dir"
  if ! (cd "$dir" && npm install --no-audit --no-fund --loglevel=error \
        "@mariozechner/pi-coding-agent@$version" >/dev/null); then
    echo "install-ts-pi: npm install failed; skipped"
    exit 0
  fi
fi
