#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Attach and detach time per attach mode for every function of big
libraries, as dlprof-bpf itself reports them (attach_ms: first attach call
to last; detach_ms: closing every link), plus the profiler's peak memory.
Medians of --runs runs, modes interleaved in one invocation, each mode also
as a ratio to multi's (or the first mode's) in the same run.

    sudo bench/attach.py [--build build] [--runs 3]
    sudo bench/attach.py --libs libcrypto.so.3 --modes multi,classic --runs 1 --no-idle

By default classic mode runs only on the small libz: the kernel releases
classic probes one grace period at a time (probe/detacher.h), minutes for
a big library. --modes with classic runs it on every library of --libs.
A mode the kernel does not have is skipped (a Debian 12 kernel has only
classic).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

DEFAULT_MODES = {
    "libcrypto.so.3": ["session", "multi"],
    "libc.so.6": ["session", "multi"],
    "libz.so.1": ["session", "multi", "classic"],
}


class Unsupported(Exception):
    pass


def one_run(dlprof, lib, mode, pid):
    p = subprocess.run([dlprof, "--json", "--attach", mode, "-e", "none", "--lib", lib,
                        "-p", str(pid), "-d", "0.2"], capture_output=True, text=True)
    if p.returncode == 2 and "not supported" in p.stderr:
        raise Unsupported(p.stderr.strip())
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


def report(lib, results, runs):
    med = lambda r, k: statistics.median(x[k] for x in r)
    modes = [m for m in results if results[m]]
    ref = "multi" if "multi" in modes else modes[0] if modes else None
    for m in modes:
        r = results[m]
        n = r[0]["functions_attached"]
        ratio = ""
        if ref and m != ref:
            ratio = (f"  x{ref}: attach {med(r, 'attach_ms') / med(results[ref], 'attach_ms'):.1f}, "
                     f"detach {med(r, 'detach_ms') / med(results[ref], 'detach_ms'):.1f}")
        print(f"{lib:<16} {m:<8} {n:>9} {r[0]['functions_skipped']:>7} "
              f"{med(r, 'attach_ms'):>10.1f} {med(r, 'detach_ms'):>10.1f} "
              f"{med(r, 'attach_ms') / max(n, 1):>8.3f} {med(r, 'detach_ms') / max(n, 1):>8.2f} "
              f"{med(r, 'profiler_max_rss_kib') / 1024:>8.1f}{ratio}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--libs", default=",".join(DEFAULT_MODES), help="comma-separated libraries")
    ap.add_argument("--modes", help="comma-separated attach modes for every library (default: per library)")
    ap.add_argument("--no-idle", action="store_true", help="leave out the idle program's cost")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("attach.py: needs root (it loads BPF programs)")
    dlprof = os.path.join(a.build, "user", "dlprof-bpf")
    libs = a.libs.split(",")
    # A process that maps every library, so the probes are really installed in it.
    target = subprocess.Popen(["python3", "-c", "import ctypes, sys, time; "
                               "[ctypes.CDLL(l) for l in sys.argv[1:]]; time.sleep(3600)"] + libs)
    time.sleep(0.5)
    try:
        print(f"{'library':<16} {'mode':<8} {'functions':>9} {'skipped':>7} {'attach ms':>10} "
              f"{'detach ms':>10} {'att/fn':>8} {'det/fn':>8} {'rss MiB':>8}   (median of {a.runs}; "
              f"ms per function)", flush=True)
        for lib in libs:
            modes = a.modes.split(",") if a.modes else DEFAULT_MODES.get(lib, ["session", "multi"])
            results = {m: [] for m in modes}
            for _ in range(a.runs):
                for m in list(results):
                    try:
                        results[m].append(one_run(dlprof, lib, m, target.pid))
                    except Unsupported as e:
                        print(f"{lib:<16} {m:<8} skipped: {e}", flush=True)
                        del results[m]
            report(lib, results, a.runs)
    finally:
        target.kill()
        target.wait()
    if not a.no_idle:
        idle_cost(dlprof, os.path.join(a.build, "bench", "callbench"), a.runs)


if __name__ == "__main__":
    main()
