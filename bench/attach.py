#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Attach and detach time per attach mode for every function of big
libraries, as dlprof-bpf itself reports them (attach_ms: first attach call
to last; detach_ms: closing every link), plus the profiler's peak memory.
Medians of --runs runs, modes interleaved in one invocation.

    sudo bench/attach.py [--build build] [--runs 3]

Classic mode detaches each uprobe in ~110 ms here, so it runs only on the
small libz; the multi-link modes run on libcrypto.so.3 and libc.so.6.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

CASES = [
    ("libcrypto.so.3", ["session", "multi"]),
    ("libc.so.6", ["session", "multi"]),
    ("libz.so.1", ["session", "multi", "classic"]),
]


def one_run(dlprof, lib, mode, pid):
    p = subprocess.run([dlprof, "--json", "--attach", mode, "-e", "none", "--lib", lib,
                        "-p", str(pid), "-d", "0.2"], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{lib} {mode}: {p.stderr.strip()}")
    return json.loads(p.stdout)


def callbench_ns(bench):
    out = subprocess.run([bench, "bench_push_rbp", "2000000"], capture_output=True, text=True).stdout
    return float(re.search(r"ns_per_call ([0-9.]+)", out).group(1))


def idle_cost(dlprof, bench, runs):
    """A program calling none of the probed functions, alone and while all of
    libcrypto and libc are probed in every process."""
    alone, probed = [], []
    for _ in range(runs):
        alone.append(callbench_ns(bench))
        prof = subprocess.Popen([dlprof, "-e", "none", "--lib", "libcrypto.so.3", "--lib", "libc.so.6"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        while "profiling" not in prof.stderr.readline():
            if prof.poll() is not None:
                sys.exit("idle: the profiler did not start")
        probed.append(callbench_ns(bench))
        prof.terminate()
        prof.wait()
    a, p = statistics.median(alone), statistics.median(probed)
    print(f"idle program: {a:.2f} ns/call alone, {p:.2f} ns/call with libcrypto+libc probed "
          f"system-wide (ratio {p / a:.3f})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("attach.py: needs root (it loads BPF programs)")
    dlprof = os.path.join(a.build, "user", "dlprof-bpf")
    # A process that maps every library, so the probes are really installed in it.
    target = subprocess.Popen(["python3", "-c", "import ctypes, time; "
                               "[ctypes.CDLL(l) for l in ('libcrypto.so.3', 'libz.so.1')]; time.sleep(3600)"])
    try:
        print(f"{'library':<16} {'mode':<8} {'functions':>9} {'skipped':>7} {'attach ms':>10} "
              f"{'detach ms':>10} {'rss MiB':>8}   (median of {a.runs})")
        for lib, modes in CASES:
            results = {m: [] for m in modes}
            for _ in range(a.runs):
                for m in modes:
                    results[m].append(one_run(dlprof, lib, m, target.pid))
            for m in modes:
                r = results[m]
                med = lambda k: statistics.median(x[k] for x in r)
                print(f"{lib:<16} {m:<8} {r[0]['functions_attached']:>9} {r[0]['functions_skipped']:>7} "
                      f"{med('attach_ms'):>10.1f} {med('detach_ms'):>10.1f} "
                      f"{med('profiler_max_rss_kib') / 1024:>8.1f}")
    finally:
        target.kill()
        target.wait()
    idle_cost(dlprof, os.path.join(a.build, "bench", "callbench"), a.runs)


if __name__ == "__main__":
    main()
