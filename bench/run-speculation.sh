#!/usr/bin/env bash
# Whether speculation (--speculate) slows any workload: the same scenarios against a fresh
# server with --speculate off and with MODE (default suffix), alternating which goes first in
# each round, RUNS rounds (compare medians).
#   throughput: N streams of fresh text (on a random-weight model drafts are rarely right);
#   decode-under-prefill: a stream decoding while a long prompt prefills (drafts only run in
#   steps without prefill work);
#   edit: streams whose answer copies a span of their prompt (a model that copies from its
#   context: stories260K does).
# Usage: bench/run-speculation.sh MODEL.gguf OUT_DIR [RUNS]
#   MODE: the speculation mode against off (suffix); SCENARIOS: which to run ("throughput
#   decode-under-prefill edit"); SERVE_FLAGS: more `baton serve` flags ("--parallel 4").
set -euo pipefail
MODEL=${1:?usage: bench/run-speculation.sh MODEL.gguf OUT_DIR [RUNS]}
OUT=${2:?usage: bench/run-speculation.sh MODEL.gguf OUT_DIR [RUNS]}
RUNS=${3:-3}
MODE=${MODE:-suffix}
SCENARIOS=${SCENARIOS:-throughput decode-under-prefill edit}
SERVE_FLAGS=${SERVE_FLAGS:---parallel 4}
PORT=${PORT:-18127}
BATON=${BATON:-$(dirname "$0")/../build/baton}
mkdir -p "$OUT"

# run NAME SPECULATE SCENARIO: one fresh server, one scenario; the headline goes to NAME.txt.
run() {
  local name=$1 speculate=$2 scenario=$3
  # shellcheck disable=SC2086  # SERVE_FLAGS is a list of words
  "$BATON" serve -m "$MODEL" --port "$PORT" --speculate "$speculate" $SERVE_FLAGS \
    >"$OUT/$name.server.log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 240); do
    curl -sf "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && break
    sleep 0.5
  done
  "$BATON" bench serve --url "http://127.0.0.1:$PORT" --scenario "$scenario" >"$OUT/$name.txt" 2>&1 || true
  kill -INT "$pid"
  wait "$pid" || true
}

# figure FILE NAME: the headline figure's value.
figure() {
  sed -n "/^headline:/,\$p" "$1" | grep -F "  $2 " | head -1 | awk '{print $(NF-1)}'
}

median() { sort -g | awk '{v[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

declare -A FIGURES=(
  [throughput]="aggregate throughput|mean per-stream decode|p99 gap, all streams"
  [decode-under-prefill]="A median gap before B|A worst gap while B prefills|B TTFT"
  [edit]="copy streams' decode|prose stream's decode|prose stream's worst gap"
)
for r in $(seq 1 "$RUNS"); do
  for scenario in $SCENARIOS; do
    if [ $((r % 2)) = 1 ]; then order="off $MODE"; else order="$MODE off"; fi
    for s in $order; do run "$scenario-$s-$r" "$s" "$scenario"; done
  done
done
echo "speculation $MODE against off, $(basename "$MODEL"), medians of $RUNS (ratio = $MODE / off)"
for scenario in $SCENARIOS; do
  IFS='|' read -r -a names <<<"${FIGURES[$scenario]}"
  for name in "${names[@]}"; do
    off=$(for r in $(seq 1 "$RUNS"); do figure "$OUT/$scenario-off-$r.txt" "$name"; done | median)
    on=$(for r in $(seq 1 "$RUNS"); do figure "$OUT/$scenario-$MODE-$r.txt" "$name"; done | median)
    ratio=$(awk -v a="$on" -v b="$off" 'BEGIN {if (b + 0 == 0) print "nan"; else printf "%.3f", a / b}')
    printf '  %-22s %-28s off %10s  %s %10s  ratio %s\n' "$scenario" "$name" "$off" "$MODE" "$on" "$ratio"
  done
done
