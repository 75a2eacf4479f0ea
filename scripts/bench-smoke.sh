#!/usr/bin/env bash
# The parking and KV disk tier benchmarks, scaled down for CI: the same scripts that produce
# README's "Measured" figures, on a 0.5 MB synthetic model with short prompts, so every command
# of them is exercised on each run (their figures are printed, not judged: timings on a shared
# CI machine prove nothing). Fails only when a script or the server breaks.
#   scripts/bench-smoke.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-build/bench-smoke}
BATON=${BATON:-build/baton}
rm -rf "$OUT"
mkdir -p "$OUT"
"$BATON" gguf synth "$OUT/tiny.gguf" --byte-vocab --ctx 8192 --threads 1 >/dev/null
export BATON
PARTS="chunks hol three kv" HOL_TOKENS=600 THREE_TOKENS=800 CHUNK_PROMPT=256 KV_RUNS=1 \
  KV_PRESSURE_MB=1 PRESSURE_PROMPT=300 PRESSURE_DECODE=16 \
  bash bench/run-parking.sh "$OUT/tiny.gguf" "$OUT/parking" 1
TOKENS=1000 VOCAB_LIMIT=250 CHUNK_MIN=100 CHUNK_MAX=200 AGENTS_KV_MB=1 \
  bash bench/run-kv-disk.sh "$OUT/tiny.gguf" "$OUT/kv-disk" 1
for f in "$OUT"/parking/hol-preempt-1.txt "$OUT"/kv-disk/restore.txt "$OUT"/kv-disk/agents-with-disk.txt; do
  grep -q . "$f" || { echo "bench-smoke: $f is empty" >&2; exit 1; }
done
echo "bench-smoke: done (figures under $OUT)"
