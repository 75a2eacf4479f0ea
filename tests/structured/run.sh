#!/usr/bin/env bash
# Structured output (grammar-constrained decoding) end to end: sampled outputs for every schema in
# tests/structured/schemas/ validated with ajv, the other constraint kinds, real clients' typed
# objects (openai, Vercel AI SDK, LangChain JS) and the 400s for bad constraints.
# Usage: bash tests/structured/run.sh <path to the baton binary>
# Installs the locked packages into tests/structured/node_modules (git-ignored) and runs
# `node --test`; each test file starts its own `baton serve` (helpers.mjs) and stops it.
# Models:
#  - random weights: ../shared/models/llama-2-tiny-random.gguf (32,000-token Llama-2
#    vocabulary), else a `baton gguf synth --byte-vocab` model;
#  - stories260K: ../shared/models/stories260K.gguf; its tests skip when it is absent.
# Environment knobs: BATON_ST_SAMPLES (50), BATON_ST_PARALLEL (4), BATON_ST_MAX_TOKENS (1536),
# BATON_SHARED_DIR.
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: bash tests/structured/run.sh <baton binary>" >&2
  exit 2
fi
BATON="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
HERE="$(cd "$(dirname "$0")" && pwd)"
SHARED="${BATON_SHARED_DIR:-$HERE/../../../shared}"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "run.sh: node or npm not found: structured-output tests skipped (bash scripts/install-deps.sh installs them)" >&2
  exit 77
fi

WORK="$(mktemp -d "${TMPDIR:-/tmp}/baton-structured.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

cd "$HERE"
# npm ci again whenever the lock file changed since the last install.
if ! cmp -s package-lock.json node_modules/.baton-installed-lock 2>/dev/null; then
  npm ci --no-audit --no-fund --loglevel=error
  cp package-lock.json node_modules/.baton-installed-lock
fi

if [ -f "$SHARED/models/llama-2-tiny-random.gguf" ]; then
  RANDOM_MODEL="$SHARED/models/llama-2-tiny-random.gguf"
else
  echo "run.sh: $SHARED/models/llama-2-tiny-random.gguf not found: using a synthetic" \
       "byte-vocabulary model with random weights" >&2
  RANDOM_MODEL="$WORK/synth.gguf"
  "$BATON" gguf synth "$RANDOM_MODEL" --byte-vocab --layers 1 --embd 64 --heads 2 --kv-heads 1 \
    --ff 64 --ctx 4096 >/dev/null
fi
STORIES_MODEL=""
if [ -f "$SHARED/models/stories260K.gguf" ]; then
  STORIES_MODEL="$SHARED/models/stories260K.gguf"
else
  echo "run.sh: $SHARED/models/stories260K.gguf not found: its samples are skipped" >&2
fi

BATON_BIN="$BATON" BATON_RANDOM_MODEL="$RANDOM_MODEL" BATON_STORIES_MODEL="$STORIES_MODEL" \
  BATON_ST_WORK="$WORK" \
  node --test --test-concurrency=1 --test-timeout=600000 "$HERE"/*.test.mjs
