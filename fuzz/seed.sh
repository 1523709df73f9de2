#!/usr/bin/env bash
# Fills fuzz/corpus/<target>/ with starting inputs: the hand-picked seeds in fuzz/seeds/
# (provider bodies rendered by mock-llm's wire formats, edge cases), the repository's test
# fixtures (session files, RPC input, recorded SSE), and the reference traces in
# ../shared/reference when that checkout is there. Existing corpus files are kept, so a
# corpus grown by earlier runs stays. Usage: fuzz/seed.sh [target...]
set -euo pipefail
cd "$(dirname "$0")"
root=..

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for file in fuzz_targets/*.rs; do
    targets+=("$(basename "$file" .rs)")
  done
fi

# Copies files (a missing one is skipped) into corpus/$1.
add() {
  local target=$1
  shift
  local file
  for file in "$@"; do
    [ -f "$file" ] || continue
    cp "$file" "corpus/$target/$(basename "$file")"
  done
}

# Each line of the files as its own input (at most 400 a file, blank lines left out).
add_lines() {
  local target=$1
  shift
  local file n line
  for file in "$@"; do
    [ -f "$file" ] || continue
    n=0
    while IFS= read -r line && [ $n -lt 400 ]; do
      [ -n "$line" ] || continue
      n=$((n + 1))
      printf '%s' "$line" >"corpus/$target/$(basename "$file").line$n"
    done <"$file"
  done
}

shopt -s nullglob
sessions=("$root"/crates/*/tests/fixtures/*session*.jsonl "$root"/../shared/reference/traces/*session*.jsonl)
rpc_inputs=("$root"/crates/*/tests/fixtures/*rpc-input*.jsonl "$root"/../shared/reference/traces/*rpc*input*.jsonl)
recorded_sse=("$root"/crates/*/tests/fixtures/*.sse)

for target in "${targets[@]}"; do
  mkdir -p "corpus/$target"
  add "$target" seeds/"$target"/*
  case "$target" in
    sse_frames)
      for provider in seeds/*_stream; do
        [ "$(basename "$provider")" = bedrock_stream ] || add "$target" "$provider"/*
      done
      add "$target" "${recorded_sse[@]}"
      ;;
    openai_completions_stream) add "$target" "${recorded_sse[@]}" ;;
    session_file) add "$target" "${sessions[@]}" ;;
    session_line | partial_json) add_lines "$target" "${sessions[@]}" ;;
    rpc_command) add_lines "$target" "${rpc_inputs[@]}" ;;
  esac
  echo "corpus/$target: $(find "corpus/$target" -type f | wc -l) inputs"
done
