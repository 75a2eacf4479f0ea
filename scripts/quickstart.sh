#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to a running baton: installs the packages, builds,
# and starts the main job on $MODEL, or on a small random-weight demo model made on first use.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
if [ -z "${MODEL:-}" ]; then
  MODEL=models/demo-byte-vocab.gguf
  if [ ! -f "$MODEL" ]; then
    mkdir -p models
    echo "quickstart: no \$MODEL given: making a demo model with RANDOM weights at $MODEL (its output is gibberish; set MODEL=path/to/model.gguf for a real one)"
    ./build/baton gguf synth "$MODEL" --arch llama --embd 256 --layers 4 --heads 8 --kv-heads 4 \
      --ff 768 --ctx 2048 --type q8_0 --byte-vocab --seed 1
  fi
fi
exec ./build/baton serve -m "$MODEL" "$@"
