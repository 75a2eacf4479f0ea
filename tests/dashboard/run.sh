#!/usr/bin/env bash
# The live view (/dashboard) in a real browser: Debian's headless Chromium, driven by
# puppeteer-core, loads the page from a running `baton serve` while two streams decode and a
# long prompt prefills beside them, and checks what the page shows (states, the timeline's
# rows in every step of the prefill, the fairness figure, a phone-sized layout). Screenshots go
# to $BATON_DASHBOARD_OUT (default: a scratch folder, removed afterwards).
# Usage: bash tests/dashboard/run.sh <path to the baton binary>
# Needs the locked packages in tests/dashboard/node_modules (scripts/install-node-deps.sh) and
# chromium (scripts/install-deps.sh installs Debian's package). The model is a random-weight
# `baton gguf synth` llama, big enough that a 3,000-token prefill takes several steps.
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: bash tests/dashboard/run.sh <baton binary>" >&2
  exit 2
fi
BATON="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
HERE="$(cd "$(dirname "$0")" && pwd)"

NODE_SUITE=dashboard
source "$HERE/../support/node_suite.sh"
node_suite_require_node

CHROMIUM="${BATON_CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}"
[ -n "$CHROMIUM" ] ||
  node_suite_unavailable "chromium not found (bash scripts/install-deps.sh installs Debian's package)"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/baton-dashboard.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
OUT="${BATON_DASHBOARD_OUT:-$WORK}"
mkdir -p "$OUT"

cd "$HERE"
node_suite_require_modules "$HERE"

MODEL="$WORK/dashboard.gguf"
"$BATON" gguf synth "$MODEL" --arch llama --byte-vocab --embd 768 --layers 12 --heads 12 \
  --kv-heads 4 --ff 2048 --ctx 4096 --type q8_0 >/dev/null

BATON_BIN="$BATON" BATON_DASHBOARD_MODEL="$MODEL" BATON_CHROMIUM="$CHROMIUM" \
  BATON_DASHBOARD_OUT="$OUT" \
  node_suite_run --test-concurrency=1 --test-timeout=300000 "$HERE"/*.test.mjs
