#!/usr/bin/env bash
# Reproduces the parking figures of README.md "Measured":
#   1. prefill throughput against chunk size (what a time-bounded step costs the long prompt),
#   2. hol-sequential --long-tokens 3000 at --parallel 1, with and without prefill preemption,
#   3. three-sessions --long-tokens "$THREE_TOKENS" with the default --max-step-ms,
#   4. KV pressure: six long requests in a pool for two full contexts, against an ample pool.
# Scenarios 2 and 4 run RUNS times each (compare medians). Each scenario gets a fresh server.
# Usage: bench/run-parking.sh MODEL.gguf OUT_DIR [RUNS]
#   KV_PRESSURE_MB: the small pool (default 256: two 4096-token contexts of the 1B model's F16 KV,
#   32 KiB per token); PRESSURE_PROMPT / PRESSURE_DECODE: each of the six requests (3000 / 128);
#   KV_RUNS: runs of the pressure pair (default RUNS); PARTS: which of "chunks hol three kv" to run;
#   HOL_TOKENS, THREE_TOKENS, CHUNK_PROMPT: the long prompts (3000, 4000, 2048; smaller in CI)
set -euo pipefail
MODEL=${1:?usage: bench/run-parking.sh MODEL.gguf OUT_DIR [RUNS]}
OUT=${2:?usage: bench/run-parking.sh MODEL.gguf OUT_DIR [RUNS]}
RUNS=${3:-3}
PORT=${PORT:-18126}
BATON=${BATON:-$(dirname "$0")/../build/baton}
KV_PRESSURE_MB=${KV_PRESSURE_MB:-256}
PRESSURE_PROMPT=${PRESSURE_PROMPT:-3000}
PRESSURE_DECODE=${PRESSURE_DECODE:-128}
KV_RUNS=${KV_RUNS:-$RUNS}
PARTS=${PARTS:-chunks hol three kv}
HOL_TOKENS=${HOL_TOKENS:-3000}
THREE_TOKENS=${THREE_TOKENS:-4000}
CHUNK_PROMPT=${CHUNK_PROMPT:-2048}
want() { [[ " $PARTS " == *" $1 "* ]]; }
mkdir -p "$OUT"

# run NAME "SERVE FLAGS" SCENARIO [bench args...]
run() {
  local name=$1 flags=$2 scenario=$3
  shift 3
  # shellcheck disable=SC2086  # flags is a list of words
  "$BATON" serve -m "$MODEL" --port "$PORT" $flags >"$OUT/$name.server.log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 240); do
    curl -sf "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && break
    sleep 0.5
  done
  echo "== $name: serve $flags; bench $scenario $*" | tee "$OUT/$name.txt"
  "$BATON" bench serve --url "http://127.0.0.1:$PORT" --scenario "$scenario" --out "$OUT/$name" "$@" \
    | tee -a "$OUT/$name.txt" || true
  curl -sf "http://127.0.0.1:$PORT/metrics" | grep -E '^baton_(prefill_preemptions|kv_preemptions|requests)_total' \
    | tee -a "$OUT/$name.txt" || true
  kill -INT "$pid"
  wait "$pid" || true
}

want chunks && echo "== prefill tok/s against chunk size ($CHUNK_PROMPT-token prompt, medians of $RUNS)" |
  tee "$OUT/chunks.txt"
for c in 64 128 256 512 1024 2048; do
  want chunks || break
  printf 'chunk %5d: ' "$c" | tee -a "$OUT/chunks.txt"
  "$BATON" bench engine -m "$MODEL" -p "$CHUNK_PROMPT" -n 1 --chunk "$c" --runs "$RUNS" --no-sampler 2>/dev/null \
    | grep -i 'prefill' | head -1 | tee -a "$OUT/chunks.txt"
done

for r in $(seq 1 "$RUNS"); do
  want hol || break
  run "hol-preempt-$r" "--parallel 1 --ctx 8192" hol-sequential --long-tokens "$HOL_TOKENS"
  run "hol-no-preempt-$r" "--parallel 1 --ctx 8192 --no-prefill-preempt --max-step-ms 0" \
    hol-sequential --long-tokens "$HOL_TOKENS"
done
want three && run three-sessions "--parallel 3 --ctx 8192" three-sessions --long-tokens "$THREE_TOKENS"
for r in $(seq 1 "$KV_RUNS"); do
  want kv || break
  run "kv-pressure-$r" "--parallel 6 --ctx 4096 --kv-ram-mb $KV_PRESSURE_MB" throughput \
    --streams 6 --prompt-tokens "$PRESSURE_PROMPT" --decode-tokens "$PRESSURE_DECODE"
  run "kv-ample-$r" "--parallel 6 --ctx 4096" throughput --streams 6 \
    --prompt-tokens "$PRESSURE_PROMPT" --decode-tokens "$PRESSURE_DECODE"
done
