#!/usr/bin/env bash
# Installs the TypeScript pi 1.5.2 into target/ts-pi-15 once and prints its wrapper's path
# (nothing when npm is missing or fails, so the tests that need it skip themselves).
set -euo pipefail
cd "$(dirname "$0")/.."
exec scripts/install-ts-pi-bundle.sh 1.5.2 "$PWD/target/ts-pi-15"
