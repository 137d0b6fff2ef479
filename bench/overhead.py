#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Added latency per probed call: the same workload without probes and under
dlprof-bpf, interleaved in one invocation (these machines are noisy),
medians of --runs runs.

    sudo bench/overhead.py [--build build] [--calls 1000000] [--runs 7]
                           [--func bench_push_rbp ...] [--attach auto]
                           [--events none --events page-faults,context-switches ...]
                           [--record]   (also trace mode, writing a trace to a temp dir)
                           [--baseline build-old ...]  (also that build's profiler, interleaved)
                           [--by function --by caller ...]  (each --by key, interleaved)

Prints, per function and event set: ns/call without and with probes, the
added ns per call, and the ratio probed/unprobed; with --baseline, each
baseline's in-program time over the measured build's ("x base": below 1.0
the measured build costs less); with --by, each key's in-program time over
the first key's, the median of the runs' ratios.
"""
import argparse
import json
import os
import re
import statistics
import shutil
import subprocess
import sys
import tempfile

SOFTWARE_SETS = ["none", "page-faults,context-switches",
                 "page-faults,context-switches,cpu-migrations,minor-faults"]


def ns_per_call(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    m = re.search(r"ns_per_call ([0-9.]+)", out)
    if not m:
        sys.exit(f"no ns_per_call in output of {cmd}: {out!r}")
    return float(m.group(1))


def probed_run(cmd, calls):
    """ns/call of the workload under the profiler, and the probe programs' own ns per call.

    Per call is per two program runs (entry and return, in every attach
    mode): the runs include the calls a build makes at start to calibrate
    its latency compensation (~4,400 here), which are not the workload's.
    """
    p = subprocess.run(cmd, capture_output=True, text=True, check=True)
    m = re.search(r"ns_per_call ([0-9.]+)", p.stdout)
    doc = json.loads(p.stdout[p.stdout.index("{"):])
    runs = doc.get("probe_runs") or 2 * calls
    return float(m.group(1)), doc["probe_run_ns"] / (runs / 2)


def print_ratios(fn, profilers, event_sets, modes, inbpf):
    """The measured build's in-program time over each baseline's, per mode and event set."""
    for m in sorted({m.split("/")[0] for m in modes}):
        for ev in event_sets:
            new = statistics.median(inbpf[(f"{m}/new", ev)])
            for label in profilers:
                if label == "new":
                    continue
                old = statistics.median(inbpf[(f"{m}/{label}", ev)])
                print(f"{fn:<16} {m:<10} {ev:<58} bpf new/{label}: {new:.1f}/{old:.1f} = {new / old:.2f}x {label}")


def print_by_ratios(fn, keys, event_sets, modes, inbpf):
    """Each --by key's in-program time over the first key's: the median of the runs' ratios."""
    for m in sorted({m.split("+")[0] for m in modes}):
        for ev in event_sets:
            first = inbpf[(f"{m}+{keys[0]}", ev)]
            for k in keys[1:]:
                vals = inbpf[(f"{m}+{k}", ev)]
                ratios = sorted(v / f for v, f in zip(vals, first))
                print(f"{fn:<16} {m:<10} {ev:<58} bpf --by {k}/{keys[0]}: {statistics.median(vals):.1f}/"
                      f"{statistics.median(first):.1f}, median ratio {statistics.median(ratios):.3f}x "
                      f"(runs {ratios[0]:.2f}-{ratios[-1]:.2f})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--calls", type=int, default=1000000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--func", action="append")
    ap.add_argument("--attach", default="auto")
    ap.add_argument("--events", action="append",
                    help="an -e value; repeat for several sets (default: none, 2 and 4 software events)")
    ap.add_argument("--record", action="store_true", help="also measure trace mode (record -o)")
    ap.add_argument("--baseline", action="append",
                    help="another build directory (or a dlprof-bpf binary) whose profiler runs interleaved with "
                    "--build's (the workload is --build's), to compare versions in one invocation; repeatable")
    ap.add_argument("--by", action="append",
                    help="a --by key; repeat to compare keys, interleaved (the first is the reference)")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("overhead.py: needs root (it loads BPF programs)")
    dlprof = os.path.join(a.build, "user", "dlprof-bpf")
    bench = os.path.join(a.build, "bench", "callbench")
    lib = os.path.join(a.build, "bench", "libbenchfn.so")
    funcs = a.func or ["bench_push_rbp"]
    event_sets = a.events or SOFTWARE_SETS
    modes = ["live", "record"] if a.record else ["live"]
    # The profilers compared, by label; one without --baseline.
    profilers = {"new": dlprof}
    for i, b in enumerate(a.baseline or []):
        label = "old" if len(a.baseline) == 1 else f"old{i + 1}"
        profilers[label] = b if os.path.isfile(b) else os.path.join(b, "user", "dlprof-bpf")
    if a.baseline:
        modes = [f"{m}/{b}" for m in modes for b in profilers]
    if a.by:
        modes = [f"{m}+{k}" for m in modes for k in a.by]
    tmp = tempfile.mkdtemp(prefix="dlprof-bench-")
    # The kernel times BPF programs only while this is on; the profiler reports it in its JSON.
    with open("/proc/sys/kernel/bpf_stats_enabled") as f:
        stats_was = f.read().strip()
    with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
        f.write("1")
    print(f"median of {a.runs} runs x {a.calls} calls, attach={a.attach}; "
          f"bpf = ns per call inside the probe programs (bpf_stats)")
    print(f"{'function':<16} {'mode':<10} {'events':<58} {'base ns':>8} {'probed':>8} {'added':>8} {'ratio':>7} {'bpf':>7}")
    try:
        for fn in funcs:
            base = []
            probed = {(m, ev): [] for m in modes for ev in event_sets}
            inbpf = {(m, ev): [] for m in modes for ev in event_sets}
            for run in range(a.runs):
                base.append(ns_per_call([bench, fn, str(a.calls)]))
                for m, ev in probed:
                    head = [profilers[m.split("+")[0].split("/")[1]] if a.baseline else dlprof]
                    if m.startswith("record"):
                        head += ["record", "-o", os.path.join(tmp, f"t{run}-{len(probed[(m, ev)])}-{ev}")]
                    if "+" in m:
                        head += ["--by", m.split("+")[1]]
                    wall, bpf = probed_run(head + ["--json", "--attach", a.attach, "-e", ev, "--lib", lib,
                                                   "--func", fn, "--", bench, fn, str(a.calls)], a.calls)
                    probed[(m, ev)].append(wall)
                    inbpf[(m, ev)].append(bpf)
                    shutil.rmtree(tmp)
                    os.mkdir(tmp)
            b = statistics.median(base)
            for (m, ev), vals in probed.items():
                p = statistics.median(vals)
                k = statistics.median(inbpf[(m, ev)])
                print(f"{fn:<16} {m:<10} {ev:<58} {b:>8.1f} {p:>8.1f} {p - b:>8.1f} {p / b:>7.1f} {k:>7.1f}")
            if a.baseline and not a.by:
                print_ratios(fn, profilers, event_sets, modes, inbpf)
            if a.by and len(a.by) > 1:
                print_by_ratios(fn, a.by, event_sets, modes, inbpf)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
            f.write(stats_was)


if __name__ == "__main__":
    main()
