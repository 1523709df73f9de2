#!/usr/bin/env bash
# Installs pi (and pi-gateway with --gateway) under PREFIX (default ~/.cargo): the binaries
# in PREFIX/bin, and the extension host with its npm packages in
# PREFIX/lib/pi-rs/extension-host, so that pi loads extensions without ever needing npm or
# the network afterwards. Needs cargo; node and npm for the extension host (without them
# only the binaries are installed, and extensions cannot run until node is there).
#
#   scripts/install.sh [--gateway] [PREFIX]
set -euo pipefail
cd "$(dirname "$0")/.."

gateway=0
prefix="$HOME/.cargo"
for arg in "$@"; do
  case "$arg" in
    --gateway) gateway=1 ;;
    -h | --help) sed -n '2,8p' "$0"; exit 0 ;;
    *) prefix="$arg" ;;
  esac
done
mkdir -p "$prefix"
prefix="$(cd "$prefix" && pwd)"

cargo install --locked --path crates/coding-agent --root "$prefix"
if [ "$gateway" = 1 ]; then
  cargo install --locked --path crates/gateway --root "$prefix"
fi

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "install: node and npm not found: the extension host was not installed" >&2
  exit 0
fi
# The same files build.rs embeds in pi (pi runs this folder only when they are equal).
host="$prefix/lib/pi-rs/extension-host"
# Built in place: until the marker is written last, pi does not use the folder.
rm -rf "$host"
mkdir -p "$host"
(cd crates/coding-agent/extension-host &&
  find . \( -name node_modules -o -name test -o -name '.*' ! -name . \) -prune -o \
    -type f \( -name '*.mjs' -o -name '*.js' -o -name '*.cjs' -o -name '*.json' \) -print |
  while read -r file; do
    mkdir -p "$host/$(dirname "$file")"
    cp "$file" "$host/$file"
  done)
(cd "$host" && npm ci --omit=dev --no-audit --no-fund --loglevel=error >/dev/null && node optimize.mjs)
date -u +%FT%TZ > "$host/node_modules/.pi-host-deps"
echo "install: pi in $prefix/bin, its extension host in $host"
