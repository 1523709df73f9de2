#!/usr/bin/env bash
# Installs the pinned third-party pi extensions of the extension oracle
# (tests/ext-oracle/third-party/package.json + package-lock.json) into
# target/ext-oracle/npm with `npm ci`, and the npm dependencies of the example
# extensions that need their own (a copy under target/ext-oracle/examples-deps).
# Skips what is already installed (the lock file's hash is kept in a stamp file). About 430 MB and 40 s the first time (pi-mcp-adapter and
# pi-mermaid bring large dependency trees).
#
# --legacy-peer-deps: the packages name the pi packages (@mariozechner/* or
# @earendil-works/*) as peer dependencies "*"; those are provided by the pi that loads
# the extension (its jiti aliases), so npm must not install a second copy (it would
# pull the newest @earendil-works/pi-coding-agent, which needs node 22).
set -euo pipefail
cd "$(dirname "$0")/../.."

src=tests/ext-oracle/third-party
dest=${EXT_ORACLE_NPM:-target/ext-oracle/npm}

if ! command -v npm >/dev/null; then
  echo "install-third-party: npm not found" >&2
  exit 1
fi

# npm ci with up to three attempts (the registry sometimes drops a connection); after
# a failure the end of npm's own log is shown so the cause is in the CI output.
npm_ci() {
  local attempt
  for attempt in 1 2 3; do
    if npm ci --no-audit --no-fund --loglevel=error "$@"; then
      return 0
    fi
    echo "install-third-party: npm ci failed (attempt $attempt of 3) in $(pwd)" >&2
    log=$(ls -t "${npm_config_cache:-$HOME/.npm}"/_logs/*-debug-0.log 2>/dev/null | head -1 || true)
    if [ -n "$log" ]; then
      grep -E "verbose|error|warn" "$log" | tail -25 >&2 || true
    fi
    rm -rf node_modules
    sleep $((attempt * 5))
  done
  return 1
}
mkdir -p "$dest"
stamp="$dest/.installed-lock.sha256"
want=$(sha256sum "$src/package-lock.json" | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -d "$dest/node_modules" ]; then
  echo "install-third-party: third-party packages up to date in $dest"
else
  cp "$src/package.json" "$src/package-lock.json" "$dest/"
  echo "install-third-party: npm ci into $dest"
  (cd "$dest" && npm_ci --legacy-peer-deps)
  echo "$want" > "$stamp"
fi

# Example extensions whose own npm dependencies are not in the pi package: a copy with
# its shipped package-lock.json, installed with npm ci (sandbox needs
# @anthropic-ai/sandbox-runtime).
examples=${PI_TS_DIR:-target/ts-pi}/node_modules/@mariozechner/pi-coding-agent/examples/extensions
deps=${EXT_ORACLE_EXAMPLES_DEPS:-target/ext-oracle/examples-deps}
for ex in sandbox; do
  if [ ! -d "$examples/$ex" ]; then
    echo "install-third-party: $examples/$ex missing (install the TypeScript pi first)" >&2
    exit 1
  fi
  if [ ! -d "$deps/$ex/node_modules" ]; then
    rm -rf "${deps:?}/$ex"
    mkdir -p "$deps"
    cp -r "$examples/$ex" "$deps/$ex"
    echo "install-third-party: npm ci for the $ex example in $deps/$ex"
    (cd "$deps/$ex" && npm_ci)
  fi
done
