#!/usr/bin/env bash
# Installs the TypeScript pi 1.6.0, the newest, into target/ts-pi-16 once and prints its
# wrapper's path (nothing when npm is missing or fails, so the tests that need it skip
# themselves). Tests comparing with it read the path from PI_TS16.
set -euo pipefail
cd "$(dirname "$0")/.."
exec scripts/install-ts-pi-bundle.sh 1.6.0 "$PWD/target/ts-pi-16"
