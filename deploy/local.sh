#!/usr/bin/env bash
# N baton replicas on loopback ports behind one HAProxy, on one machine.
#
# Usage: deploy/local.sh N PORT [--balance hash|roundrobin] [--host ADDR] [--dir DIR]
#                               [--timeout S] -- SERVE-ARGS...
#   N          replicas, each `baton serve SERVE-ARGS --host 127.0.0.1 --port P_i` on a free port
#   PORT       the proxy's port
#   --balance  hash (default): a session sticks to one replica (deploy/README.md says which
#              headers and body fields name the session); roundrobin: every request to the next
#   --host     where the proxy listens (default 127.0.0.1); the replicas stay on loopback
#   --dir      keep the generated haproxy.cfg, the logs and the stats socket in DIR (created if
#              missing) instead of a temporary directory removed on exit
#   --timeout  seconds to wait for every replica and then the proxy to answer /health with 200
#              (default 300: a large model takes a while to load)
# Environment: BATON (the binary; default build/baton, else `baton` on PATH), HAPROXY (default
# `haproxy` on PATH; 2.6 or newer, for `balance hash`).
#
# Once ready it prints one line per replica, `replica rI: pid PID port P log FILE`, one for
# haproxy, then `baton replicas: http://HOST:PORT (N replicas, balance B)`, and runs until
# SIGTERM or SIGINT: then the replicas get SIGTERM (their /health turns 503, so HAProxy stops
# sending them requests while running ones finish), and haproxy stops once they have exited.
# A replica that exits meanwhile (killed to try failover) is reported and left down.
# Needs no root and never touches /etc/haproxy.
set -euo pipefail

usage() {
  sed -n '4,16p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

[ $# -ge 2 ] || usage
N=$1
PORT=$2
shift 2
[[ $N =~ ^[1-9][0-9]*$ ]] || { echo "local.sh: N must be a positive number, not '$N'" >&2; exit 2; }
[[ $PORT =~ ^[0-9]+$ ]] || { echo "local.sh: PORT must be a number, not '$PORT'" >&2; exit 2; }
BALANCE=hash
HOST=127.0.0.1
DIR=""
TIMEOUT_S=300
while [ $# -gt 0 ]; do
  case $1 in
    --balance) BALANCE=${2:-}; shift 2 ;;
    --host) HOST=${2:-}; shift 2 ;;
    --dir) DIR=${2:-}; shift 2 ;;
    --timeout) TIMEOUT_S=${2:-}; shift 2 ;;
    --) shift; break ;;
    *) echo "local.sh: unknown option '$1'" >&2; usage ;;
  esac
done
SERVE_ARGS=("$@")
case $BALANCE in
  hash) BALANCE_LINE='balance hash var(txn.session_key)' ;;
  roundrobin) BALANCE_LINE='balance roundrobin' ;;
  *) echo "local.sh: --balance is hash or roundrobin, not '$BALANCE'" >&2; exit 2 ;;
esac
for a in "${SERVE_ARGS[@]}"; do
  case $a in
    --port|--port=*|--host|--host=*)
      echo "local.sh: leave $a out of SERVE-ARGS; local.sh gives each replica its own" >&2
      exit 2 ;;
  esac
done

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
if [ -z "${BATON:-}" ]; then
  if [ -x "$ROOT/build/baton" ]; then BATON="$ROOT/build/baton"
  elif command -v baton >/dev/null 2>&1; then BATON="$(command -v baton)"
  else echo "local.sh: no baton binary: build it (scripts/build.sh) or set BATON" >&2; exit 1
  fi
fi
HAPROXY=${HAPROXY:-haproxy}
if ! command -v "$HAPROXY" >/dev/null 2>&1; then
  echo "local.sh: haproxy not found (bash scripts/install-deps.sh installs it, or set HAPROXY)" >&2
  exit 1
fi
command -v curl >/dev/null 2>&1 || { echo "local.sh: curl not found" >&2; exit 1; }

if [ -n "$DIR" ]; then
  mkdir -p "$DIR"
  DIR="$(cd "$DIR" && pwd)"
  KEEP_DIR=1
else
  DIR="$(mktemp -d "${TMPDIR:-/tmp}/baton-replicas.XXXXXX")"
  KEEP_DIR=0
fi

PIDS=()
PORTS=()
HAPROXY_PID=""
STOPPING=0

alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }

