#!/usr/bin/env bash
# Configures and builds the release preset into build/.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
# A configure that failed (missing packages) leaves a cache but no build.ninja: configure again.
[ -f build/build.ninja ] || cmake --preset release >/dev/null
cmake --build build -j"$JOBS"
