#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Added latency per probed call: the same workload without probes and under
dlprof-bpf, interleaved in one invocation (these machines are noisy), medians
of --runs runs.

    sudo bench/overhead.py [--build build] [--calls 1000000] [--runs 7]
                           [--func bench_push_rbp] [--attach auto|multi|classic]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys


def ns_per_call(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    m = re.search(r"ns_per_call ([0-9.]+)", out)
    if not m:
        sys.exit(f"no ns_per_call in output of {cmd}: {out!r}")
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--calls", type=int, default=1000000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--func", action="append")
    ap.add_argument("--attach", default="auto")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("overhead.py: needs root (it loads BPF programs)")
    dlprof = os.path.join(a.build, "user", "dlprof-bpf")
    bench = os.path.join(a.build, "bench", "callbench")
    lib = os.path.join(a.build, "bench", "libbenchfn.so")
    funcs = a.func or ["bench_push_rbp", "bench_test_je", "bench_lea_ret"]
    print(f"{'function':<16} {'base ns':>9} {'probed ns':>10} {'added ns':>9} {'ratio':>7}   "
          f"(median of {a.runs} runs x {a.calls} calls, attach={a.attach})")
    for fn in funcs:
        base, probed = [], []
        for _ in range(a.runs):
            base.append(ns_per_call([bench, fn, str(a.calls)]))
            probed.append(ns_per_call([dlprof, "--attach", a.attach, "--lib", lib, "--func", fn,
                                       "--", bench, fn, str(a.calls)]))
        b, p = statistics.median(base), statistics.median(probed)
        print(f"{fn:<16} {b:>9.1f} {p:>10.1f} {p - b:>9.1f} {p / b:>7.1f}")


if __name__ == "__main__":
    main()
