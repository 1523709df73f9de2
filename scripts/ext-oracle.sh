#!/usr/bin/env bash
# Extension oracle: runs the same scripted RPC session (`pi --mode rpc -e <extension>`)
# per extension against the TypeScript pi 0.73.1 and against ours, and compares the
# normalized event / extension_ui_request streams (tests/ext-oracle/README.md).
#
#   scripts/ext-oracle.sh                  golden files (recorded from the TS pi) vs ours
#   scripts/ext-oracle.sh --live           the TS pi, run live, vs ours
#   scripts/ext-oracle.sh --live16         pi 1.6.0, run live, vs ours, both on 1.6.0's
#                                          examples (allowlist known-failures-16.txt)
#   scripts/ext-oracle.sh hello pirate     only these scenarios
#   scripts/ext-oracle.sh --record         re-record the golden files from the TS pi
#   scripts/ext-oracle.sh --determinism    the TS pi twice per scenario, and vs golden
# Other arguments go to tests/ext-oracle/compare.py (see its --help).
#
# Installs what is missing: the TypeScript pi (target/ts-pi, as scripts/ts-compat.sh
# does; its package also holds the example extensions), the pinned third-party
# extensions (target/ext-oracle/npm), and builds mock-llm and pi when their binaries
# are missing (EXT_ORACLE_BUILD=1 builds them always). Needs node 20+, npm, python3.
# The exit code is compare.py's: non-zero when a scenario outside
# tests/ext-oracle/known-failures.txt (known-failures-16.txt with --live16) fails.
set -euo pipefail
cd "$(dirname "$0")/.."

version=0.73.1
ts_dir=target/ts-pi
cli="$ts_dir/node_modules/@mariozechner/pi-coding-agent/dist/cli.js"

for tool in node npm python3 cargo; do
  command -v "$tool" >/dev/null || { echo "ext-oracle: $tool not found" >&2; exit 1; }
done

if [ ! -f "$cli" ]; then
  mkdir -p "$ts_dir"
  echo "ext-oracle: installing the TypeScript pi $version into $ts_dir"
  (cd "$ts_dir" && npm install --no-audit --no-fund --loglevel=error \
      "@mariozechner/pi-coding-agent@$version" >/dev/null)
fi

bash tests/ext-oracle/install-third-party.sh

# pi 1.6.0 and a copy of its examples with their npm dependencies, for --live16
if [ "${1:-}" = --live16 ]; then
  PI_TS16="${PI_TS16:-$(scripts/install-ts-pi-16.sh)}"
  test -n "$PI_TS16" || { echo "ext-oracle: the TypeScript pi 1.6.0 did not install" >&2; exit 1; }
  export PI_TS16
  bash tests/ext-oracle/install-examples-16.sh "$(dirname "$(dirname "$PI_TS16")")/pi-coding-agent"
fi

# the binaries are where cargo puts them (CARGO_TARGET_DIR), unless MOCK_LLM / PI_OURS say
bin="$(realpath -m "${CARGO_TARGET_DIR:-target}")/debug"
export MOCK_LLM="${MOCK_LLM:-$bin/mock-llm}" PI_OURS="${PI_OURS:-$bin/pi}"
if [ "${EXT_ORACLE_BUILD:-0}" = 1 ] || [ ! -x "$MOCK_LLM" ]; then
  cargo build -q -p mock-llm --bin mock-llm
fi

args=()
case "${1:-}" in
  --live) shift; args=(--a ts --b ours) ;;
  --live16) shift; args=(--pi16) ;;
  --record) shift; args=(--record --twice) ;;
  --determinism) shift; args=(--a ts --b golden --twice) ;;
esac

needs_ours=1
for a in "${args[@]}" "$@"; do
  case "$a" in --record) needs_ours=0 ;; esac
done
if [ "${#args[@]}" -gt 0 ] && [ "${args[0]}" = "--a" ] && [ "${args[3]:-}" = golden ]; then
  needs_ours=0
fi
if [ "$needs_ours" = 1 ] && { [ "${EXT_ORACLE_BUILD:-0}" = 1 ] || [ ! -x "$PI_OURS" ]; }; then
  cargo build -q -p pi-coding-agent --bin pi
fi

exec python3 tests/ext-oracle/compare.py "${args[@]}" "$@"
