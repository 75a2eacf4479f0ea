#!/usr/bin/env bash
# Configures and builds the release preset into build/.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
[ -f build/CMakeCache.txt ] || cmake --preset release >/dev/null
cmake --build build -j"$JOBS"
