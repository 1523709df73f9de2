#!/usr/bin/env bash
# Fuzz smoke run: builds every cargo-fuzz target in fuzz/ and runs each for a short fixed
# time (FUZZ_SECONDS, default 20) from the seeded corpus; any crash fails, with the target's
# log tail and the crashing input's path. Installs the nightly toolchain and cargo-fuzz when
# missing. Longer runs: README.md, "Fuzzing".
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-20}
started=$(date +%s)

if ! cargo +nightly --version >/dev/null 2>&1; then
  rustup toolchain install nightly --profile minimal
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked
fi

fuzz/seed.sh >/dev/null
# No sanitizer: the crates are safe Rust (unsafe is forbidden), and the panics and failed
# assertions the targets look for need none; debug assertions and overflow checks are on.
cargo +nightly fuzz build -s none

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
failed=()
for target in $(cargo +nightly fuzz list); do
  echo "== $target (${seconds}s)"
  if cargo +nightly fuzz run -s none "$target" -- -max_total_time="$seconds" -max_len=4096 \
    >"$logs/$target.log" 2>&1; then
    grep -E '^#[0-9]+' "$logs/$target.log" | tail -n 1 || true
  else
    tail -n 40 "$logs/$target.log"
    failed+=("$target")
  fi
done

echo "fuzz smoke: $(($(date +%s) - started))s"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz targets that failed: ${failed[*]} (inputs in fuzz/artifacts/<target>/)"
  exit 1
fi
