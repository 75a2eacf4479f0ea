#!/usr/bin/env python3
"""Measures what the KV disk tier buys: time to first token of a long conversation computed cold
against the same conversation restored from disk after a server restart.

For each run: start `baton serve` with a fresh --kv-disk-dir, send a prompt of TOKENS token ids
(max_tokens 1, so the response time is the time to first token), wait until its blocks are on
disk, stop the server, evict the segment files from the page cache (posix_fadvise DONTNEED, which
needs no privileges), start the server again and send the same prompt. Prints each run and the
medians. Usage:

    bench/kv_disk_restore.py MODEL.gguf [--tokens 8192] [--runs 3] [--baton build/baton]
"""
import argparse
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request


def post(url, body, timeout=3600):
    req = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    start = time.monotonic()
    with urllib.request.urlopen(req, timeout=timeout) as r:
        out = json.loads(r.read())
    return time.monotonic() - start, out


def get_json(url):
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.loads(r.read())


class Server:
    def __init__(self, args, disk_dir, log):
        self.url = f"http://127.0.0.1:{args.port}"
        cmd = [args.baton, "serve", "-m", args.model, "--port", str(args.port), "--parallel", "1",
               "--ctx", str(args.tokens + 64), "--kv-disk-dir", disk_dir,
               "--kv-disk-space-mb", str(args.disk_mb)]
        if args.threads:
            cmd += ["--threads", str(args.threads)]
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        for _ in range(600):
            try:
                urllib.request.urlopen(self.url + "/health", timeout=1)
                return
            except Exception:
                if self.proc.poll() is not None:
                    sys.exit(f"baton serve exited with {self.proc.returncode}; see its log")
                time.sleep(0.2)
        sys.exit("baton serve did not become healthy")

    def disk(self):
        return get_json(self.url + "/status")["kv_disk"]

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(timeout=120)


def settle(server, want_blocks):
    """Waits until the conversation's blocks are written (the tier writes behind the request)."""
    for _ in range(1200):
        if server.disk()["blocks"] >= want_blocks:
            return
        time.sleep(0.1)
    sys.exit("the blocks never reached the disk tier")


def drop_from_page_cache(directory):
    for name in os.listdir(directory):
        fd = os.open(os.path.join(directory, name), os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def disk_read_seconds(log_path, start):
    """The restored request's read from the tier (its log line), from the server log's tail."""
    with open(log_path, errors="replace") as f:
        f.seek(start)
        m = re.search(r"loaded \d+ of \d+ blocks from the disk tier in ([\d.]+) ms", f.read())
    return float(m.group(1)) / 1000 if m else float("nan")


def one_run(args, seed, log):
    rng = random.Random(seed)
    prompt = [1] + [rng.randrange(100, args.vocab_limit) for _ in range(args.tokens - 1)]
    body = {"prompt": prompt, "max_tokens": 1, "temperature": 0}
    disk_dir = tempfile.mkdtemp(prefix="baton-kv-bench-")
    try:
        server = Server(args, disk_dir, log)
        cold_s, cold = post(server.url + "/v1/completions", body)
        settle(server, (args.tokens - 1) // 16)
        disk = server.disk()
        server.stop()
        if not args.keep_page_cache:
            drop_from_page_cache(disk_dir)
        log.flush()
        log_from = os.path.getsize(args.log)
        server = Server(args, disk_dir, log)
        warm_s, warm = post(server.url + "/v1/completions", body)
        server.stop()
        read_s = disk_read_seconds(args.log, log_from)
        same = cold["choices"][0]["text"] == warm["choices"][0]["text"]
        cached = warm["usage"].get("prompt_tokens_details", {}).get("cached_tokens", 0)
        return cold_s, warm_s, disk["bytes"], cached, same, read_s
    finally:
        shutil.rmtree(disk_dir, ignore_errors=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("model")
    p.add_argument("--tokens", type=int, default=8192)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--baton", default=os.path.join(os.path.dirname(__file__), "..", "build", "baton"))
    p.add_argument("--port", type=int, default=18124)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--disk-mb", type=int, default=8192)
    p.add_argument("--vocab-limit", type=int, default=30000, help="prompt ids are drawn below this")
    p.add_argument("--log", default="kv_disk_restore.server.log")
    p.add_argument("--keep-page-cache", action="store_true",
                   help="restore with the segment files still in the page cache (a quick restart)")
    args = p.parse_args()
    rows = []
    with open(args.log, "w") as log:
        for i in range(args.runs):
            cold_s, warm_s, size, cached, same, read_s = one_run(args, 1000 + i, log)
            rows.append((cold_s, warm_s, read_s))
            rate = size / 2**30 / read_s if read_s > 0 else float("nan")
            print(f"run {i + 1}: {args.tokens} tokens, cold TTFT {cold_s:.2f} s, restored after a "
                  f"restart {warm_s:.3f} s ({cold_s / warm_s:.0f}x): read and check "
                  f"{size / 2**20:.0f} MB {read_s:.3f} s ({rate:.1f} GB/s), the "
                  f"rest (the positions left to compute, HTTP) {warm_s - read_s:.3f} s; {cached} "
                  f"tokens restored, same first token: {'yes' if same else 'NO'}", flush=True)
    cold = statistics.median(r[0] for r in rows)
    warm = statistics.median(r[1] for r in rows)
    ratios = statistics.median(r[0] / r[1] for r in rows)
    read = statistics.median(r[2] for r in rows)
    cache = ("left in the page cache" if args.keep_page_cache else
             "evicted from the page cache with posix_fadvise before each restore")
    print(f"median of {len(rows)}: cold {cold:.2f} s, restored {warm:.3f} s, ratio {ratios:.0f}x, "
          f"of which the read {read:.3f} s (segment files {cache})")


if __name__ == "__main__":
    main()
