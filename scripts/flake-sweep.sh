#!/usr/bin/env bash
# Flake sweep: runs test binaries many times in a row while busy loops keep every core
# loaded, and prints how many runs of each passed. A test that waits on time, ports,
# processes or other nodes must pass every run here before it lands.
#
#   scripts/flake-sweep.sh [-n RUNS] [--no-load] [--features F] PACKAGE:TEST ...
#   scripts/flake-sweep.sh -n 20 pi-gateway:openclaw_client pi-coding-agent:mcp_servers
#   scripts/flake-sweep.sh -n 20 ext-oracle:trigger-compact     (one ext-oracle scenario)
#
# Each binary is built once (`cargo test --no-run`) and then run directly, from its
# package's folder as cargo runs it. The log of every failed run is kept in
# target/flake-sweep/<test>-<run>.log; the table goes to stdout and to
# target/flake-sweep/table.txt. The exit code is 1 when any run failed.
# The environment passes through (PI_TEST_REQUIRE_*, PI_TS15, …).
set -euo pipefail
cd "$(dirname "$0")/.."

runs=20
load=1
features=()
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    -n) runs="$2"; shift 2 ;;
    --no-load) load=0; shift ;;
    --features) features=(--features "$2"); shift 2 ;;
    -h | --help) sed -n '2,14p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || { echo "flake-sweep: name at least one PACKAGE:TEST" >&2; exit 2; }

out=target/flake-sweep
mkdir -p "$out"

# The binary of PACKAGE:TEST (built now) and the folder it runs in.
binary_of() {
  local package="$1" test="$2"
  cargo test -q -p "$package" "${features[@]}" --test "$test" --no-run --message-format=json 2>/dev/null |
    python3 -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == sys.argv[1]:
        print(m["executable"]); print(m["manifest_path"].rsplit("/", 1)[0])
' "$test"
}

loaders=()
stop_load() {
  for pid in "${loaders[@]}"; do kill "$pid" 2>/dev/null || true; done
}
trap stop_load EXIT

# Build everything first, so that building is not what the runs measure.
declare -A exe dir
for target in "${targets[@]}"; do
  package="${target%%:*}" test="${target#*:}"
  if [ "$package" = ext-oracle ]; then
    continue
  fi
  mapfile -t found < <(binary_of "$package" "$test")
  [ ${#found[@]} -eq 2 ] || { echo "flake-sweep: no test binary for $target" >&2; exit 2; }
  exe[$target]="${found[0]}"
  dir[$target]="${found[1]}"
done

if [ "$load" = 1 ]; then
  for _ in $(seq "$(nproc)"); do
    (while :; do :; done) &
    loaders+=($!)
  done
fi

failed=0
: >"$out/table.txt"
for target in "${targets[@]}"; do
  package="${target%%:*}" test="${target#*:}"
  passed=0
  started=$(date +%s)
  for run in $(seq "$runs"); do
    log="$out/${test//\//_}-$run.log"
    if [ "$package" = ext-oracle ]; then
      command=(scripts/ext-oracle.sh "$test")
      where=.
    else
      command=("${exe[$target]}")
      where="${dir[$target]}"
    fi
    if (cd "$where" && "${command[@]}") >"$log" 2>&1; then
      passed=$((passed + 1))
      rm -f "$log"
    else
      failed=1
      echo "flake-sweep: $target run $run failed (log: $log)" >&2
    fi
  done
  line="$(printf '%-45s %3d/%d  %5ds' "$target" "$passed" "$runs" "$(($(date +%s) - started))")"
  echo "$line" | tee -a "$out/table.txt"
done
exit "$failed"
