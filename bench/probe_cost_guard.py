#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The probe programs' cost against a baseline build: fails past a ratio.

    sudo bench/probe_cost_guard.py --baseline REV|DIR|BINARY [--build build]
                                   [--max-ratio 1.15] [--rounds 9] [--calls 200000]
                                   [--events none --events default ...]
                                   [--func bench_push_rbp] [--attach session]
                                   [--measured REV|DIR|BINARY]

Runs the same workload (--build's callbench on libbenchfn.so) under the
measured build's profiler and the baseline's, taking turns within each
round (the order flips every round, so a drift of the machine's speed
weighs on both alike), and reads the time spent inside the probe programs
per probed call from the kernel's bpf_stats, which the trap's cost does not
move. Each round gives one ratio, measured over baseline; the verdict is
the median of the rounds' ratios, per event set. Exits 1 when any event
set's median ratio is above --max-ratio, 0 otherwise, 2 on a usage error.

--baseline takes a git revision of this repository (built once into a
cache directory under /var/tmp, reused next time), a build directory, or a
dlprof-bpf binary. "default" as an event set runs without -e: the
profiler's own default events, whatever the machine has.
Run it before landing any change to bpf/ (bench/README.md).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from overhead import probed_run  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = "/var/tmp/dlprof-guard"


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout.strip()


def build_revision(rev):
    """A dlprof-bpf binary built from git revision rev, in a cache directory kept for the next run."""
    try:
        sha = run(["git", "-C", REPO, "rev-parse", "--verify", rev + "^{commit}"])
    except subprocess.CalledProcessError:
        sys.exit(f"probe_cost_guard: '{rev}' is neither a path nor a revision of {REPO}; "
                 "give a build directory, a dlprof-bpf binary or a git revision")
    top = os.path.join(CACHE, sha)
    binary = os.path.join(top, "build", "user", "dlprof-bpf")
    if os.path.isfile(binary):
        return binary
    os.makedirs(CACHE, exist_ok=True)
    src = tempfile.mkdtemp(prefix="src-", dir=CACHE)
    try:
        subprocess.run(["git", "-C", REPO, "worktree", "add", "--detach", src, sha], check=True,
                       capture_output=True)
        print(f"building {rev} ({sha[:12]}) into {top}", flush=True)
        subprocess.run(["meson", "setup", os.path.join(top, "build"), src], check=True, capture_output=True)
        subprocess.run(["meson", "compile", "-C", os.path.join(top, "build"), "user/dlprof-bpf"], check=True,
                       capture_output=True)
    except subprocess.CalledProcessError as e:
        sys.exit(f"probe_cost_guard: cannot build {rev}: {e.stderr.decode(errors='replace')[-400:]}")
    finally:
        subprocess.run(["git", "-C", REPO, "worktree", "remove", "--force", src], capture_output=True)
    return binary


def profiler_of(path_or_rev):
    if os.path.isfile(path_or_rev):
        return os.path.abspath(path_or_rev)
    if os.path.isdir(path_or_rev):
        binary = os.path.join(path_or_rev, "user", "dlprof-bpf")
        if not os.path.isfile(binary):
            sys.exit(f"probe_cost_guard: no user/dlprof-bpf in build directory {path_or_rev}; build it first")
        return os.path.abspath(binary)
    return build_revision(path_or_rev)


def in_program_ns(profiler, events, a, bench, lib):
    # One CPU for the profiler and its workload, the same for every run: a run that
    # migrates, or lands on the CPU the machine's other work prefers, is not the build's doing.
    cpu = max(os.sched_getaffinity(0))
    cmd = ["taskset", "-c", str(cpu), profiler, "--json", "--attach", a.attach, "--lib", lib, "--func", a.func]
    if events != "default":
        cmd += ["-e", events]
    return probed_run(cmd + ["--", bench, a.func, str(a.calls)], a.calls)[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", required=True, help="a git revision, a build directory or a dlprof-bpf binary")
    ap.add_argument("--build", default="build", help="the build directory whose workload runs (and whose profiler is "
                    "measured, unless --measured names another)")
    ap.add_argument("--measured", help="a git revision, a build directory or a binary to measure instead of --build's")
    ap.add_argument("--max-ratio", type=float, default=1.15)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--calls", type=int, default=200000)
    ap.add_argument("--events", action="append", help="an -e value, or 'default'; repeatable (default: none, default)")
    ap.add_argument("--func", default="bench_push_rbp")
    ap.add_argument("--attach", default="session")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("probe_cost_guard: needs root (it loads BPF programs and turns on bpf_stats)")
    bench = os.path.join(a.build, "bench", "callbench")
    lib = os.path.join(a.build, "bench", "libbenchfn.so")
    for f in (bench, lib):
        if not os.path.isfile(f):
            sys.exit(f"probe_cost_guard: {f} missing; build {a.build} first (meson compile -C {a.build})")
    measured = profiler_of(a.measured or os.path.join(a.build, "user", "dlprof-bpf"))
    baseline = profiler_of(a.baseline)
    event_sets = a.events or ["none", "default"]
    with open("/proc/sys/kernel/bpf_stats_enabled") as f:
        stats_was = f.read().strip()
    with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
        f.write("1")
    ratios = {ev: [] for ev in event_sets}
    ns = {(ev, who): [] for ev in event_sets for who in ("new", "base")}
    try:
        for r in range(a.rounds):
            for ev in event_sets:
                order = [("new", measured), ("base", baseline)]
                if r % 2:
                    order.reverse()
                got = {who: in_program_ns(p, ev, a, bench, lib) for who, p in order}
                for who in got:
                    ns[(ev, who)].append(got[who])
                ratios[ev].append(got["new"] / got["base"])
                print(f"round {r + 1:>2} {ev:<32} new {got['new']:7.1f} ns  base {got['base']:7.1f} ns  "
                      f"{ratios[ev][-1]:.2f}x", flush=True)
    finally:
        with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
            f.write(stats_was)
    print(f"\nin-program ns per probed call ({a.func}, {a.attach}, {a.rounds} rounds of {a.calls} calls), "
          f"measured {measured} against {baseline}:")
    failed = False
    for ev in event_sets:
        m = statistics.median(ratios[ev])
        verdict = "ok" if m <= a.max_ratio else f"FAIL: above {a.max_ratio:.2f}x"
        failed |= m > a.max_ratio
        least = min(ns[(ev, 'new')]) / min(ns[(ev, 'base')])
        print(f"  {ev:<32} new {statistics.median(ns[(ev, 'new')]):7.1f}  base "
              f"{statistics.median(ns[(ev, 'base')]):7.1f}  median ratio {m:.2f}x "
              f"(rounds {min(ratios[ev]):.2f}-{max(ratios[ev]):.2f}; least/least {least:.2f}x)  {verdict}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
