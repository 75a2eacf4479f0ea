#!/usr/bin/env bash
# The whole test suite from a fresh Debian 12 machine: installs what the build and the tests
# need (quick when everything is there), builds, then runs every test with ctest and ends with
# what each suite ran and skipped. Under CI=true (or BATON_STRICT_SKIPS=1) a skip that
# tests/support/allowed_skips.txt does not list fails its suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
export BATON_TEST_SUMMARY="$PWD/build/test-summary.txt"
rm -f "$BATON_TEST_SUMMARY"
rc=0
ctest --test-dir build --output-on-failure "$@" || rc=$?
echo "==> tests run and skipped, per suite:"
cat "$BATON_TEST_SUMMARY" 2>/dev/null || echo "(no suite reported)"
exit "$rc"
