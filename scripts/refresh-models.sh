#!/usr/bin/env bash
# Refreshes crates/ai/src/models/catalog.json, the built-in model catalog (ids, context
# windows, max tokens, $/M-token costs, compat flags), from the TypeScript pi-ai package,
# which regenerates its catalog from models.dev and the providers' model lists.
#
# Usage: scripts/refresh-models.sh [pi-ai version]      (needs node >= 20 and npm)
set -euo pipefail
version="${1:-latest}"
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
npm init -y >/dev/null
npm install --no-audit --no-fund --ignore-scripts "@mariozechner/pi-ai@${version}" >/dev/null
cat > dump.mjs <<'JS'
import { getProviders, getModels } from "@mariozechner/pi-ai";
const out = {};
for (const provider of getProviders()) out[provider] = getModels(provider);
process.stdout.write(JSON.stringify(out, null, 1) + "\n");
JS
node dump.mjs > "$root/crates/ai/src/models/catalog.json"
count=$(node -e 'const c=require(process.argv[1]);let n=0;for(const p in c)n+=c[p].length;console.log(Object.keys(c).length+" providers, "+n+" models")' "$root/crates/ai/src/models/catalog.json")
echo "catalog.json refreshed from @mariozechner/pi-ai@${version}: ${count}"