stop_all() {
  [ "$STOPPING" = 1 ] && return
  STOPPING=1
  local pid i
  for pid in "${PIDS[@]}"; do alive "$pid" && kill -TERM "$pid" 2>/dev/null || true; done
  # baton exits within --shutdown-grace-s + 1 s; the bound only guards against a wedged process.
  for i in $(seq 1 600); do
    local left=0
    for pid in "${PIDS[@]}"; do alive "$pid" && left=1; done
    [ "$left" = 0 ] && break
    sleep 0.1
  done
  for pid in "${PIDS[@]}"; do alive "$pid" && kill -KILL "$pid" 2>/dev/null || true; done
  if alive "$HAPROXY_PID"; then
    kill -TERM "$HAPROXY_PID" 2>/dev/null || true
    for i in $(seq 1 50); do alive "$HAPROXY_PID" || break; sleep 0.1; done
    alive "$HAPROXY_PID" && kill -KILL "$HAPROXY_PID" 2>/dev/null || true
  fi
  wait 2>/dev/null || true
  [ "$KEEP_DIR" = 1 ] || rm -rf "$DIR"
}
trap 'stop_all' EXIT
trap 'stop_all; exit 143' TERM
trap 'stop_all; exit 130' INT

# Ports from the kernel, all held at once so no two replicas get the same one.
read -r -a PORTS <<<"$(python3 -c '
import socket, sys
ss = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))' "$N")"

http_code() { curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$1" 2>/dev/null || true; }

for i in $(seq 1 "$N"); do
  "$BATON" serve "${SERVE_ARGS[@]}" --host 127.0.0.1 --port "${PORTS[$((i - 1))]}" \
    >"$DIR/r$i.log" 2>&1 &
  PIDS+=($!)
done

# HAProxy starts once every replica is ready, so the hash ring holds them all from the first
# request and no session is placed on a stand-in replica that it later leaves.
deadline=$((SECONDS + TIMEOUT_S))
# wait_healthy NAME URL PID LOG: until URL answers 200; exits (keeping the logs) when the process
# dies or the deadline passes.
wait_healthy() {
  local name=$1 url=$2 pid=$3 log=$4
  until [ "$(http_code "$url")" = 200 ]; do
    if ! alive "$pid"; then
      echo "local.sh: $name exited while starting; the end of $log:" >&2
      tail -n 20 "$log" >&2
      KEEP_DIR=1
      exit 1
    fi
    if [ $SECONDS -ge "$deadline" ]; then
      echo "local.sh: $name ($url) did not answer 200 within ${TIMEOUT_S}s (--timeout);" \
           "its log: $log" >&2
      KEEP_DIR=1
      exit 1
    fi
    sleep 0.2
  done
}
for i in $(seq 1 "$N"); do
  wait_healthy "replica r$i" "http://127.0.0.1:${PORTS[$((i - 1))]}/health" \
    "${PIDS[$((i - 1))]}" "$DIR/r$i.log"
done

servers=""
for i in $(seq 1 "$N"); do
  servers+="    server r$i 127.0.0.1:${PORTS[$((i - 1))]}"$'\n'
done
cfg="$(<"$ROOT/deploy/haproxy.cfg.in")"
cfg="${cfg//@RUNDIR@/"$DIR"}"
cfg="${cfg//@BIND@/"$HOST:$PORT"}"
cfg="${cfg//@BALANCE@/"$BALANCE_LINE"}"
cfg="${cfg//@SERVERS@/"${servers%$'\n'}"}"
printf '%s\n' "$cfg" >"$DIR/haproxy.cfg"
if ! "$HAPROXY" -c -q -f "$DIR/haproxy.cfg" >"$DIR/haproxy-check.log" 2>&1; then
  echo "local.sh: haproxy refused $DIR/haproxy.cfg:" >&2
  cat "$DIR/haproxy-check.log" >&2
  KEEP_DIR=1
  exit 1
fi
"$HAPROXY" -db -f "$DIR/haproxy.cfg" >"$DIR/haproxy.log" 2>&1 &
HAPROXY_PID=$!

url="http://$HOST:$PORT"
[[ $HOST == *:* ]] && url="http://[$HOST]:$PORT"
wait_healthy "haproxy (is port $PORT taken?)" "$url/health" "$HAPROXY_PID" "$DIR/haproxy.log"

for i in $(seq 1 "$N"); do
  echo "replica r$i: pid ${PIDS[$((i - 1))]} port ${PORTS[$((i - 1))]} log $DIR/r$i.log"
done
echo "haproxy: pid $HAPROXY_PID config $DIR/haproxy.cfg stats socket $DIR/haproxy.sock"
echo "baton replicas: $url ($N replicas, balance $BALANCE)"

reported=()
while alive "$HAPROXY_PID"; do
  for i in $(seq 1 "$N"); do
    pid=${PIDS[$((i - 1))]}
    if [ -z "${reported[$i]:-}" ] && ! alive "$pid"; then
      reported[$i]=1
      echo "replica r$i (pid $pid) exited; the proxy sends its sessions to the others"
    fi
  done
  # A background sleep lets the traps run as soon as a signal arrives.
  sleep 1 &
  wait $! 2>/dev/null || true
done
echo "local.sh: haproxy exited; the end of $DIR/haproxy.log:" >&2
tail -n 20 "$DIR/haproxy.log" >&2
KEEP_DIR=1
exit 1
