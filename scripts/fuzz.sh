#!/usr/bin/env bash
# Bounded fuzzing (CI runs it after the sanitizer suites): configures the `fuzz` preset (clang,
# libFuzzer, ASan+UBSan), builds the fuzz targets and their seed writers, then runs each fuzzer
# for SECONDS (default 60) on a fresh scratch corpus under build-fuzz, seeded from the writers.
# Exits non-zero on a build failure or on any crash, leak, UB report, timeout or out-of-memory;
# the offending input is kept under build-fuzz/fuzz-artifacts/ (see fuzz/README.md).
#
#   scripts/fuzz.sh [SECONDS]
#
# fuzz_gguf's seeds also take the headers of the real GGUF files under ../shared/models (or
# $BATON_SHARED_DIR/models) when they are there.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

SECS=${1:-60}
JOBS=${JOBS:-2}
DIR=build-fuzz  # the fuzz preset's binaryDir (CMakePresets.json)
SHARED=${BATON_SHARED_DIR:-../shared}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# Chat requests render templates in the embedded Python, which keeps what it allocates for the
# life of the process: not leaks (scripts/lsan.supp).
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/scripts/lsan.supp:print_suppressions=0}

if ! [[ $SECS =~ ^[0-9]+$ ]] || ((SECS < 1)); then
  echo "usage: $0 [SECONDS]  (got '$SECS')" >&2
  exit 2
fi

start=$SECONDS
echo "==> [fuzz] configure preset fuzz ($DIR)"
cmake --preset fuzz >/dev/null || exit 1
echo "==> [fuzz] build (-j$JOBS)"
cmake --build "$DIR" --target fuzz_gguf fuzz_gguf_corpus fuzz_http fuzz_http_corpus fuzz_grammar -j "$JOBS" ||
  exit 1
echo "==> [fuzz] built in $((SECONDS - start)) s"

seeds=$DIR/fuzz-seeds
rm -rf "$seeds"
real=()
for f in models/stories260K.gguf models/llama-2-tiny-random.gguf models/vocab/ggml-vocab-gpt-2.gguf; do
  [[ -f $SHARED/$f ]] && real+=("$SHARED/$f")
done
"$DIR/fuzz/fuzz_gguf_corpus" "$seeds/fuzz_gguf" "${real[@]}" >/dev/null || exit 1
"$DIR/fuzz/fuzz_http_corpus" "$seeds/fuzz_http" >/dev/null || exit 1
# fuzz_grammar: the first byte picks GBNF (0), regex (1), searching regex (2) or JSON Schema (3);
# the seeds are the shapes requests send, including this project's test schemas.
mkdir -p "$seeds/fuzz_grammar"
printf '\000root ::= "a" [b-d]* ("x" | item){0,3}\nitem ::= [^"\\\\]+\n\000abx' >"$seeds/fuzz_grammar/gbnf"
printf '\001[a-z]+@(ab|cd)\\.com{1,2}\\d?' >"$seeds/fuzz_grammar/regex"
printf '\002^(0|[1-9][0-9]*)\\.[0-9]+$' >"$seeds/fuzz_grammar/search"
# With bit 3 set, the next byte picks a shape and two more its size (fuzz_grammar.cpp's expand):
# nesting, rule chains both ways, large repetitions, a doubling start, an ambiguous letter run.
for shape in 0 1 2 3 4 5; do
  printf "\\010\\00$shape\\377\\377\"a\" [b-c]?" >"$seeds/fuzz_grammar/grow-$shape"
done
printf '\011\000\377\377a|b' >"$seeds/fuzz_grammar/grow-regex"
i=0
for f in tests/structured/schemas/*.json; do
  { printf '\003'; cat "$f"; } >"$seeds/fuzz_grammar/schema-$i"
  i=$((i + 1))
done

failed=()

# run_fuzzer NAME LIBFUZZER_FLAG...: SECS seconds on a fresh corpus (new inputs land in the first
# directory; the seeds are only read).
run_fuzzer() {
  local name=$1
  shift
  local work=$DIR/fuzz-work/$name art=$DIR/fuzz-artifacts/$name log=$DIR/fuzz-$name.log
  rm -rf "$work" "$art"
  mkdir -p "$work" "$art"
  echo "==> [fuzz] $name for $SECS s"
  "$DIR/fuzz/$name" "$work" "$seeds/$name" -max_total_time="$SECS" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$art/" "$@" >"$log" 2>&1
  local rc=$?
  local execs
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  if ((rc != 0)); then
    tail -n 60 "$log"
    echo "==> [fuzz] $name FAILED (exit $rc); input kept in $art/, full log in $log" >&2
    failed+=("$name")
  else
    echo "==> [fuzz] $name: ${execs:-?} inputs, corpus $(ls "$work" | wc -l) new files, clean"
  fi
}

run_fuzzer fuzz_gguf -max_len=65536
run_fuzzer fuzz_http -max_len=70000 -dict=fuzz/http.dict
run_fuzzer fuzz_grammar -max_len=4096

echo "==> [fuzz] done in $((SECONDS - start)) s"
if ((${#failed[@]})); then
  echo "fuzz: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: all clean"
