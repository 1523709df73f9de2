#!/usr/bin/env bash
# Rewrites the request-parity fixtures (crates/coding-agent/tests/fixtures/request_parity_16/)
# from pi 1.6.0: installs it into target/ts-pi-16 when missing, then runs the scenarios of
# crates/coding-agent/tests/request_parity/ through it against the capturing mock server
# and stores the normalized requests, one file per wire API, and the catalog models' runs
# of catalog_requests_16.rs (catalog-*.json), the ledger rows of request_rows_16.rs
# (rows.json) and provider_rows_16.rs (provider-rows.json), and the mid-conversation
# changes of request_midconvo_16.rs (midconvo.json). Then compare:
#   cargo test -p pi-coding-agent --test request_parity_16 --test catalog_requests_16 \
#     --test request_rows_16 --test provider_rows_16 --test request_midconvo_16
# Arguments are passed to the test binaries (e.g. a test name to refresh one API only).
set -euo pipefail
cd "$(dirname "$0")/.."
ts16="${PI_TS16:-$(scripts/install-ts-pi-16.sh)}"
if [ -z "$ts16" ]; then
  echo "refresh-request-parity: pi 1.6.0 could not be installed (npm missing or unreachable)" >&2
  exit 1
fi
PI_TS16="$ts16" PI_REQUEST_PARITY_REFRESH=1 \
  cargo test -p pi-coding-agent --test request_parity_16 --test catalog_requests_16 \
    --test request_rows_16 --test provider_rows_16 --test request_midconvo_16 -- "$@"
git status --short crates/coding-agent/tests/fixtures/request_parity_16/
