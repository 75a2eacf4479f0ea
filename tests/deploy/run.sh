#!/usr/bin/env bash
# Replicas behind HAProxy (deploy/local.sh): does pinning sessions keep the prefix cache working?
# Usage: bash tests/deploy/run.sh <path to the baton binary>
# Runs one agent-like scenario (sessions whose every turn resends the conversation so far, each
# request carrying x-session-affinity) four ways and compares the share of prompt tokens served
# from cache (usage.prompt_tokens_details.cached_tokens / usage.prompt_tokens):
#   single      one baton, no proxy: the best any routing can do;
#   hash        3 replicas sharing one --kv-disk-dir, consistent hashing on the session header:
#               must come within one KV block per continued turn of `single`;
#   roundrobin  3 replicas, each without a disk tier, so nothing hides what routing alone loses:
#               must come out clearly below `hash`;
#               the replicas' /metrics (baton_session_requests_total) must show it too: with
#               hash routing each session is new once, with round robin again and again;
#   kill        3 replicas sharing one --kv-disk-dir, hash routing; after two turns the replica
#               holding the most sessions gets SIGTERM: every later request must still answer
#               200, sessions on the other replicas must stay put, and each moved session's first
#               turn on its new replica must find its prefix in the shared disk tier;
#   crash       as kill, but SIGKILL while the replica streams an answer (and may be writing to
#               the disk tier): the cut stream must end, every later turn must answer 200 from
#               the others, and a replica restarted on the same directory must restore a session
#               from the files the dead one shared.
# Needs python3, curl and haproxy (scripts/install-deps.sh) and ../shared/models/stories260K.gguf
# (BATON_SHARED_DIR overrides ../shared). Without one of them the test is skipped (ctest's 77),
# or fails under a strict run (CI=true or BATON_STRICT_SKIPS=1).
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: bash tests/deploy/run.sh <baton binary>" >&2
  exit 2
fi
BATON="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
SHARED="${BATON_SHARED_DIR:-$ROOT/../shared}"
SUITE=deploy_replicas

# The shell suites' skip policy (a strict run is CI=true or BATON_STRICT_SKIPS=1).
NODE_SUITE=$SUITE
source "$HERE/../support/node_suite.sh"
summary() {
  echo "$SUITE: $1"
  [ -n "${BATON_TEST_SUMMARY:-}" ] && echo "$SUITE: $1" >>"$BATON_TEST_SUMMARY"
  return 0
}
skip() {
  echo "$SUITE: $1" >&2
  if node_suite_strict; then
    summary "0 run, 1 skipped, 1 of them not allowed"
    echo "$SUITE: FAILED: a strict run (CI=true) does not skip this test" >&2
    exit 1
  fi
  summary "0 run, 1 skipped"
  exit 77
}

[ -x "$BATON" ] || skip "the baton binary $BATON is missing"
for tool in python3 curl haproxy; do
  command -v "$tool" >/dev/null 2>&1 || skip "$tool not found (bash scripts/install-deps.sh installs it)"
done
MODEL="$SHARED/models/stories260K.gguf"
[ -f "$MODEL" ] || skip "models/stories260K.gguf not found in ../shared (set BATON_SHARED_DIR)"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/baton-deploy.XXXXXX")"
rc=0
python3 - "$BATON" "$ROOT" "$MODEL" "$WORK" <<'PY' || rc=$?
import http.client, json, os, queue, re, signal, socket, subprocess, sys, threading, time

BATON, ROOT, MODEL, WORK = sys.argv[1:5]
SESSIONS = 5   # coprime to the 3 replicas, so round robin moves every session every turn
TURNS = 4
KILL_AFTER = 2  # turns before the kill case stops a replica
MAX_TOKENS = 24
BLOCK = 16      # tokens per KV block (the engine's block_size)
SERVE = ["-m", MODEL, "--threads", "1", "--parallel", "2", "--shutdown-grace-s", "5"]
START_TIMEOUT_S = 60

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]

