#!/usr/bin/env bash
# Sanitizer CI: ASan+UBSan (Debug, preset debug-asan) over every test executable but bench's,
# then TSan (preset tsan) over the threaded modules. Exits non-zero on any build failure, test
# failure or sanitizer report.
#
#   scripts/test-sanitizers.sh          both steps
#   scripts/test-sanitizers.sh asan     only ASan+UBSan
#   scripts/test-sanitizers.sh tsan     only TSan
#
# Each step stays under 10 minutes from scratch on two cores. The ASan step also builds the
# `baton` binary, so the tests that run it (CLI, serve + signals) run it sanitized, leak checks
# included; SANITIZE_WITH_BINARY=0 skips it (about 2 minutes less) and those tests skip. TSan
# never builds it (BATON_TESTS_BUILD_BINARY=OFF drops the test executables' dependency on it).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

JOBS=${JOBS:-$(nproc)}
ASAN_TESTS=(util gguf tokenizer kv kernels model sched server chat toolcall grammar pull)
TSAN_TESTS=(sched kv kernels server)

# LeakSanitizer works here; UB and the first ASan report stop the test run.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1}
# The embedded Python (chat templates) is never finalised: its allocations are not leaks.
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/scripts/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:history_size=4}

failed=()

# run_step NAME PRESET DIR TEST...: configure, build the test executables, run them under ctest.
# DIR must be the preset's binaryDir (CMakePresets.json).
run_step() {
  local name=$1 preset=$2 dir=$3
  shift 3
  local targets=() regex
  for t in "$@"; do targets+=("test_$t"); done
  if [[ $name == asan && ${SANITIZE_WITH_BINARY:-1} == 1 ]]; then
    targets+=(baton)
  else
    rm -f "$dir/baton"  # a stale one from an earlier run would be tested instead of skipped
  fi
  regex="^($(IFS='|'; echo "$*"))(_load)?\$"  # a module's load tests have their own entry
  local start=$SECONDS
  echo "==> [$name] configure preset $preset ($dir)"
  if ! cmake --preset "$preset" -DBATON_TESTS_BUILD_BINARY=OFF >/dev/null; then
    failed+=("$name: configure"); return
  fi
  echo "==> [$name] build ${targets[*]} (-j$JOBS)"
  if ! cmake --build "$dir" --target "${targets[@]}" -j "$JOBS"; then
    failed+=("$name: build"); return
  fi
  echo "==> [$name] built in $((SECONDS - start)) s; running tests"
  export BATON_TEST_SUMMARY="$PWD/$dir/test-summary.txt"
  rm -f "$BATON_TEST_SUMMARY"
  if ! ctest --test-dir "$dir" -R "$regex" --output-on-failure; then
    failed+=("$name: tests")
  fi
  echo "==> [$name] tests run and skipped, per suite:"
  cat "$BATON_TEST_SUMMARY" 2>/dev/null || echo "(no suite reported)"
  echo "==> [$name] done in $((SECONDS - start)) s"
}

want=${1:-all}
case $want in
  all | asan | tsan) ;;
  *) echo "usage: $0 [asan|tsan]  (got '$want')" >&2; exit 2 ;;
esac
[[ $want != tsan ]] && run_step asan debug-asan build-asan "${ASAN_TESTS[@]}"
[[ $want != asan ]] && run_step tsan tsan build-tsan "${TSAN_TESTS[@]}"

if ((${#failed[@]})); then
  printf 'sanitizers: FAILED: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "sanitizers: all clean"
