#!/usr/bin/env bash
# Copies pi 1.6.0's examples/extensions (from the package scripts/install-ts-pi-16.sh
# installed) to target/ext-oracle/examples-16, which `scripts/ext-oracle.sh --live16`
# loads on both sides as `examples:NAME`, and installs the npm dependencies of the
# examples that ship a package-lock.json (with-deps: ms, custom-provider-anthropic:
# @anthropic-ai/sdk) with `npm ci`, as install-third-party.sh does for 0.73.1's sandbox
# example. pi 1.6.0 is a bundle with no node_modules of its own, so nothing else
# provides them. Not gondolin: its lock pins @earendil-works/gondolin 0.14.0, which the
# npm registry does not have (404; 0.12.0 is its newest), and the VM needs QEMU and
# node 23.6+ anyway; the gondolin scenario checks that both pis report the failed import.
# Skips the work when the copy is from the same package (a stamp with the hash of the
# examples' package-lock.json files and the package version).
#   tests/ext-oracle/install-examples-16.sh [PKG_DIR]   (default target/ts-pi-16/pi-coding-agent)
set -euo pipefail
cd "$(dirname "$0")/../.."

pkg=${1:-${PI_TS16_PKG:-target/ts-pi-16/pi-coding-agent}}
src=$pkg/examples/extensions
dest=${EXT_ORACLE_EXAMPLES16:-target/ext-oracle/examples-16}
if [ ! -d "$src" ]; then
  echo "install-examples-16: $src missing (run scripts/install-ts-pi-16.sh first)" >&2
  exit 1
fi

npm_ci() {
  local attempt
  for attempt in 1 2 3; do
    if npm ci --no-audit --no-fund --loglevel=error "$@"; then
      return 0
    fi
    echo "install-examples-16: npm ci failed (attempt $attempt of 3) in $(pwd)" >&2
    rm -rf node_modules
    sleep $((attempt * 5))
  done
  return 1
}

want=$( (grep -h '"version"' "$pkg/package.json" | head -1; cd "$src" && find . -name package-lock.json -not -path '*/node_modules/*' | sort | xargs sha256sum) | sha256sum | cut -d' ' -f1)
stamp="$dest/.installed.sha256"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "install-examples-16: pi 1.6.0's examples up to date in $dest"
  exit 0
fi
rm -rf "$dest"
mkdir -p "$(dirname "$dest")"
cp -r "$src" "$dest"
for lock in $(cd "$dest" && find . -name package-lock.json -not -path '*/node_modules/*' | sort); do
  dir=$(dirname "$lock")
  [ "$dir" = ./gondolin ] && continue
  echo "install-examples-16: npm ci for the ${dir#./} example in $dest/${dir#./}"
  (cd "$dest/$dir" && npm_ci --ignore-scripts)
done
echo "$want" > "$stamp"
