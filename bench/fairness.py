#!/usr/bin/env python3
"""The fairness scenario with baton's default flags, beside llama-server on the same file: stream
A decodes, a ~3,050-token prompt B arrives after A's 20th token, a short request C a second
later (`baton bench serve --scenario decode-under-prefill`, --parallel 3 / -np 3). Runs the two
servers in turn, each started fresh, RUNS times, and prints per run and as medians:

  - A's median gap before B, A's median gap over its life, A's worst gap while B prefills, and
    that worst gap against the latency target in force (read from baton's startup log);
  - B's time to first token on both servers and their ratio;
  - how well baton's cost model predicted its steps, by the context depth of the prefill chunk:
    the median and 90th percentile of |actual / predicted - 1| over the steps that carried B's
    prompt (from the `req=N prefill ... step S ms (predicted P)` log lines).

Usage:

    bench/fairness.py MODEL.gguf [--runs 3] [--llama-server PATH] [--out DIR] [--serve "FLAGS"]
"""
import argparse
import json
import os
import re
import shlex
import signal
import statistics
import subprocess
import sys
import time
import urllib.request

DEPTHS = [(0, 512), (512, 1024), (1024, 2048), (2048, 3072), (3072, 1 << 30)]
STEP_LINE = re.compile(
    r"req=(\d+) prefill (\d+)/(\d+) .* step ([\d.]+) ms \(predicted ([\d.]+)\)")
TARGET_LINE = re.compile(r"itl target (\d+) ms")
BATCHED_LINE = re.compile(r"itl_target_ms=([^ ]+)")


def wait_health(port, proc, timeout=300):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"server exited with {proc.returncode} before answering /health")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    sys.exit(f"no /health on port {port} after {timeout} s")


def stop(proc):
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def run_scenario(args, port, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    subprocess.run([args.baton, "bench", "serve", "--url", f"http://127.0.0.1:{port}",
                    "--scenario", "decode-under-prefill", "--out", out_dir],
                   check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out_dir, "decode-under-prefill.json")) as f:
        return json.load(f)


def figures(result):
    fig = {f["name"]: f["value"] for f in result["figures"]}
    a = next(r for r in result["requests"] if r["label"].startswith("A"))
    return {
        "a_median_before": fig["A median gap before B"],
        "a_median_life": a["stats"]["gap_p50_ms"],
        "a_worst": fig["A worst gap while B prefills"],
        "b_ttft": fig["B TTFT"],
    }


def step_errors(log_path):
    """(depth, |actual / predicted - 1|) of every step of the longest prompt's prefill."""
    rows = {}
    with open(log_path, errors="replace") as f:
        for line in f:
            m = STEP_LINE.search(line)
            if not m:
                continue
            req, done, total, actual, predicted = m.groups()
            rows.setdefault(req, (int(total), []))[1].append(
                (int(done), float(actual), float(predicted)))
    if not rows:
        return []
    _, steps = max(rows.values(), key=lambda v: v[0])
    out, depth = [], 0
    for done, actual, predicted in steps:
        if predicted > 0:
            out.append((depth, abs(actual / predicted - 1)))
        depth = done
    return out