def disk_args(name):
    path = os.path.join(WORK, name)
    os.mkdir(path, 0o700)
    os.chmod(path, 0o700)
    return ["--kv-disk-dir", path, "--kv-disk-space-mb", "64"]

class Replicas:
    """deploy/local.sh in the background: the proxy URL and each replica's pid."""
    def __init__(self, name, balance, serve_args):
        self.port = free_port()
        self.dir = os.path.join(WORK, name)
        self.lines = queue.Queue()
        self.proc = subprocess.Popen(
            ["bash", os.path.join(ROOT, "deploy", "local.sh"), "3", str(self.port),
             "--balance", balance, "--dir", self.dir, "--timeout", str(START_TIMEOUT_S), "--"]
            + serve_args,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        threading.Thread(target=self._read, daemon=True).start()
        self.pids = {}
        self.ports = {}
        deadline = time.monotonic() + START_TIMEOUT_S + 30
        while True:
            try:
                line = self.lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                self.stop()
                raise SystemExit(f"{name}: deploy/local.sh printed no proxy URL in time")
            if line is None:
                raise SystemExit(f"{name}: deploy/local.sh exited before it was ready")
            m = re.match(r"replica (r\d+): pid (\d+) port (\d+)", line)
            if m:
                self.pids[m.group(1)] = int(m.group(2))
                self.ports[m.group(1)] = int(m.group(3))
            m = re.match(r"baton replicas: (http://\S+)", line)
            if m:
                self.url = m.group(1)
                return

    def sessions(self):
        """Requests that named their session, summed over the replicas' /metrics: new/returning."""
        total = {"new": 0, "returning": 0}
        for port in self.ports.values():
            _, body = get(f"http://127.0.0.1:{port}", "/metrics")
            for side, n in re.findall(r'^baton_session_requests_total\{session="(\w+)"\} (\d+)$',
                                      body.decode(), re.M):
                total[side] += int(n)
        return total

    def _read(self):
        for line in self.proc.stdout:
            print(f"  [local.sh] {line.rstrip()}", flush=True)
            self.lines.put(line)
        self.lines.put(None)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

class Single:
    """One baton serve, no proxy."""
    def __init__(self, name, serve_args):
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.log = open(os.path.join(WORK, name + ".log"), "w")
        self.proc = subprocess.Popen([BATON, "serve", *serve_args, "--port", str(port)],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"{name}: baton serve exited; see its log")
            try:
                if get(self.url, "/health")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise SystemExit(f"{name}: baton serve did not become ready")

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=30)
        self.log.close()

def connect(url):
    host, port = url.removeprefix("http://").rsplit(":", 1)
    return http.client.HTTPConnection(host, int(port), timeout=120)

def get(url, path):
    c = connect(url)
    try:
        c.request("GET", path)
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()

def chat(url, session, messages, stream):
    """One turn: (status, content, usage, replica that answered)."""
    body = {"messages": messages, "max_tokens": MAX_TOKENS, "temperature": 0}
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    c = connect(url)
    try:
        c.request("POST", "/v1/chat/completions", json.dumps(body),
                  {"content-type": "application/json", "x-session-affinity": session})
        r = c.getresponse()
        served_by = r.getheader("x-baton-replica", "")
        if r.status != 200:
            return r.status, r.read().decode(errors="replace"), None, served_by
        if not stream:
            doc = json.loads(r.read())
            return 200, doc["choices"][0]["message"]["content"], doc["usage"], served_by
        content, usage, events, done = "", None, 0, False
        for raw in r:
            line = raw.decode().rstrip("\r\n")
            if not line.startswith("data: "):
                continue
            data = line[6:]
            if data == "[DONE]":
                done = True
                break
            chunk = json.loads(data)
            for choice in chunk.get("choices", []):
                piece = choice.get("delta", {}).get("content")
                if piece:
                    content += piece
                    events += 1
            usage = chunk.get("usage") or usage
        # A tiny model may produce its whole answer between two writes, in one event.
        if not done or usage is None or events < 1:
            return 599, f"stream cut: done={done} events={events} usage={usage}", None, served_by
        return 200, content, usage, served_by
    finally:
        c.close()

