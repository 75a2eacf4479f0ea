#!/usr/bin/env bash
# Reproduces the KV disk tier figures of README.md "Measured":
#   1. bench/kv_disk_restore.py: a TOKENS-token conversation's time to first token, cold against
#      restored from disk after a restart (segment files evicted from the page cache first),
#   2. the agents scenario at --parallel 1 with a RAM pool that holds about one session
#      (AGENTS_KV_MB, default 96: ~3,000 tokens of the 1B model's KV), without and with the tier.
# Usage: bench/run-kv-disk.sh MODEL.gguf OUT_DIR [RUNS]
#   TOKENS (8192), VOCAB_LIMIT (30000: prompt ids are drawn below it), CHUNK_MIN / CHUNK_MAX
#   (500 / 1000: the agents' tool outputs); smaller in CI
set -euo pipefail
MODEL=${1:?usage: bench/run-kv-disk.sh MODEL.gguf OUT_DIR [RUNS]}
OUT=${2:?usage: bench/run-kv-disk.sh MODEL.gguf OUT_DIR [RUNS]}
RUNS=${3:-3}
PORT=${PORT:-18127}
HERE=$(dirname "$0")
BATON=${BATON:-$HERE/../build/baton}
TOKENS=${TOKENS:-8192}
AGENTS_KV_MB=${AGENTS_KV_MB:-96}
VOCAB_LIMIT=${VOCAB_LIMIT:-30000}
CHUNK_MIN=${CHUNK_MIN:-500}
CHUNK_MAX=${CHUNK_MAX:-1000}
mkdir -p "$OUT"

python3 "$HERE/kv_disk_restore.py" "$MODEL" --tokens "$TOKENS" --runs "$RUNS" --baton "$BATON" \
  --port "$PORT" --vocab-limit "$VOCAB_LIMIT" --log "$OUT/restore.server.log" | tee "$OUT/restore.txt"

agents() {  # agents NAME [serve flags...]
  local name=$1
  shift
  "$BATON" serve -m "$MODEL" --port "$PORT" --parallel 1 --ctx 8192 --kv-ram-mb "$AGENTS_KV_MB" \
    "$@" >"$OUT/$name.server.log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 240); do
    curl -sf "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && break
    sleep 0.5
  done
  echo "== $name: serve --parallel 1 --kv-ram-mb $AGENTS_KV_MB $*" | tee "$OUT/$name.txt"
  "$BATON" bench serve --url "http://127.0.0.1:$PORT" --scenario agents --sessions 3 --turns 3 \
    --chunk-min-tokens "$CHUNK_MIN" --chunk-max-tokens "$CHUNK_MAX" --decode-tokens 32 --out "$OUT/$name" \
    | tee -a "$OUT/$name.txt" || true
  curl -sf "http://127.0.0.1:$PORT/metrics" |
    grep -E '^baton_(prefix_cache_reused_tokens|prompt_tokens|kv_disk_loaded_tokens|kv_disk_hits)_total' |
    tee -a "$OUT/$name.txt" || true
  kill -INT "$pid"
  wait "$pid" || true
}

agents agents-ram-only
disk=$(mktemp -d)
agents agents-with-disk --kv-disk-dir "$disk" --kv-disk-space-mb 4096
rm -rf "$disk"