def run_baton(args, i):
    out_dir = os.path.join(args.out, f"baton-{i}")
    os.makedirs(out_dir, exist_ok=True)
    log_path = os.path.join(out_dir, "server.log")
    with open(log_path, "w") as log:
        proc = subprocess.Popen([args.baton, "serve", "-m", args.model, "--port", str(args.port),
                                 "--parallel", "3", "--ctx", "8192", *args.serve_args],
                                stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_health(args.port, proc)
        fig = figures(run_scenario(args, args.port, out_dir))
    finally:
        stop(proc)
    text = open(log_path, errors="replace").read()
    target = TARGET_LINE.search(text)
    configured = BATCHED_LINE.search(text)
    fig["target"] = float(target.group(1)) if target else None
    if fig["target"] is None and configured and re.fullmatch(r"[\d.]+", configured.group(1)):
        fig["target"] = float(configured.group(1))
    fig["errors"] = step_errors(log_path)
    return fig


def run_llama(args, i):
    out_dir = os.path.join(args.out, f"llama-{i}")
    os.makedirs(out_dir, exist_ok=True)
    port = args.port + 1
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = os.path.dirname(os.path.abspath(args.llama_server))
    with open(os.path.join(out_dir, "server.log"), "w") as log:
        proc = subprocess.Popen([args.llama_server, "-m", args.model, "--port", str(port),
                                 "-np", "3", "-c", str(3 * 8192), "-t", str(args.threads)],
                                stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        wait_health(port, proc)
        return figures(run_scenario(args, port, out_dir))
    finally:
        stop(proc)


def ratio(a, b):
    return a / b if a is not None and b else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--baton", default=os.path.join(os.path.dirname(__file__), "../build/baton"))
    ap.add_argument("--llama-server", help="llama-server binary to compare with (optional)")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--port", type=int, default=18131)
    ap.add_argument("--out", default="fairness-out")
    ap.add_argument("--serve", default="", help="extra `baton serve` flags, as one string")
    args = ap.parse_args()
    args.serve_args = shlex.split(args.serve)

    runs = []
    for i in range(args.runs):
        b = run_baton(args, i)
        ll = run_llama(args, i) if args.llama_server else None
        runs.append((b, ll))
        target = b["target"]
        print(f"run {i + 1}: target {target} ms | A median gap before B "
              f"{b['a_median_before']:.1f} ms, over its life {b['a_median_life']:.1f} ms | "
              f"A worst gap {b['a_worst']:.1f} ms = {ratio(b['a_worst'], target):.2f}x target, "
              f"{ratio(b['a_worst'], b['a_median_before']):.2f}x median before B, "
              f"{ratio(b['a_worst'], b['a_median_life']):.2f}x median over life | "
              f"B TTFT {b['b_ttft'] / 1000:.2f} s"
              + (f", llama-server {ll['b_ttft'] / 1000:.2f} s = "
                 f"{ratio(b['b_ttft'], ll['b_ttft']):.2f}x" if ll else ""), flush=True)

    def med(values):
        values = [v for v in values if v is not None and v == v]
        return statistics.median(values) if values else float("nan")

    print(f"\nmedians of {args.runs} runs:")
    print(f"  A worst gap / target            {med(ratio(b['a_worst'], b['target']) for b, _ in runs):.2f} x")
    print(f"  A worst gap / median before B   {med(ratio(b['a_worst'], b['a_median_before']) for b, _ in runs):.2f} x")
    print(f"  A worst gap / median over life  {med(ratio(b['a_worst'], b['a_median_life']) for b, _ in runs):.2f} x")
    print(f"  A worst gap                     {med(b['a_worst'] for b, _ in runs):.1f} ms")
    print(f"  B TTFT baton                    {med(b['b_ttft'] for b, _ in runs) / 1000:.2f} s")
    if args.llama_server:
        print(f"  B TTFT llama-server             {med(ll['b_ttft'] for _, ll in runs) / 1000:.2f} s")
        print(f"  B TTFT baton / llama-server     {med(ratio(b['b_ttft'], ll['b_ttft']) for b, ll in runs):.2f} x")
    print("cost model |actual / predicted - 1| by depth of the chunk (all runs):")
    errors = [e for b, _ in runs for e in b["errors"]]
    for lo, hi in DEPTHS:
        bucket = sorted(err for depth, err in errors if lo <= depth < hi)
        if not bucket:
            continue
        p90 = bucket[min(len(bucket) - 1, len(bucket) * 9 // 10)]
        name = f"{lo}-{hi}" if hi < 1 << 30 else f"{lo}+"
        print(f"  depth {name:>10}: {len(bucket):4d} steps, median {statistics.median(bucket) * 100:5.1f} %, "
              f"p90 {p90 * 100:5.1f} %")


if __name__ == "__main__":
    main()
