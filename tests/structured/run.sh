#!/usr/bin/env bash
# Structured output (grammar-constrained decoding) end to end: sampled outputs for every schema in
# tests/structured/schemas/ validated with ajv, the other constraint kinds, real clients' typed
# objects (openai, Vercel AI SDK, LangChain JS) and the 400s for bad constraints.
# Usage: bash tests/structured/run.sh <path to the baton binary>
# Needs the locked packages in tests/structured/node_modules (scripts/install-node-deps.sh); runs
# `node --test`; each test file starts its own `baton serve` (helpers.mjs) and stops it.
# Models:
#  - random weights: ../shared/models/llama-2-tiny-random.gguf (32,000-token Llama-2
#    vocabulary), else a `baton gguf synth --byte-vocab` model;
#  - stories260K: ../shared/models/stories260K.gguf; its tests skip when it is absent.
# Environment knobs: BATON_ST_SAMPLES (50), BATON_ST_BUDGET_SAMPLES (200 json_schema answers and
# 40 forced calls per family at max_tokens from the shortest output up to 4x it),
# BATON_ST_PARALLEL (4), BATON_ST_MAX_TOKENS (1536), BATON_SHARED_DIR.
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: bash tests/structured/run.sh <baton binary>" >&2
  exit 2
fi
BATON="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
HERE="$(cd "$(dirname "$0")" && pwd)"
SHARED="${BATON_SHARED_DIR:-$HERE/../../../shared}"

NODE_SUITE=structured_output
source "$HERE/../support/node_suite.sh"
# Without node and npm: skipped (ctest's SKIP_RETURN_CODE 77), or failed under a strict run.
node_suite_require_node

WORK="$(mktemp -d "${TMPDIR:-/tmp}/baton-structured.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

cd "$HERE"
node_suite_require_modules "$HERE"

if [ -f "$SHARED/models/llama-2-tiny-random.gguf" ]; then
  RANDOM_MODEL="$SHARED/models/llama-2-tiny-random.gguf"
else
  node_suite_missing_shared "models/llama-2-tiny-random.gguf (using a synthetic byte-vocabulary model)"
  RANDOM_MODEL="$WORK/synth.gguf"
  "$BATON" gguf synth "$RANDOM_MODEL" --byte-vocab --layers 1 --embd 64 --heads 2 --kv-heads 1 \
    --ff 64 --ctx 4096 >/dev/null
fi
STORIES_MODEL=""
if [ -f "$SHARED/models/stories260K.gguf" ]; then
  STORIES_MODEL="$SHARED/models/stories260K.gguf"
else
  node_suite_missing_shared "models/stories260K.gguf (its samples are skipped)"
fi

BATON_BIN="$BATON" BATON_RANDOM_MODEL="$RANDOM_MODEL" BATON_STORIES_MODEL="$STORIES_MODEL" \
  BATON_ST_WORK="$WORK" \
  node_suite_run --test-concurrency=1 --test-timeout=600000 "$HERE"/*.test.mjs
