#!/usr/bin/env python3
"""baton against llama.cpp on the same GGUF file, threads and token counts, in one run.

    bench/compare_llama.py MODEL.gguf --llama-bench PATH/llama-bench [-t 2] [-p 512] [-n 64]
                           [--rounds 3] [--baton build/baton]
                           [--peer-args "-rtr 1"] [--gen-prompt | --no-depth]
                           [--peer-name ik_llama.cpp]

Each round runs llama-bench (its prefill test, then its decode test at a depth of the prompt's
length, so both engines decode over the same context, and from an empty context, llama-bench's
usual figure) and then `baton bench engine` once, back
to back, so both see the same machine; the table reports the medians over the
rounds and baton/llama.cpp ratios (of the medians, and the median of the rounds' own ratios), plus baton's read bandwidth probe of the same rounds (decode
as a share of it, for both engines). --peer-args passes flags to the peer's llama-bench (e.g.
ik_llama.cpp's run-time repacking, -rtr 1); --gen-prompt is for a llama-bench that has -gp
P,N instead of -d (ik_llama.cpp's: it times the N decode steps after a P-token prompt, the same
context as baton's); --no-depth for one with neither: its decode is then timed from an empty
context only. Machines shared with other work swing by a third between
minutes: compare only figures of one invocation.
"""
import argparse
import json
import statistics
import subprocess
import sys


def run_json(cmd):
    try:
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    except FileNotFoundError:
        sys.exit(f"compare_llama: cannot run {cmd[0]} (give its path)")
    except subprocess.CalledProcessError as e:
        sys.exit(f"compare_llama: {' '.join(cmd)} failed:\n{e.stderr[-2000:]}")
    return json.loads(out)


def llama_round(a):
    # baton's decode steps follow its prefill (context P..P+N); llama-bench's tg test starts at
    # an empty context unless given a depth. It runs at both: -d P reads the same KV as baton,
    # -d 0 is llama-bench's usual figure (attention over nothing: in baton's disfavour).
    common = [a.llama_bench, "-m", a.model, "-t", str(a.threads), "-r", "1", "-o", "json"]
    common += a.peer_args.split()
    rows = run_json(common + ["-p", str(a.prompt), "-n", "0"])
    pre = next(r["avg_ts"] for r in rows if r["n_prompt"] > 0 and r["n_gen"] == 0)
    if a.gen_prompt:
        depth = ["-gp", f"{a.prompt},{a.gen}"]
    else:
        depth = [] if a.no_depth else ["-d", f"0,{a.prompt}"]
    rows = run_json(common + ["-p", "0", "-n", str(a.gen)] + depth)
    # A -d row names its depth in n_depth, a -gp row its prompt in n_prompt.
    dec = {r.get("n_depth", 0) + r["n_prompt"]: r["avg_ts"] for r in rows if r["n_gen"] > 0}
    return pre, dec.get(a.prompt, dec[0]), dec[0]


def baton_round(a):
    r = run_json([a.baton, "bench", "engine", "-m", a.model, "--threads", str(a.threads),
                  "-p", str(a.prompt), "-n", str(a.gen), "--runs", "1", "--chunk",
                  str(a.prompt), "--no-sampler", "--json"])
    return r["prefill_tok_s"], r["decode_tok_s"], r["read_bandwidth_gbs"], \
        r["decode_bytes_per_token"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--llama-bench", required=True, help="path of llama.cpp's llama-bench")
    ap.add_argument("--baton", default="build/baton")
    ap.add_argument("-t", "--threads", type=int, default=2)
    ap.add_argument("-p", "--prompt", type=int, default=512)
    ap.add_argument("-n", "--gen", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--peer-args", default="", help="extra flags for the peer's llama-bench")
    ap.add_argument("--no-depth", action="store_true",
                    help="the peer's llama-bench has no -d: time its decode from empty only")
    ap.add_argument("--gen-prompt", action="store_true",
                    help="the peer's llama-bench times decode after a prompt with -gp P,N")
    ap.add_argument("--peer-name", default="llama.cpp", help="the peer's name in the table")
    a = ap.parse_args()
    if a.rounds < 1 or a.prompt < 1 or a.gen < 1 or a.threads < 1:
        sys.exit("compare_llama: --rounds, -p, -n and -t must be >= 1")
    if a.gen_prompt and a.no_depth:
        sys.exit("compare_llama: --gen-prompt and --no-depth exclude each other; give one")
    lp, ld, ld0, bp, bd, bw = [], [], [], [], [], []
    bytes_per_token = 0.0
    for i in range(a.rounds):
        p, d, d0 = llama_round(a)
        lp.append(p)
        ld.append(d)
        ld0.append(d0)
        p2, d2, g, bytes_per_token = baton_round(a)
        bp.append(p2)
        bd.append(d2)
        bw.append(g)
        print(f"round {i + 1}: {a.peer_name} pp {p:.1f} tg {d:.2f} (empty context {d0:.2f}) | baton "
              f"pp {p2:.1f} tg {d2:.2f} | read bandwidth {g:.1f} GB/s", file=sys.stderr)
    med = statistics.median
    gbs = med(bw)

    def share(tok_s):
        return 100.0 * tok_s * bytes_per_token / (gbs * 1e9)

    def row(name, ours, theirs, fmt, what):
        # Ratio of the medians, and the median of each round's ratio (the two engines ran back to
        # back in a round, so that one discounts the machine's swings between rounds).
        paired = med([o / t for o, t in zip(ours, theirs)])
        print(f"{name:10} {med(theirs):12{fmt}} {med(ours):12{fmt}} {med(ours) / med(theirs):7.2f}x"
              f" {paired:7.2f}x   {what}")

    print(f"model      {a.model} ({a.threads} threads, medians of {a.rounds} rounds)")
    print(f"{'':10} {a.peer_name:>12} {'baton':>12} {'ratio':>8} {'paired':>8}")
    row("prefill", bp, lp, ".1f", f"tok/s, {a.prompt}-token prompt")
    if not a.no_depth:
        row("decode", bd, ld, ".2f", f"tok/s, {a.gen} tokens after the prompt")
    row("decode@0", bd, ld0, ".2f",
        f"tok/s, {a.peer_name} from an empty context (baton still after the prompt)")
    print(f"{'bandwidth':10} {share(med(ld)):11.1f}% {share(med(bd)):11.1f}%"
          f"   of {gbs:.1f} GB/s read (measured by baton in the same rounds)")


if __name__ == "__main__":
    main()
