#!/usr/bin/env bash
# Reproduces the "Measured" section of README.md: runs every `baton bench serve` scenario against
# a freshly started `baton serve` (metrics such as the longest step are since server start).
# Usage: bench/run-scenarios.sh MODEL.gguf OUT_DIR [PORT]
set -euo pipefail
MODEL=${1:?usage: bench/run-scenarios.sh MODEL.gguf OUT_DIR [PORT]}
OUT=${2:?usage: bench/run-scenarios.sh MODEL.gguf OUT_DIR [PORT]}
PORT=${3:-18123}
BATON=${BATON:-$(dirname "$0")/../build/baton}
mkdir -p "$OUT"

run() {  # run PARALLEL SCENARIO [knobs...]
  local parallel=$1 scenario=$2
  shift 2
  "$BATON" serve -m "$MODEL" --port "$PORT" --parallel "$parallel" --ctx 8192 \
    >"$OUT/$scenario.server.log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 120); do
    curl -sf "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && break
    sleep 0.5
  done
  echo "== $scenario (--parallel $parallel) $*" | tee "$OUT/$scenario.txt"
  "$BATON" bench serve --url "http://127.0.0.1:$PORT" --scenario "$scenario" --out "$OUT" "$@" \
    | tee -a "$OUT/$scenario.txt" || true
  kill -INT "$pid"
  wait "$pid" || true
}

run 3 decode-under-prefill
run 3 three-sessions --long-tokens 4000
run 1 hol-sequential --long-tokens 3000
run 3 agents --sessions 2 --turns 3 --chunk-min-tokens 500 --chunk-max-tokens 1500 --decode-tokens 32
run 3 throughput --streams 3 --decode-tokens 64
