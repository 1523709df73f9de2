#!/usr/bin/env bash
# Render `pi --export` HTML in headless Chromium and check the result.
#
# Usage: scripts/html-screenshot.sh [SESSION.jsonl ...]
#
# Exports each session (default: the reference session tests/fixtures/pi-ts-session.jsonl
# and the richer html-export-rich-session.jsonl) to HTML, screenshots it at 1200x1600 in
# each color scheme and dumps its DOM after scripts ran, then scripts/html_check.py checks
# the PNGs and the DOM. Screenshots are copied to target/: html-export.png is the first
# session in the light scheme; the others are html-export[-<session>][-dark].png
# (a leading "html-export-" of the session name is dropped).
#
# Environment:
#   PI_BIN         pi binary to use (default: build target/debug/pi with cargo)
#   CHROMIUM       browser binary (default: chromium; installed with apt-get when missing)
#   HTML_SCHEMES   color schemes to screenshot (default: "light dark")
#   KEEP_TMP=1     keep the work directory (HTML, DOM dumps, browser logs)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
fixtures=$root/crates/coding-agent/tests/fixtures
target_dir=${CARGO_TARGET_DIR:-$root/target}
chromium=${CHROMIUM:-chromium}
schemes=${HTML_SCHEMES:-light dark}
width=1200
height=1600

die() {
    echo "html-screenshot: $*" >&2
    exit 1
}

if [ $# -gt 0 ]; then
    sessions=("$@")
else
    sessions=("$fixtures/pi-ts-session.jsonl" "$fixtures/html-export-rich-session.jsonl")
fi
for i in "${!sessions[@]}"; do
    [ -f "${sessions[$i]}" ] || die "session file not found: ${sessions[$i]}"
    sessions[i]=$(cd "$(dirname "${sessions[$i]}")" && pwd)/$(basename "${sessions[$i]}")
done
command -v python3 >/dev/null || die "python3 is required"

# 1. Chromium.
if ! command -v "$chromium" >/dev/null; then
    [ "$chromium" = chromium ] || die "CHROMIUM=$chromium not found"
    sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null || die "chromium is missing and we are not root (install it: apt-get install chromium)"
        sudo=(sudo)
    fi
    echo "html-screenshot: installing chromium with apt-get…" >&2
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null ||
        die "apt-get update failed"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null ||
        die "apt-get install chromium failed"
    command -v chromium >/dev/null || die "chromium still missing after apt-get install"
fi

# 2. pi.
if [ -z "${PI_BIN:-}" ]; then
    (cd "$root" && cargo build -q -p pi-coding-agent --bin pi) ||
        die "cargo build failed (set PI_BIN to use an existing binary)"
    PI_BIN=$target_dir/debug/pi
fi
[ -x "$PI_BIN" ] || die "pi binary not found or not executable: $PI_BIN"
PI_BIN=$(cd "$(dirname "$PI_BIN")" && pwd)/$(basename "$PI_BIN")

work=$(mktemp -d "${TMPDIR:-/tmp}/pi-html-shot.XXXXXX")
if [ "${KEEP_TMP:-}" = 1 ]; then
    echo "html-screenshot: work directory $work" >&2
else
    trap 'rm -rf "$work"' EXIT
fi

# Runs chromium headless on a fresh profile; extra flags first, the URL last.
run_chromium() {
    local log=$1
    shift
    local profile
    profile=$(mktemp -d "$work/profile.XXXXXX")
    timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic \
        --no-first-run --disable-background-networking --disable-component-update \
        --disable-sync --user-data-dir="$profile" --window-size=$width,$height \
        --hide-scrollbars --enable-logging=stderr --v=0 "$@" 2>"$log"
}

mkdir -p "$target_dir"
status=0
first=1
for session in "${sessions[@]}"; do
    stem=$(basename "$session" .jsonl)
    html=$work/$stem.html
    echo "== $session"
    (cd "$work" && "$PI_BIN" --export "$session" "$html") >"$work/$stem.export.log" 2>&1 || {
        cat "$work/$stem.export.log" >&2
        die "pi --export failed for $session"
    }

    # The DOM after scripts ran (virtual time lets timers and handlers settle).
    dom=$work/$stem.dom
    run_chromium "$work/$stem.dom.log" --virtual-time-budget=5000 --dump-dom "file://$html" >"$dom" || {
        tail -n 20 "$work/$stem.dom.log" >&2
        die "chromium --dump-dom failed for $html"
    }

    for scheme in $schemes; do
        png=$work/$stem-$scheme.png
        flags=(--virtual-time-budget=5000 --run-all-compositor-stages-before-draw)
        [ "$scheme" = dark ] && flags+=(--force-dark-mode)
        run_chromium "$work/$stem-$scheme.log" "${flags[@]}" --screenshot="$png" "file://$html" >/dev/null || {
            tail -n 20 "$work/$stem-$scheme.log" >&2
            die "chromium --screenshot failed for $html ($scheme)"
        }
        [ -s "$png" ] || die "chromium wrote no screenshot for $html ($scheme)"

        name=html-export
        [ "$first" = 1 ] || name+=-${stem#html-export-}
        [ "$scheme" = light ] || name+=-$scheme
        cp "$png" "$target_dir/$name.png"
        echo "-- $scheme: $target_dir/$name.png"
        python3 "$root/scripts/html_check.py" --png "$target_dir/$name.png" --dom "$dom" --session "$session" \
            --html "$html" --console "$work/$stem.dom.log" --width $width --height $height ||
            status=1
    done
    first=0
done

if [ $status -ne 0 ]; then
    echo "html-screenshot: FAILED (see messages above)" >&2
else
    echo "html-screenshot: all checks passed"
fi
exit $status
