#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Added latency per probed call: the same workload without probes and under
dlprof-bpf, interleaved in one invocation (these machines are noisy),
medians of --runs runs.

    sudo bench/overhead.py [--build build] [--calls 1000000] [--runs 7]
                           [--func bench_push_rbp ...] [--attach auto]
                           [--events none --events page-faults,context-switches ...]

Prints, per function and event set: ns/call without and with probes, the
added ns per call, and the ratio probed/unprobed.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

SOFTWARE_SETS = ["none", "page-faults,context-switches",
                 "page-faults,context-switches,cpu-migrations,minor-faults"]


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
    ap.add_argument("--events", action="append",
                    help="an -e value; repeat for several sets (default: none, 2 and 4 software events)")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("overhead.py: needs root (it loads BPF programs)")
    dlprof = os.path.join(a.build, "user", "dlprof-bpf")
    bench = os.path.join(a.build, "bench", "callbench")
    lib = os.path.join(a.build, "bench", "libbenchfn.so")
    funcs = a.func or ["bench_push_rbp"]
    event_sets = a.events or SOFTWARE_SETS
    print(f"median of {a.runs} runs x {a.calls} calls, attach={a.attach}")
    print(f"{'function':<16} {'events':<58} {'base ns':>8} {'probed':>8} {'added':>8} {'ratio':>7}")
    for fn in funcs:
        base = []
        probed = {ev: [] for ev in event_sets}
        for _ in range(a.runs):
            base.append(ns_per_call([bench, fn, str(a.calls)]))
            for ev in event_sets:
                probed[ev].append(ns_per_call([dlprof, "--attach", a.attach, "-e", ev, "--lib", lib,
                                               "--func", fn, "--", bench, fn, str(a.calls)]))
        b = statistics.median(base)
        for ev in event_sets:
            p = statistics.median(probed[ev])
            print(f"{fn:<16} {ev:<58} {b:>8.1f} {p:>8.1f} {p - b:>8.1f} {p / b:>7.1f}")


if __name__ == "__main__":
    main()