WORDS = ("little red big happy sunny dog cat bird tree park ball boat river hill garden "
         "flower cake friend mom dad girl boy toy box sky rain snow sun moon star fish").split()

def first_message(s):
    # Distinct per session from its first word on, and long enough to span several blocks.
    words = [WORDS[(s * 7 + i * (s + 3)) % len(WORDS)] for i in range(70)]
    return f"Story {s}: once upon a time " + " ".join(words) + "."

def next_message(s, t):
    return (f"Then what did the {WORDS[(s + t) % len(WORDS)]} and the "
            f"{WORDS[(3 * s + 5 * t) % len(WORDS)]} do in part {t}? Tell me more.")

class Run:
    def __init__(self, name):
        self.name = name
        self.prompt = self.cached = 0
        self.failures = []
        self.history = {}
        self.owner = {}      # session -> replica that answered its last turn
        self.records = []    # (session, turn, prompt, cached, replica)

    def turn(self, url, t):
        for s in range(SESSIONS):
            sid = f"agent-session-{s}"
            msgs = self.history.setdefault(sid, [
                {"role": "system", "content": "You are a storyteller. Answer in short sentences."}])
            msgs.append({"role": "user",
                         "content": first_message(s) if t == 0 else next_message(s, t)})
            status, content, usage, replica = chat(url, sid, msgs, stream=(t == TURNS - 1))
            if status != 200:
                self.failures.append(f"{sid} turn {t + 1}: HTTP {status}: {content[:200]}")
                msgs.pop()
                continue
            msgs.append({"role": "assistant", "content": content})
            prompt = usage["prompt_tokens"]
            cached = usage.get("prompt_tokens_details", {}).get("cached_tokens", 0)
            self.prompt += prompt
            self.cached += cached
            self.owner[sid] = replica
            self.records.append((sid, t + 1, prompt, cached, replica))

    def share(self):
        return self.cached / self.prompt if self.prompt else 0.0

def scenario(name, url, turns=range(TURNS)):
    run = Run(name)
    for t in turns:
        run.turn(url, t)
    return run

def log(msg):
    print(msg, flush=True)

checks = []
def check(ok, what):
    checks.append((ok, what))
    log(f"  {'ok  ' if ok else 'FAIL'} {what}")

started = time.monotonic()

log("== single: one baton, no proxy")
srv = Single("single", SERVE)
try:
    single = scenario("single", srv.url)
finally:
    srv.stop()

log("== hash: 3 replicas, one shared --kv-disk-dir, balance hash")
reps = Replicas("hash", "hash", SERVE + disk_args("kv-hash"))
try:
    hashed = scenario("hash", reps.url)
    hash_sessions = reps.sessions()
finally:
    reps.stop()

log("== roundrobin: 3 replicas without a disk tier, balance roundrobin")
reps = Replicas("roundrobin", "roundrobin", SERVE)
try:
    rr = scenario("roundrobin", reps.url)
    rr_sessions = reps.sessions()
finally:
    reps.stop()

log("== kill: 3 replicas, one shared --kv-disk-dir, balance hash, one stopped mid-run")
reps = Replicas("kill", "hash", SERVE + disk_args("kv-kill"))
try:
    killed = Run("kill")
    for t in range(KILL_AFTER):
        killed.turn(reps.url, t)
    before = dict(killed.owner)
    counts = {}
    for r in before.values():
        counts[r] = counts.get(r, 0) + 1
    victim = max(sorted(counts), key=lambda r: counts[r])
    moved = sorted(s for s, r in before.items() if r == victim)
    # The victim's write-behind finishes saving its sessions' blocks as their requests end.
    time.sleep(2)
    log(f"  SIGTERM to replica {victim} (pid {reps.pids[victim]}), holding {', '.join(moved)}")
    os.kill(reps.pids[victim], signal.SIGTERM)
    # Before the health checks notice: these reach the draining or exited replica and must be
    # retried on another one. They share no prefix with the sessions' conversations.
    probes = []
    for sid in moved:
        status, text, _, replica = chat(reps.url, sid, [{"role": "user", "content": "Hi."}],
                                        stream=False)
        probes.append((sid, status, replica, text if status != 200 else ""))
    # HAProxy's checks take the draining replica out; the others index the files it wrote.
    time.sleep(2)
    n_before = len(killed.records)
    for t in range(KILL_AFTER, TURNS):
        killed.turn(reps.url, t)
    after_records = killed.records[n_before:]
