#!/usr/bin/env bash
# Refreshes crates/ai/src/models/catalog.json, the built-in model catalog (ids, context
# windows, max tokens, $/M-token costs, thinking level maps, compat flags, input limits),
# from the TypeScript pi-ai package `@earendil-works/pi-ai`, which generates its catalog from
# models.dev and the providers' model lists.
#
# Usage: scripts/refresh-models.sh [pi-ai version]     (default 1.6.0, the release ours matches)
#
# Needs: npm and node >= 20.10 (any node that runs npm), tar, and the npm registry.
#
# Why `npm pack` and not `npm install`: pi-ai 1.6 declares node >= 22.19 and depends on
# @earendil-works siblings the registry mirror may lack, so npm cannot resolve its tree. The
# catalog needs none of that: `dist/models.generated.js` only imports the per-provider
# `dist/providers/*.models.js`, which read `dist/providers/data/*.json` (import attributes,
# node >= 20.10) through the pure `dist/model-catalog.js`. So the tarball alone is fetched
# (its integrity checked for a pinned version), unpacked, and that module imported with the
# system node: the catalog is what pi-ai's own code makes of its data.
#
# Kept: the chat models of `MODELS` (`type: "chat"`), provider by provider in pi-ai's order,
# each model with every field as pi-ai writes it. Left out: `IMAGE_MODELS` and
# `CLASSIFIER_MODELS` (pi-rs has no image-generation or classifier API yet).
set -euo pipefail
version="${1:-1.6.0}"
package=@earendil-works/pi-ai
case "$version" in
  1.6.0) integrity='sha512-9hL+eygFDEiFp//cydeUfmFsKmEqpmvsNPb10Y1W8+m5K9O+sx1hMStfu6nukrBD5sl6mP4RykCYBBNEgsVLfw==' ;;
  *) integrity='' ;;
esac
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/crates/ai/src/models/catalog.json"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"

command -v npm >/dev/null || { echo "refresh-models.sh: npm is needed" >&2; exit 1; }
node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=10)?0:1)' \
  || { echo "refresh-models.sh: node >= 20.10 is needed (import attributes)" >&2; exit 1; }

npm pack --silent "${package}@${version}" --pack-destination "$work" >/dev/null
tarball="$(ls "$work"/*.tgz)"
if [ -n "$integrity" ]; then
  got="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)"
  [ "$got" = "$integrity" ] || { echo "refresh-models.sh: $tarball has integrity $got, expected $integrity" >&2; exit 1; }
else
  echo "refresh-models.sh: no pinned integrity for ${package}@${version}; using it unchecked" >&2
fi
tar -xzf "$tarball"

cat > dump.mjs <<'JS'
// Every chat model of pi-ai's MODELS, provider by provider, as pi-ai's own code builds them.
const { MODELS } = await import(new URL("./package/dist/models.generated.js", import.meta.url));
const out = {};
for (const [provider, models] of Object.entries(MODELS)) {
  // A provider with no chat model (typesafe serves classifiers only) stays, empty, as in MODELS.
  out[provider] = Object.values(models).filter((model) => (model.type ?? "chat") === "chat");
}
process.stdout.write(JSON.stringify(out, null, 1) + "\n");
JS
node dump.mjs > "$work/catalog.json"
mv "$work/catalog.json" "$out"
count=$(node -e 'const c=require(process.argv[1]);let n=0;for(const p in c)n+=c[p].length;console.log(Object.keys(c).length+" providers, "+n+" models")' "$out")
echo "catalog.json refreshed from ${package}@${version}: ${count}"
