#!/usr/bin/env bash
# Whole-process comparison of our `pi` and the TypeScript pi 0.73.1 (installed from npm by
# this script) against the same mock-llm: `--version`, `-p "read hello.txt"` (2 LLM calls,
# 1 tool call, writes a session), and resuming a ~52 MB / 20,000-message session with one
# more turn. Runs alternate (TS, ours, TS, ours …); medians of wall time and peak RSS.
#
# usage: bench/pi_compare.sh [runs=5]      (needs node >= 20, npm, python3, /usr/bin/time)
# The big session is made by ../shared/reference/gen_session.py when present.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
runs="${1:-5}"
work="${PI_BENCH_DIR:-$root/target/bench-pi}"
port="${PI_BENCH_PORT:-18932}"
mkdir -p "$work"
if [ ! -x "$work/node_modules/.bin/pi" ]; then
  (cd "$work" && npm init -y >/dev/null && npm install --no-audit --no-fund --ignore-scripts @mariozechner/pi-coding-agent@0.73.1 >/dev/null)
fi
(cd "$root" && cargo build -q --release -p pi-coding-agent -p mock-llm)
ours="$root/target/release/pi"
theirs="$work/node_modules/.bin/pi"

rm -rf "$work/agent" "$work/agent-big" "$work/work" "$work/big"
mkdir -p "$work/agent" "$work/work" "$work/big"
printf 'Hello from the anchor test file!\nSecond line.\n' > "$work/work/hello.txt"
cat > "$work/agent/models.json" <<JSON
{"providers":{"mock":{"baseUrl":"http://127.0.0.1:$port/v1","api":"openai-completions","apiKey":"mock-key",
 "models":[{"id":"mock-model","name":"Mock Model","contextWindow":128000,"maxTokens":16384}]}}}
JSON
echo '{"defaultProvider":"mock","defaultModel":"mock-model"}' > "$work/agent/settings.json"
cp -r "$work/agent" "$work/agent-big"
echo '{"defaultProvider":"mock","defaultModel":"mock-model","compaction":{"enabled":false}}' > "$work/agent-big/settings.json"

"$root/target/release/mock-llm" --port "$port" >/dev/null &
mock=$!
trap 'kill $mock 2>/dev/null || true' EXIT
sleep 0.3

gen="$root/../shared/reference/gen_session.py"
big=""
if [ -f "$gen" ]; then
  python3 "$gen" "$work/big/big-session.jsonl" "$work/work" 20000 8000 >/dev/null
  cp "$work/big/big-session.jsonl" "$work/big/pristine.jsonl"
  big="$work/big/big-session.jsonl"
fi

measure() { # label agent-dir command...
  local label=$1 agent=$2; shift 2
  (cd "$work/work" && HOME="$work" PI_CODING_AGENT_DIR="$agent" PI_OFFLINE=1 /usr/bin/time -f "%e %M" "$@" </dev/null >/dev/null 2>"$work/time.err") || true
  echo "$label $(tail -1 "$work/time.err")"
}

{
  for i in $(seq "$runs"); do
    measure "version ts" "$work/agent" "$theirs" --version
    measure "version rust" "$work/agent" "$ours" --version
    measure "read ts" "$work/agent" "$theirs" -p "read hello.txt"
    measure "read rust" "$work/agent" "$ours" -p "read hello.txt"
    if [ -n "$big" ]; then
      cp "$work/big/pristine.jsonl" "$big"; measure "resume-52MB ts" "$work/agent-big" "$theirs" --session "$big" -p hi
      cp "$work/big/pristine.jsonl" "$big"; measure "resume-52MB rust" "$work/agent-big" "$ours" --session "$big" -p hi
    fi
  done
} | python3 -c "
import sys, statistics, collections
rows = collections.defaultdict(list)
for line in sys.stdin:
    parts = line.split()
    if len(parts) == 4:
        rows[(parts[0], parts[1])].append((float(parts[2]), int(parts[3])))
for (case, impl), values in sorted(rows.items()):
    wall = statistics.median(v[0] for v in values)
    rss = statistics.median(v[1] for v in values) / 1024
    print(f'{case:12} {impl:>4}: wall {wall:6.3f} s   peak RSS {rss:7.1f} MiB   (n={len(values)})')
"