finally:
    reps.stop()

log("== crash: 3 replicas, one shared --kv-disk-dir, balance hash, one SIGKILLed mid-stream")
crash_dir_args = disk_args("kv-crash")
reps = Replicas("crash", "hash", SERVE + crash_dir_args)
try:
    crashed = Run("crash")
    for t in range(KILL_AFTER):
        crashed.turn(reps.url, t)
    time.sleep(2)  # write-behind: the sessions' blocks are on disk before the crash
    # A long answer on one session: once its first event is read, its replica dies at once,
    # whatever it is doing (the stream, its write-behind, its index), as on an OOM kill.
    cut_sid = "agent-session-0"
    long_msgs = crashed.history[cut_sid] + [{"role": "user", "content": "Tell a long story."}]
    c = connect(reps.url)
    c.request("POST", "/v1/chat/completions",
              json.dumps({"messages": long_msgs, "max_tokens": 250, "temperature": 1,
                          "stream": True, "ignore_eos": True}),
              {"content-type": "application/json", "x-session-affinity": cut_sid})
    r = c.getresponse()
    crash_victim = r.getheader("x-baton-replica", "")
    first = r.readline()
    log(f"  SIGKILL to replica {crash_victim} (pid {reps.pids.get(crash_victim)}) after its "
        f"first bytes {first[:40]!r}")
    os.kill(reps.pids[crash_victim], signal.SIGKILL)
    c.sock.settimeout(30)
    cut_start = time.monotonic()
    cut_done = False
    try:
        for raw in r:
            cut_done = cut_done or raw.startswith(b"data: [DONE]")
        cut_outcome = "completed" if cut_done else "cut"
    except (http.client.HTTPException, OSError, ValueError) as e:
        cut_outcome = f"cut ({type(e).__name__})"
    cut_wait = time.monotonic() - cut_start
    c.close()
    log(f"  the stream on the killed replica: {cut_outcome} after {cut_wait:.1f} s")
    time.sleep(2)  # the proxy's checks take the dead replica out
    n_before = len(crashed.records)
    for t in range(KILL_AFTER, TURNS):
        crashed.turn(reps.url, t)
    crash_after = crashed.records[n_before:]
    time.sleep(2)  # the survivors' write-behind saves the last turns
finally:
    reps.stop()
# A fresh replica on the directory the dead one was writing to: it must start, and a session's
# whole conversation so far must come back from the files.
restart = Single("crash-restart", SERVE + crash_dir_args)
try:
    status, text, usage, _ = chat(restart.url, cut_sid, crashed.history[cut_sid], stream=False)
    restored = usage.get("prompt_tokens_details", {}).get("cached_tokens", 0) if usage else 0
    restored_of = usage["prompt_tokens"] if usage else 0
    log(f"  restarted replica: HTTP {status}, {restored} of {restored_of} prompt tokens from "
        f"the disk tier")
finally:
    restart.stop()

with open(os.path.join(WORK, "records.json"), "w") as f:
    json.dump({r.name: r.records for r in (single, hashed, rr, killed, crashed)}, f, indent=1)
log("")
log(f"{'run':<12}{'requests':>9}{'prompt tokens':>15}{'cached tokens':>15}{'cached share':>14}")
for run in (single, hashed, rr, killed, crashed):
    log(f"{run.name:<12}{len(run.records):>9}{run.prompt:>15}{run.cached:>15}{run.share():>14.3f}")
log("")
last_before = {sid: prompt for sid, turn, prompt, _, _ in killed.records if turn == KILL_AFTER}
first_after = {}
for sid, turn, prompt, cached, replica in after_records:
    first_after.setdefault(sid, (turn, prompt, cached, replica))
