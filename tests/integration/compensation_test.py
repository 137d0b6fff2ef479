#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Overhead-compensated latency: an outer function spins around 20 calls of
a probed function whose entry the kernel emulates (push %rbp). Its
compensated latency must be no less than 90% of its unprobed time, which
the workload measures itself, and no more than 125% of it; its raw latency
is far off (the probes of the 20 inner calls are inside it).

Each nested pair is taken off at the least cost the calibration saw, a
bound that holds call by call: a median had put the outer call below its
unprobed time (0.7x) whenever the vCPU ran faster than while it was
calibrated. What is left is 21 times what the pairs cost above that least
while the workload runs: a few percent of a pair that costs 1 us on one VM
and 7-8 us on another, and on a VM whose vCPU speed drifts, up to 20-50%
of it. The outer call therefore spins as long as 40 pairs cost (at least
40 us), so that the test asks the same precision of every machine; the
workload and the profiler share one CPU, since vCPUs differ by several
percent in what a probe costs; and the unprobed time is an unprobed twin's
(the same code, linked into the driver), timed call by call beside the
probed calls, since a vCPU's speed changes by tens of percent from one
second to the next. The driver also times the probed calls, so each run
knows what its pairs really cost beside the calibration; a run whose pairs
cost more than 30% off the calibrated median (seen once in CI: 1.9x, the
twin itself 25% slower than when it was sized) is outside what the test
can ask of compensation, and is run again, up to 3 times. 10% below the
twin is what a p50 read off a histogram bucket (~6% wide) and the twin's
own timing leave room for: below it, a call would have run faster than it
can unprobed.

Runner and helpers: itest.py; the workload: tests/progs/comp_driver.c."""
import json
import os
import subprocess
import sys

import itest
from itest import *  # noqa: F401,F403 (the shared helpers and environment)

COMP_DRIVER = os.environ.get("COMP_DRIVER", "")
COMP_LIB = os.environ.get("COMP_LIB", "")


def pair_cost_ns(cpu):
    """What an emulated probe pair costs on cpu: the profiler's own calibration, on a command that calls nothing."""
    p = subprocess.run(base_args(["--lib", COMP_LIB, "--", "/bin/true"]), capture_output=True, text=True,
                       timeout=60, preexec_fn=pinned_to(cpu))
    check(p.returncode == 0, f"calibration run: exit {p.returncode}: {p.stderr}")
    return json.loads(p.stdout)["probe_cost_ns"]["emulated"]["pair"]


def profile_comp(extra, spin_pairs, inner=20, calls=300, mode=()):
    """(the unprobed twin's median ns, the probed calls' median ns as the driver timed them,
    the profile's JSON) of one comp_driver run whose outer call spins as long as spin_pairs
    probe pairs cost."""
    cpu = max(os.sched_getaffinity(0))
    spin_ns = max(spin_pairs * 1000, spin_pairs * pair_cost_ns(cpu))
    d = subprocess.Popen([COMP_DRIVER, str(spin_ns), str(inner), str(calls)] + list(mode), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True, preexec_fn=pinned_to(cpu))
    try:
        line = d.stdout.readline()
        check(line.startswith("ready "), f"comp_driver said {line!r}")
        prof = start_profiler(["--lib", COMP_LIB, "-p", str(d.pid)] + list(extra), cpu=cpu)
        drive(d)
        line = d.stdout.readline().split()
        check(len(line) == 4 and line[0] == "unprobed_ns", f"comp_driver said {line!r}")
        return int(line[1]), int(line[3]), stop_profiler(prof)
    finally:
        finish(d)


