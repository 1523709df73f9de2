#!/usr/bin/env bash
# Installs pi-acp, the ACP adapter Zed users run in front of pi (pinned, from npm), into
# target/pi-acp once; its @agentclientprotocol/sdk also drives tests/acp/pi-acp-client.mjs.
# Fails when npm cannot install it.
set -euo pipefail
cd "$(dirname "$0")/.."

version=0.0.34
dir=target/pi-acp
marker="$dir/.installed-$version"

if [ -f "$marker" ]; then
  exit 0
fi
mkdir -p "$dir"
echo "install-pi-acp: installing pi-acp $version into $dir"
(cd "$dir" && npm install --no-audit --no-fund --loglevel=error "pi-acp@$version" >/dev/null)
touch "$marker"
