#!/usr/bin/env bash
# Installs the locked npm packages of every Node test suite (tests/npm, tests/agents,
# tests/structured, tests/dashboard), so that the test run itself never reaches the network. Quick when they are
# already installed from the current lock file. --prefer-offline takes npm's cache first, so a
# machine that installed once can install again without the registry.
set -euo pipefail
cd "$(dirname "$0")/.."
for dir in tests/npm tests/agents tests/structured tests/dashboard; do
  if cmp -s "$dir/package-lock.json" "$dir/node_modules/.baton-installed-lock" 2>/dev/null; then
    continue
  fi
  echo "==> npm ci in $dir"
  (cd "$dir" && npm ci --prefer-offline --no-audit --no-fund --loglevel=error)
  cp "$dir/package-lock.json" "$dir/node_modules/.baton-installed-lock"
done
