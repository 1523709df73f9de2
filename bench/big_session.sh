#!/usr/bin/env bash
# Big sessions, ours against the TypeScript pi 1.5.2 (scripts/install-ts-pi-15.sh), same
# mock-llm, runs alternating (TS, ours, TS, ours …); medians of wall time and peak RSS.
#
#   bench/big_session.sh [runs=5] [what…]
#   what: resume52   resume a 52 MB / 20,000-message session and run one turn (default)
#         load52     the same session: load only (RPC get_state, then quit; ours only)
#         gb         a 1 GB session (text), open + one turn
#         gbimages   a 1 GB session heavy with base64 images, open + one turn
#
# PI_BENCH_API picks the wire the mock model speaks: openai-completions (default),
# anthropic-messages or openai-responses.
#
# Sessions are made by bench/gen_session.py under target/bench-big (kept between runs);
# every run gets a fresh copy, so each turn appends to the same starting file. Automatic
# compaction is off, as in the TypeScript pi's own big-session reports: the turn sends the
# whole transcript. A TypeScript run that fails (out of memory) is reported as such.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
runs="${1:-5}"
shift || true
what=("$@")
[ ${#what[@]} -eq 0 ] && what=(resume52)
work="${PI_BENCH_DIR:-$root/target/bench-big}"
port="${PI_BENCH_PORT:-18941}"
mkdir -p "$work/agent" "$work/work" "$work/sessions"

(cd "$root" && cargo build -q --release -p pi-coding-agent -p mock-llm)
ours="$root/target/release/pi"
theirs="${PI_TS15:-$("$root/scripts/install-ts-pi-15.sh" || true)}"
[ -n "$theirs" ] || echo "note: the TypeScript pi 1.5.2 is not installed; ours only" >&2

api="${PI_BENCH_API:-openai-completions}"
base="http://127.0.0.1:$port/v1"
[ "$api" = anthropic-messages ] && base="http://127.0.0.1:$port"
cat > "$work/agent/models.json" <<JSON
{"providers":{"mock":{"baseUrl":"$base","api":"$api","apiKey":"mock-key",
 "models":[{"id":"mock-model","name":"Mock Model","contextWindow":128000,"maxTokens":16384}]}}}
JSON
echo '{"defaultProvider":"mock","defaultModel":"mock-model","compaction":{"enabled":false}}' \
  > "$work/agent/settings.json"

"$root/target/release/mock-llm" --port "$port" >/dev/null 2>&1 &
mock=$!
trap 'kill $mock 2>/dev/null || true; rm -f "$work/sessions/run.jsonl"' EXIT
sleep 0.3

session_for() { # kind -> path of the pristine session
  local kind=$1 file="$work/sessions/$1.jsonl"
  if [ ! -f "$file" ]; then
    case "$kind" in
      resume52|load52) python3 "$root/bench/gen_session.py" "$file" "$work/work" --messages 20000 --tool-bytes 8000 >&2 ;;
      gb) python3 "$root/bench/gen_session.py" "$file" "$work/work" --target-mb 1024 --tool-bytes 8000 >&2 ;;
      gbimages) python3 "$root/bench/gen_session.py" "$file" "$work/work" --target-mb 1024 --tool-bytes 2000 --image-kb 400 --image-every 2 >&2 ;;
    esac
  fi
  echo "$file"
}

measure() { # label pristine command...
  local label=$1 pristine=$2; shift 2
  cp "$pristine" "$work/sessions/run.jsonl"
  local status=0
  (cd "$work/work" && HOME="$work" PI_CODING_AGENT_DIR="$work/agent" PI_OFFLINE=1 \
    /usr/bin/time -f "%e %M" -o "$work/time.out" "$@" >"$work/out.txt" 2>"$work/err.txt") || status=$?
  if [ "$status" -ne 0 ]; then
    echo "$label FAILED(exit $status: $(grep -m1 -iE 'heap|memory|error|invalid' "$work/err.txt" | cut -c1-80))"
  else
    echo "$label $(tail -1 "$work/time.out")"
  fi
}

rpc_load() { # pi binary: load the session over RPC, ask for the state, quit
  printf '{"id":"1","type":"get_state"}\n' | "$1" --mode rpc --session "$work/sessions/run.jsonl" | head -c 200 >/dev/null
}

results="$work/results.txt"
: > "$results"
for kind in "${what[@]}"; do
  pristine="$(session_for "$kind")"
  size=$(du -m "$pristine" | cut -f1)
  echo "== $kind ($size MB)" >&2
  for _ in $(seq "$runs"); do
    case "$kind" in
      load52)
        export -f rpc_load
        measure "$kind rust" "$pristine" bash -c "rpc_load '$ours'" ;;
      *)
        if [ -n "$theirs" ]; then
          measure "$kind ts-1.5.2" "$pristine" "$theirs" --session "$work/sessions/run.jsonl" -p hi
        fi
        measure "$kind rust" "$pristine" "$ours" --session "$work/sessions/run.jsonl" -p hi ;;
    esac
  done | tee -a "$results" >&2
done

python3 "$root/bench/medians.py" "$results" 2
