#!/usr/bin/env bash
# Installs the real MCP servers the MCP tests run (pinned versions from npm) into
# target/mcp-servers once: @modelcontextprotocol/server-everything (every protocol feature:
# tools, progress, resources, prompts, list changes; stdio and streamable HTTP) and
# @modelcontextprotocol/server-filesystem. Fails when npm cannot install them.
set -euo pipefail
cd "$(dirname "$0")/.."

everything=2026.8.31
filesystem=2026.8.31
dir=target/mcp-servers
marker="$dir/.installed-$everything-$filesystem"

if [ -f "$marker" ]; then
  exit 0
fi
mkdir -p "$dir"
echo "install-mcp-servers: installing server-everything $everything and server-filesystem $filesystem into $dir"
(cd "$dir" && npm install --no-audit --no-fund --loglevel=error \
  "@modelcontextprotocol/server-everything@$everything" \
  "@modelcontextprotocol/server-filesystem@$filesystem" >/dev/null)
touch "$marker"
