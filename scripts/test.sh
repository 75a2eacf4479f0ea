#!/usr/bin/env bash
# The whole test suite from a fresh Debian 12 machine: installs what the build and the tests
# need (quick when everything is there), builds, then runs every test with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
ctest --test-dir build --output-on-failure
