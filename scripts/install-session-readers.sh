#!/usr/bin/env bash
# Installs two programs that read pi's session files, pinned, from npm, into
# target/session-readers once: @psg2/pi-transcript (HTML transcripts) and @ccusage/pi
# (token usage). The session_readers tests run them on ours and on pi 1.6.0's sessions.
# Fails when npm cannot install them.
set -euo pipefail
cd "$(dirname "$0")/.."

transcript=2.2.1
ccusage=18.0.11
dir=target/session-readers
marker="$dir/.installed-$transcript-$ccusage"

if [ -f "$marker" ]; then
  exit 0
fi
mkdir -p "$dir"
echo "install-session-readers: installing @psg2/pi-transcript $transcript and @ccusage/pi $ccusage into $dir"
(cd "$dir" && npm install --no-audit --no-fund --loglevel=error \
  "@psg2/pi-transcript@$transcript" "@ccusage/pi@$ccusage" >/dev/null)
touch "$marker"
