#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The probe programs' cost against a baseline build: fails past a ratio.

    sudo bench/probe_cost_guard.py --baseline REV|DIR|BINARY [--build build]
                                   [--max-ratio 1.05] [--rounds 11] [--calls 150000]
                                   [--events none --events default ...]
                                   [--func bench_push_rbp] [--attach session]
                                   [--measured REV|DIR|BINARY]

Each round runs the same workload (--build's callbench) twice at once,
on one CPU: one copy under the measured build's profiler, one under the
baseline's. The two workloads load two copies of libbenchfn.so (two
inodes, so each profiler probes only its own workload's calls) and take
turns on the CPU at the scheduler's pace, so whatever the machine does
meanwhile (another VM on the host, a tick's work, a cache flushed) weighs
on both builds alike. Runs one after the other moved by +-15% on a busy VM;
run at once, by a few percent. Which build starts first, and which copy
each loads, swap every round. The time spent inside the probe programs per
probed call comes from the kernel's bpf_stats, which the trap's cost does
not move. Each round gives one ratio, measured over baseline; the verdict
is their geometric mean, per event set. Exits 1 when any event set's mean
ratio is above --max-ratio, 0 otherwise, 2 on a usage error.

--baseline takes a git revision of this repository (built once into a
cache directory under /var/tmp, reused next time), a build directory or a
dlprof-bpf binary. "default" as an event set runs without -e: the
profiler's own default events, whatever the machine has.
Run it before landing any change to bpf/ (bench/README.md).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

LIB = "libbenchfn.so"
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


def launch(profiler, events, a, bench, libdir):
    """The workload under profiler, probing the library copy in libdir only; pinned to one CPU."""
    cpu = max(os.sched_getaffinity(0))
    cmd = ["taskset", "-c", str(cpu), profiler, "--json", "--attach", a.attach,
           "--lib", os.path.join(libdir, LIB), "--func", a.func]
    if events != "default":
        cmd += ["-e", events]
    env = dict(os.environ, LD_LIBRARY_PATH=libdir)
    return subprocess.Popen(cmd + ["--", bench, a.func, str(a.calls)], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def in_program_ns(proc, a):
    """ns inside the probe programs per probed call (an entry and a return) of a finished run."""
    out, err = proc.communicate()
    if proc.returncode:
        sys.exit(f"probe_cost_guard: a profiler failed (rc {proc.returncode}): {err.strip()[-400:]}")
    doc = json.loads(out[out.index("{"):])
    calls = sum(f["calls"] for f in doc["functions"])
    if calls != a.calls:
        sys.exit(f"probe_cost_guard: a profiler counted {calls} of the workload's {a.calls} calls")
    if not doc.get("probe_runs"):
        sys.exit("probe_cost_guard: no bpf_stats in the profiler's JSON (kernel.bpf_stats_enabled)")
    return doc["probe_run_ns"] / (doc["probe_runs"] / 2)


def paired_round(r, builds, events, a, bench, libdirs):
    """Both builds' workloads at once; the start order and the library copies swap every round."""
    order = list(builds.items())
    if r % 2:
        order.reverse()
    dirs = libdirs if (r // 2) % 2 == 0 else libdirs[::-1]
    procs = {who: launch(p, events, a, bench, d) for (who, p), d in zip(order, dirs)}
    return {who: in_program_ns(proc, a) for who, proc in procs.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", required=True, help="a git revision, a build directory or a dlprof-bpf binary")
    ap.add_argument("--build", default="build", help="the build directory whose workload runs (and whose profiler is "
                    "measured, unless --measured names another)")
    ap.add_argument("--measured", help="a git revision, a build directory or a binary to measure instead of --build's")
    ap.add_argument("--max-ratio", type=float, default=1.05)
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--calls", type=int, default=150000)
    ap.add_argument("--events", action="append", help="an -e value, or 'default'; repeatable (default: none, default)")
    ap.add_argument("--func", default="bench_push_rbp")
    ap.add_argument("--attach", default="session")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("probe_cost_guard: needs root (it loads BPF programs and turns on bpf_stats)")
    bench = os.path.join(a.build, "bench", "callbench")
    lib = os.path.join(a.build, "bench", LIB)
    for f in (bench, lib):
        if not os.path.isfile(f):
            sys.exit(f"probe_cost_guard: {f} missing; build {a.build} first (meson compile -C {a.build})")
    builds = {"new": profiler_of(a.measured or os.path.join(a.build, "user", "dlprof-bpf")),
              "base": profiler_of(a.baseline)}
    event_sets = a.events or ["none", "default"]
    # Two copies of the library: two inodes, so that neither profiler's probes fire in the other's workload.
    tmp = tempfile.mkdtemp(prefix="dlprof-guard-")
    libdirs = [os.path.join(tmp, d) for d in ("a", "b")]
    for d in libdirs:
        os.mkdir(d)
        shutil.copy(lib, d)
    with open("/proc/sys/kernel/bpf_stats_enabled") as f:
        stats_was = f.read().strip()
    with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
        f.write("1")
    ratios = {ev: [] for ev in event_sets}
    ns = {(ev, who): [] for ev in event_sets for who in builds}
    try:
        for r in range(a.rounds):
            for ev in event_sets:
                got = paired_round(r, builds, ev, a, bench, libdirs)
                for who in got:
                    ns[(ev, who)].append(got[who])
                ratios[ev].append(got["new"] / got["base"])
                print(f"round {r + 1:>2} {ev:<32} new {got['new']:7.1f} ns  base {got['base']:7.1f} ns  "
                      f"{ratios[ev][-1]:.3f}x", flush=True)
    finally:
        with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
            f.write(stats_was)
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"\nin-program ns per probed call ({a.func}, {a.attach}, {a.rounds} rounds of {a.calls} calls, "
          f"both builds at once), measured {builds['new']} against {builds['base']}:")
    failed = False
    for ev in event_sets:
        m = statistics.geometric_mean(ratios[ev])
        spread = statistics.stdev(ratios[ev]) / len(ratios[ev]) ** 0.5 if len(ratios[ev]) > 1 else float("nan")
        verdict = "ok" if m <= a.max_ratio else f"FAIL: above {a.max_ratio:.2f}x"
        failed |= m > a.max_ratio
        print(f"  {ev:<32} new {statistics.median(ns[(ev, 'new')]):7.1f}  base "
              f"{statistics.median(ns[(ev, 'base')]):7.1f}  mean ratio {m:.3f}x +- {spread:.3f} "
              f"(rounds {min(ratios[ev]):.2f}-{max(ratios[ev]):.2f})  {verdict}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
