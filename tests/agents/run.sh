#!/usr/bin/env bash
# Agent clients (openai chat and Responses, Anthropic SDK, Vercel AI SDK, LangChain JS, OpenCode,
# Codex CLI, Claude Code) doing tool calls against baton's HTTP layer, chat templates and tool-call
# parsers, over baton_scripted_server (a scripted backend instead of a model, so every tool call
# is deterministic).
# Usage: bash tests/agents/run.sh <baton_scripted_server> <baton>
# Installs the locked packages into tests/agents/node_modules (git-ignored), picks the
# vocabulary and chat template, then runs `node --test`; each scenario starts its own server
# with its own script (helpers.mjs) and stops it.
#  - With ../shared: a byte-level BPE vocabulary (GPT-2's) plus Qwen's added tokens
#    (<|im_start|>, <tool_call>, <think>, ...) and the Qwen 2.5 chat template.
#  - Without: a synthetic byte vocabulary from `baton gguf synth --byte-vocab` (markup is plain
#    text, many tokens long) and tests/agents/chatml_hermes.jinja.
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: bash tests/agents/run.sh <baton_scripted_server> <baton>" >&2
  exit 2
fi
# Without node and npm the tests cannot run: ctest reports them skipped (SKIP_RETURN_CODE 77).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "run.sh: node or npm not found: agent-client tests skipped (bash scripts/install-deps.sh installs them)" >&2
  exit 77
fi
abs() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
SERVER="$(abs "$1")"
BATON="$(abs "$2")"
HERE="$(cd "$(dirname "$0")" && pwd)"
SHARED="${BATON_SHARED_DIR:-$HERE/../../../shared}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/baton-agents.XXXXXX")"
# BATON_AGENTS_KEEP=1 keeps the scenarios' scripts, request logs and the CLIs' projects.
if [ "${BATON_AGENTS_KEEP:-0}" = 1 ]; then
  echo "run.sh: keeping $WORK" >&2
else
  trap 'rm -rf "$WORK"' EXIT
fi

cd "$HERE"
# npm ci again whenever the lock file changed since the last install.
if ! cmp -s package-lock.json node_modules/.baton-installed-lock 2>/dev/null; then
  npm ci --no-audit --no-fund --loglevel=error
  cp package-lock.json node_modules/.baton-installed-lock
fi

VOCAB="$SHARED/models/vocab/ggml-vocab-gpt-2.gguf"
QWEN="$SHARED/chat-templates/Qwen-Qwen2.5-7B-Instruct.json"
if [ -f "$VOCAB" ] && [ -f "$QWEN" ]; then
  FLAVOR=qwen
  MODEL="$VOCAB"
  TEMPLATE="$WORK/qwen2.5.jinja"
  node -e 'const fs=require("fs");fs.writeFileSync(process.argv[2],JSON.parse(fs.readFileSync(process.argv[1])).source)' \
    "$QWEN" "$TEMPLATE"
  # Qwen's added tokens: control ones vanish from decoded text, user-defined ones stay.
  ARGS='["--add-token","control:<|im_start|>","--add-token","control:<|im_end|>",
         "--add-token","user:<tool_call>","--add-token","user:</tool_call>",
         "--add-token","user:<tool_response>","--add-token","user:</tool_response>",
         "--add-token","user:<think>","--add-token","user:</think>","--eot","<|im_end|>"]'
else
  echo "run.sh: $VOCAB or $QWEN not found: synthetic byte vocabulary and" \
       "tests/agents/chatml_hermes.jinja" >&2
  FLAVOR=byte
  MODEL="$WORK/synth.gguf"
  "$BATON" gguf synth "$MODEL" --byte-vocab --layers 1 --embd 64 --heads 2 --kv-heads 1 --ff 64 \
    --ctx 256 >/dev/null
  TEMPLATE="$HERE/chatml_hermes.jinja"
  ARGS='[]'
fi

BATON_SCRIPTED_SERVER="$SERVER" BATON_AGENT_MODEL="$MODEL" BATON_AGENT_TEMPLATE="$TEMPLATE" \
  BATON_AGENT_SERVER_ARGS="$ARGS" BATON_AGENT_FLAVOR="$FLAVOR" BATON_AGENT_WORK="$WORK" \
  node --test --test-concurrency=1 --test-timeout=180000 "$HERE"/*.test.mjs
