#!/usr/bin/env bash
# Configures and builds the release preset into build/: everything, or only the targets named
# (scripts/quickstart.sh builds just the server binary).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
# A configure that failed (missing packages) leaves a cache but no build.ninja: configure again.
[ -f build/build.ninja ] || cmake --preset release >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build build -j"$JOBS" "${targets[@]}"
