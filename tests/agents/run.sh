#!/usr/bin/env bash
# Agent clients (openai chat and Responses, Anthropic SDK, Vercel AI SDK, LangChain JS, OpenCode,
# Codex CLI, Claude Code) doing tool calls against baton's HTTP layer, chat templates and tool-call
# parsers, over baton_scripted_server (a scripted backend instead of a model, so every tool call
# is deterministic).
# Usage: bash tests/agents/run.sh <baton_scripted_server> <baton>
# Needs the locked packages in tests/agents/node_modules (scripts/install-node-deps.sh); picks the
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
NODE_SUITE=agent_clients
source "$(dirname "$0")/../support/node_suite.sh"
# Without node and npm: skipped (ctest's SKIP_RETURN_CODE 77), or failed under a strict run.
node_suite_require_node
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
node_suite_require_modules "$HERE"

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
  node_suite_missing_shared "$VOCAB or $QWEN (using a synthetic byte vocabulary)"
  FLAVOR=byte
  MODEL="$WORK/synth.gguf"
  "$BATON" gguf synth "$MODEL" --byte-vocab --layers 1 --embd 64 --heads 2 --kv-heads 1 --ff 64 \
    --ctx 256 >/dev/null
  TEMPLATE="$HERE/chatml_hermes.jinja"
  ARGS='[]'
fi

BATON_SCRIPTED_SERVER="$SERVER" BATON_AGENT_MODEL="$MODEL" BATON_AGENT_TEMPLATE="$TEMPLATE" \
  BATON_AGENT_SERVER_ARGS="$ARGS" BATON_AGENT_FLAVOR="$FLAVOR" BATON_AGENT_WORK="$WORK" \
  node_suite_run --test-concurrency=1 --test-timeout=180000 "$HERE"/*.test.mjs
