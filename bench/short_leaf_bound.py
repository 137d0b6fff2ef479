#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""How often a short function's compensated p50 holds within the bound the
profiler states, two builds taking turns: comp_leaf (~40 ns, a `push %rbp`
leaf of tests/progs) profiled --sets times --profiles times with each build,
workload and profiler on one CPU. For each profile: the unprobed twin's time
(the driver's, timed beside the probed calls), the p50 and its bound (shown
as `<N` when below it), and the pairs' cost in the run over the calibration's
(the driver times the probed calls; the clock's cost cancelled). A profile
holds when its p50 is no further than the bound from the twin's time, or,
shown as `<N`, the twin's time is under N.

    sudo bench/short_leaf_bound.py --baseline OLD_BUILD [--build build] [--sets 3] [--profiles 10]

docs/latency-compensation.md has a run of it.
"""
import argparse
import json
import os
import signal
import statistics
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
CPU = max(os.sched_getaffinity(0))


def pinned():
    os.sched_setaffinity(0, {CPU})


def profile(build, tests_build):
    """(twin ns, p50 ns, bound ns, shown as a bound, the pairs' drift) of one profile of comp_leaf."""
    driver = os.path.join(tests_build, "tests/progs/comp_driver")
    lib = os.path.join(tests_build, "tests/progs/libcomptest.so")
    d = subprocess.Popen([driver, "40", "1", "3000", "leaf"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True, preexec_fn=pinned)
    try:
        d.stdout.readline()
        p = subprocess.Popen([os.path.join(build, "user/dlprof-bpf"), "--json", "--lib", lib, "-p", str(d.pid),
                              "--func", "comp_leaf"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=pinned)
        while True:
            line = p.stderr.readline()
            if not line or "profiling" in line:
                break
        d.stdin.write("\n")
        d.stdin.flush()
        d.stdout.readline()
        said = d.stdout.readline().split()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
        if p.returncode:
            raise SystemExit(f"{build}: exit {p.returncode}: {err.strip()}")
    finally:
        if d.poll() is None:
            d.stdin.write("\n")
            d.stdin.flush()
            d.wait(timeout=30)
    doc = json.loads(out)
    f = next(x for x in doc["functions"] if x["name"] == "comp_leaf")
    costs = doc["probe_cost_ns"]["emulated"]
    twin, probed, single = int(said[1]), int(said[3]), int(said[5])
    return twin, f["p50_ns"], f["bound_ns"], "p50_ns" in f["bounded"], (probed - single) / costs["pair"]


def holds(r):
    twin, p50, bound, bounded, _ = r
    return twin <= bound if bounded else abs(p50 - twin) <= bound


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--baseline", required=True, help="the other build directory")
    ap.add_argument("--sets", type=int, default=3)
    ap.add_argument("--profiles", type=int, default=10)
    a = ap.parse_args()
    builds = {"baseline": os.path.abspath(a.baseline), "build": os.path.abspath(a.build)}
    got = {k: [] for k in builds}
    for s in range(a.sets):
        for name, build in builds.items():
            # The workload is this tree's: the baseline's driver may print less.
            rs = [profile(build, builds["build"]) for _ in range(a.profiles)]
            got[name] += rs
            print(f"set {s + 1} {name:8}: holds {sum(map(holds, rs))}/{len(rs)}; p50-twin/bound "
                  + " ".join(f"{r[1] - r[0]}/{'<' if r[3] else ''}{r[2]}" for r in rs)
                  + "; drift " + " ".join(f"{r[4]:.2f}" for r in rs))
    for name, rs in got.items():
        print(f"{name:8}: holds in {sum(map(holds, rs))} of {len(rs)}; bound median {statistics.median(r[2] for r in rs)} "
              f"ns ({min(r[2] for r in rs)}-{max(r[2] for r in rs)}); drift median {statistics.median(r[4] for r in rs):.3f}")


if __name__ == "__main__":
    main()