log(f"kill: replica {victim} stopped after turn {KILL_AFTER}; first turn after it, per session:")
for sid in sorted(first_after):
    turn, prompt, cached, replica = first_after[sid]
    tag = "moved" if sid in moved else "stayed"
    log(f"  {sid}: {before[sid]} -> {replica} ({tag}), turn {turn}: "
        f"{cached} of {prompt} prompt tokens cached (turn {KILL_AFTER} had "
        f"{last_before[sid]})")
log("")

expected = SESSIONS * TURNS
for run in (single, hashed, rr):
    check(not run.failures and len(run.records) == expected,
          f"{run.name}: all {expected} requests answered 200 (streamed last turns included)"
          + (f": {run.failures}" if run.failures else ""))
check(single.share() >= 0.5,
      f"single: the scenario reuses most of each prompt ({single.share():.3f} >= 0.5)")
slack = BLOCK * SESSIONS * (TURNS - 1) / hashed.prompt if hashed.prompt else 1.0
check(hashed.share() >= single.share() - slack,
      f"hash share {hashed.share():.3f} >= single {single.share():.3f} - one block per continued "
      f"turn ({slack:.3f})")
check(rr.share() <= hashed.share() - 0.2,
      f"roundrobin share {rr.share():.3f} <= hash {hashed.share():.3f} - 0.2: round robin "
      f"scatters the sessions")
check(not killed.failures and len(killed.records) == expected,
      f"kill: all {expected} requests answered 200 across the SIGTERM"
      + (f": {killed.failures}" if killed.failures else ""))
# What an operator sees on the replicas' /metrics: with pinning, each session is new once.
check(hash_sessions == {"new": SESSIONS, "returning": SESSIONS * (TURNS - 1)},
      f"hash: replicas' /metrics count each session new once: {hash_sessions}")
check(rr_sessions["new"] > 2 * SESSIONS,
      f"roundrobin: replicas' /metrics show sessions arriving as new again: {rr_sessions}")
stayed_ok = all(first_after[s][3] == before[s] for s in first_after if s not in moved)
check(stayed_ok, "kill: sessions of the other replicas stayed where they were")
check(all(first_after[s][3] != victim for s in first_after),
      f"kill: no request answered by the stopped replica {victim}")
# One may still reach the stopping replica before its signal handler has run (then it is
# admitted and answered there); what must hold is that every one is answered.
check(all(status == 200 for _, status, _, _ in probes),
      f"kill: requests sent right after the SIGTERM were all answered: {probes}")
# Every session's turns start with the same system prompt, so the new replica has those blocks
# in RAM already; only a restore from disk covers the session's own earlier turns.
moved_ok = all(s in first_after and first_after[s][2] >= last_before[s] - BLOCK for s in moved)
check(moved_ok, "kill: each moved session's first turn on its new replica found its previous "
      "turn's prompt (to within one block) in the shared disk tier")

check(cut_wait < 20,
      f"crash: the stream on the SIGKILLed replica ended ({cut_outcome}, {cut_wait:.1f} s), "
      f"no hang")
check(not crashed.failures and all(rep != crash_victim for _, _, _, _, rep in crash_after),
      f"crash: every later turn answered 200 by a surviving replica"
      + (f": {crashed.failures}" if crashed.failures else ""))
last_prompt = max(p for sid, _, p, _, _ in crashed.records if sid == cut_sid)
check(status == 200 and restored >= last_prompt - BLOCK,
      f"crash: a replica restarted on the dead one's --kv-disk-dir answered 200 and restored "
      f"{restored} tokens of the session (its last answered prompt: {last_prompt})")

log(f"\n{sum(ok for ok, _ in checks)} of {len(checks)} checks passed "
    f"in {time.monotonic() - started:.0f} s")
sys.exit(0 if all(ok for ok, _ in checks) else 1)
PY
summary "5 run, 0 skipped"
if [ "$rc" = 0 ]; then
  rm -rf "$WORK"
else
  echo "$SUITE: FAILED; logs kept in $WORK" >&2
fi
exit "$rc"
