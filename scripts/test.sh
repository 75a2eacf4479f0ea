#!/usr/bin/env bash
# The whole test suite: builds, then runs every C++ test with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
ctest --test-dir build --output-on-failure
