# Shared by the Node suites' run.sh (sourced, not run): the skip policy of the GoogleTest suites
# (tests/support/skip_policy.h) for `node --test`, and the checks that keep the test run off the
# network (scripts/install-node-deps.sh installs the packages; the test run never does).
# Each function takes the suite's name (what the summary line says) in NODE_SUITE.

NODE_SUITE_SUPPORT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

node_suite_strict() {
  if [ -n "${BATON_STRICT_SKIPS:-}" ]; then [ "$BATON_STRICT_SKIPS" != 0 ]; return; fi
  [ "${CI:-}" = true ]
}

# Something the suite needs is missing ($1 says what and how to get it): ctest's skip (77), or
# a failure under a strict run.
node_suite_unavailable() {
  echo "$NODE_SUITE: $1" >&2
  if node_suite_strict; then
    echo "$NODE_SUITE: FAILED: a strict run (CI=true) does not skip a suite" >&2
    exit 1
  fi
  exit 77
}

node_suite_require_node() {
  if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then return 0; fi
  node_suite_unavailable "node or npm not found (bash scripts/install-deps.sh installs them)"
}

# The packages of the suite in directory $1 must be installed from its current lock file.
node_suite_require_modules() {
  if cmp -s "$1/package-lock.json" "$1/node_modules/.baton-installed-lock" 2>/dev/null; then
    return 0
  fi
  echo "$NODE_SUITE: the npm packages in $1 are missing or older than its package-lock.json;" \
       "install them with: bash scripts/install-node-deps.sh" >&2
  exit 1
}

# A file from ../shared is missing and the suite falls back to a synthetic one: fine on a
# user's machine, a failure under a strict run. $1 says what is missing.
node_suite_missing_shared() {
  echo "$NODE_SUITE: $1 not found in ../shared (set BATON_SHARED_DIR)" >&2
  if node_suite_strict; then
    echo "$NODE_SUITE: FAILED: a strict run (CI=true) needs ../shared" >&2
    exit 1
  fi
}

# node_suite_run ARGS...: `node --test ARGS` with the TAP reporter; prints what ran and what
# was skipped (with reasons), appends the count to $BATON_TEST_SUMMARY, and under a strict run
# fails on a skip that tests/support/allowed_skips.txt does not list.
node_suite_run() {
  local log rc=0
  log="$(mktemp "${TMPDIR:-/tmp}/baton-node-suite.XXXXXX")"
  node --test --test-reporter=tap "$@" | tee "$log" || rc=$?
  local allowed=() line
  while IFS= read -r line; do
    [[ -z $line || $line == \#* ]] || allowed+=("$line")
  done <"$NODE_SUITE_SUPPORT/allowed_skips.txt"
  local run skipped refused=0 reason ok
  run=$(grep -Ec '^ *(not )?ok [0-9]+ - ' "$log" || true)
  skipped=$(grep -Ec '^ *ok [0-9]+ - .* # SKIP' "$log" || true)
  while IFS= read -r line; do
    reason=${line#* # SKIP }
    ok=0
    for p in "${allowed[@]}"; do [[ $reason == *"$p"* ]] && ok=1; done
    if ((ok == 0)) && node_suite_strict; then
      refused=$((refused + 1))
      echo "[  SKIP    ] ${line#*- }  <- not an allowed skip under a strict run (tests/support/allowed_skips.txt)"
    else
      echo "[  SKIP    ] ${line#*- }"
    fi
  done < <(grep -E '^ *ok [0-9]+ - .* # SKIP' "$log" || true)
  rm -f "$log"
  local summary="$NODE_SUITE: $((run - skipped)) run, $skipped skipped"
  ((refused)) && summary+=", $refused of them not allowed"
  echo "$summary"
  [ -n "${BATON_TEST_SUMMARY:-}" ] && echo "$summary" >>"$BATON_TEST_SUMMARY"
  ((rc == 0 && refused > 0)) && rc=1
  return "$rc"
}
