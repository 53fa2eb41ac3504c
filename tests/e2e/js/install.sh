#!/usr/bin/env bash
# Install the pinned npm clients (MCP Inspector CLI, TypeScript SDK) into tests/e2e/js/node_modules.
# Idempotent: does nothing when package.json has not changed since the last install.
set -euo pipefail
cd "$(dirname "$0")"
stamp=node_modules/.installed-$(sha256sum package.json | cut -c1-16)
if [ -f "$stamp" ]; then
  exit 0
fi
npm install --no-audit --no-fund --no-save --loglevel=error >&2
rm -f node_modules/.installed-*
touch "$stamp"
