#!/usr/bin/env bash
# Real-client tests: the `openai` npm package against `baton serve`.
# Usage: bash tests/npm/run.sh <path to the baton binary>
# Needs the locked packages in tests/npm/node_modules (scripts/install-node-deps.sh), starts baton serve on a
# free loopback port with ../shared/models/stories260K.gguf (or a synthetic byte-vocab model when
# ../shared is absent; then exact-text checks are skipped), runs `node --test`, stops the server.
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: bash tests/npm/run.sh <baton binary>" >&2
  exit 2
fi
NODE_SUITE=npm_clients
source "$(dirname "$0")/../support/node_suite.sh"
# Without node and npm: skipped (ctest's SKIP_RETURN_CODE 77), or failed under a strict run.
node_suite_require_node
BATON="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
HERE="$(cd "$(dirname "$0")" && pwd)"
SHARED="${BATON_SHARED_DIR:-$HERE/../../../shared}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/baton-npm.XXXXXX")"
SERVER_PID=""

cleanup() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

cd "$HERE"
node_suite_require_modules "$HERE"

if [ -f "$SHARED/models/stories260K.gguf" ]; then
  MODEL="$SHARED/models/stories260K.gguf"
  EXACT=1
else
  node_suite_missing_shared "models/stories260K.gguf (exact-text checks skipped)"
  MODEL="$WORK/synth.gguf"
  "$BATON" gguf synth "$MODEL" --byte-vocab --ctx 2048 >/dev/null
  EXACT=0
fi

PORT="$(node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")"
"$BATON" serve -m "$MODEL" --port "$PORT" --parallel 4 --keepalive-s 1 \
  >"$WORK/serve.out" 2>"$WORK/serve.err" &
SERVER_PID=$!

ready=0
for _ in $(seq 1 300); do
  if node -e "fetch('http://127.0.0.1:$PORT/health').then(r=>process.exit(r.status===200?0:1),()=>process.exit(1))"; then
    ready=1
    break
  fi
  kill -0 "$SERVER_PID" 2>/dev/null || break
  sleep 0.1
done
if [ "$ready" != 1 ]; then
  echo "run.sh: baton serve did not become healthy; its log:" >&2
  cat "$WORK/serve.out" "$WORK/serve.err" >&2
  exit 1
fi

status=0
BATON_URL="http://127.0.0.1:$PORT" BATON_BIN="$BATON" BATON_MODEL="$MODEL" BATON_EXACT="$EXACT" \
  node_suite_run --test-concurrency=1 "$HERE"/*.test.mjs || status=$?

# A clean shutdown is part of the contract: SIGTERM → exit 0.
kill -TERM "$SERVER_PID"
server_rc=0
wait "$SERVER_PID" || server_rc=$?
SERVER_PID=""
if [ "$server_rc" != 0 ]; then
  echo "run.sh: baton serve exited with $server_rc after SIGTERM; its log:" >&2
  tail -n 50 "$WORK/serve.err" >&2
  status=1
fi
exit "$status"