@modes("session", "multi", "classic")
def test_compensated_outer_near_unprobed():
    for attempt in range(1, 4):
        unprobed, probed, doc = profile_comp([], spin_pairs=40)
        check(doc["latency"] == "compensated", f"latency {doc['latency']}: {doc.get('compensation_error')}")
        costs = doc["probe_cost_ns"]
        check(costs["emulated"]["pair"] > 0 and costs["single_stepped"]["pair"] > costs["emulated"]["pair"],
              f"calibrated costs {costs}")
        outer, inner = func(doc, "comp_outer"), func(doc, "comp_inner")
        check(outer["calls"] == 300 and inner["calls"] == 300 * 20, f"calls {outer['calls']}, {inner['calls']}")
        check(outer["raw_total_ns"] > outer["total_ns"], "raw times not kept beside the compensated ones")
        check(0 < costs["emulated"]["pair_least"] <= costs["emulated"]["pair"], f"calibrated costs {costs}")
        off = outer["p50_ns"] / unprobed
        # What the 21 pairs inside one outer call cost in this run (20 nested, its own), per pair.
        drift = (probed - unprobed) / 21 / costs["emulated"]["pair"]
        print(f"attempt {attempt}: unprobed {unprobed} ns, compensated p50 {outer['p50_ns']} ns ({off:.2f}x), "
              f"raw avg {outer['raw_avg_ns']} ns, probe pair {costs['emulated']['pair']} ns calibrated "
              f"(least {costs['emulated']['pair_least']} ns), {drift:.2f}x that in the run")
        if 0.9 <= off <= 1.25 or 0.7 <= drift <= 1.3:
            break
    check(0.9 <= off <= 1.25 or 0.7 <= drift <= 1.3,
          f"3 runs: the pairs cost {drift:.2f}x their calibration in the last; "
          "the vCPU's trap cost drifts too much here to check compensation")
    check(0.9 <= off <= 1.25, f"compensated p50 {outer['p50_ns']} ns is {off:.2f}x the unprobed {unprobed} ns")


@modes("session", "multi", "classic")
def test_single_stepped_never_faster_than_unprobed():
    """A function whose probes are single-stepped (comp_stepped, probed at its mov): a stepped
    pair's cost varies call to call by more than a short call takes, so no calibrated value can
    be taken off each call (a median had put half of such calls at 1 ns). Its times are shown
    raw and said to be: whether the call is far shorter than its probes or longer, none comes
    out below the unprobed twin's time."""
    for spin_pairs in (0.02, 2):
        unprobed, _, doc = profile_comp(["--placement", "entry", "--func", "comp_stepped"], spin_pairs=spin_pairs,
                                        inner=1, calls=400, mode=["stepped"])
        check(doc["latency"] == "compensated", f"latency {doc['latency']}: {doc.get('compensation_error')}")
        f = func(doc, "comp_stepped")
        costs = doc["probe_cost_ns"]["single_stepped"]
        print(f"spin {spin_pairs} pairs: unprobed {unprobed} ns; p50 {f['p50_ns']} min {f['min_ns']}, "
              f"raw avg {f['raw_avg_ns']}; stepped pair {costs['pair']} ns median, {costs['pair_least']} least")
        check(f["calls"] == 400 and f["timed"] == 400, f"calls {f['calls']}, timed {f['timed']}")
        check(0 < costs["pair_least"] <= costs["pair"], f"stepped costs {costs}")
        check(f.get("latency") == "raw" and f["avg_ns"] == f["raw_avg_ns"], f"a stepped function's times: {f}")
        check(f["min_ns"] >= unprobed, f"a call came out at {f['min_ns']} ns, unprobed {unprobed} ns")
        check(0 < f["oncpu_ns"] <= f["total_ns"], f"on-CPU {f['oncpu_ns']} of {f['total_ns']} ns")


@modes("session")
def test_raw_latency_includes_probes():
    """--raw-latency: the same call measured with its probes' cost (20 nested pairs)."""
    unprobed, _, doc = profile_comp(["--raw-latency"], spin_pairs=20)
    outer = func(doc, "comp_outer")
    check(doc["latency"] == "raw" and "probe_cost_ns" not in doc, f"latency {doc['latency']}")
    check(outer["raw_total_ns"] == outer["total_ns"], "raw_total_ns differs from total_ns in a raw profile")
    off = outer["p50_ns"] / unprobed
    print(f"unprobed {unprobed} ns, raw p50 {outer['p50_ns']} ns ({off:.2f}x)")
    check(off >= 1.5, f"raw p50 {outer['p50_ns']} ns only {off:.2f}x the unprobed {unprobed} ns")


if __name__ == "__main__":
    sys.exit(itest.run(globals()))
