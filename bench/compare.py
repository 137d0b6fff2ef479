#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Added ns per probed call, dlprof-bpf in each attach mode side by side
with bpftrace and BCC's funclatency (Debian's builds) on the same workload,
interleaved in one invocation; medians of --runs runs.

    sudo bench/compare.py [--build build] [--calls 300000] [--runs 5] [--modes session,multi,classic]
                          [--func bench_push_rbp ...] [--events default|none|LIST]
                          [--only dlprof,floor]   (skip bpftrace and funclatency)

The workload is bench/callbench calling one function of bench/benchfn.S:
bench_push_rbp (push %rbp first: emulated), bench_test_je (test; je:
dlprof-bpf moves its probe to the je), bench_lea_ret (nothing to emulate).
"empty pair" is bpftrace with empty uprobe and uretprobe bodies. "floor"
rows are bench/probe_floor: dlprof-bpf's own probes (same places, same
attach mode) with empty programs, the uprobe mechanism alone; a dlprof row
minus its floor row is dlprof-bpf's BPF work. "floor classic entry" puts an
empty pair on the entry as bpftrace does: floor-at-entry / floor-placed is
the most any placement can gain on this machine. "floor+clock" rows are
the same empty programs reading the clock once each: the least a latency
measurement costs. "x floor" is a dlprof
row's added ns over its floor row's: 1.10x means dlprof-bpf's programs add
10% to what the empty ones cost. dlprof-bpf runs with its default events
(--events default) unless told otherwise.
"""
import argparse
import glob
import os
import re
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile

FUNCS = ["bench_push_rbp", "bench_test_je", "bench_lea_ret"]


def ns_per_call(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    m = re.search(r"ns_per_call ([0-9.]+)", p.stdout)
    return float(m.group(1)) if m and p.returncode == 0 else None


def tools(dlprof, floor, funclatency, lib, bench, fn, calls, modes, events, only):
    """name -> a command printing ns_per_call, or a function returning it."""
    work = [bench, fn, str(calls)]
    ev = [] if events == "default" else ["-e", events]
    t = {"unprobed": work}
    for m in modes:
        t[f"dlprof {m}"] = [dlprof, "--attach", m] + ev + ["--lib", lib, "--func", fn, "--"] + work
    for m in modes:
        t[f"floor {m}"] = [floor, "--attach", m, "--lib", lib, "--func", fn, "--"] + work
    for m in modes:
        t[f"floor+clock {m}"] = [floor, "--clock", "--attach", m, "--lib", lib, "--func", fn, "--"] + work
    if only:
        return t
    t["floor classic entry"] = [floor, "--attach", "classic", "--placement", "entry",
                                "--lib", lib, "--func", fn, "--"] + work
    if shutil.which("bpftrace"):
        probe = f"{lib}:{fn}"
        t["bpftrace empty pair"] = ["bpftrace", "-q", "-e", f"uprobe:{probe} {{}} uretprobe:{probe} {{}}",
                                    "-c", " ".join(work)]
        t["bpftrace latency hist"] = ["bpftrace", "-q", "-e",
                                      f"uprobe:{probe} {{ @s[tid] = nsecs; }} "
                                      f"uretprobe:{probe} /@s[tid]/ {{ @h = hist(nsecs - @s[tid]); delete(@s[tid]); }}",
                                      "-c", " ".join(work)]
    if funclatency:
        t["funclatency (BCC)"] = lambda: funclatency_run(funclatency[0], funclatency[1], f"{lib}:{fn}", work)
    return t


def bcc_env(tmp):
    """Environment for BCC, which compiles its programs at run time against
    kernel headers. Where the running kernel ships none (these VMs), Debian's
    linux-headers for another kernel version do for a uprobe program, merged
    under tmp into the one tree BCC wants. Returns (env, what was used)."""
    if os.path.isdir(f"/lib/modules/{os.uname().release}/build"):
        return {}, "the running kernel's headers"
    # The newest Debian headers: version order, not string order (6.1.0-10 > 6.1.0-9).
    commons = sorted(glob.glob("/usr/src/linux-headers-*-common"),
                     key=lambda d: [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", d)])
    arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(os.uname().machine)
    if not commons or not arch or not os.path.isdir(commons[-1][:-len("common")] + arch):
        return {}, None
    common = commons[-1]
    subprocess.run(["cp", "-as", common + "/.", tmp], check=True)
    subprocess.run(["cp", "-as", "--remove-destination", common[:-len("common")] + arch + "/.", tmp], check=True)
    return {"BCC_KERNEL_SOURCE": tmp}, os.path.basename(common)


def funclatency_run(exe, env, probe, work):
    """ns/call of work while funclatency traces probe (it runs until SIGINT)."""
    # SIGINT ends it; a background shell may have left SIGINT ignored, which children inherit.
    p = subprocess.Popen([exe, probe], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                         env={**os.environ, **env, "PYTHONUNBUFFERED": "1"},
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        # "Tracing 1 functions for ..." once attached; compiling takes seconds, never minutes.
        ready, _, _ = select.select([p.stdout], [], [], 120)
        if not ready or "Tracing" not in p.stdout.readline():
            return None
        return ns_per_call(work)
    finally:
        p.send_signal(signal.SIGINT)
        try:
            p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()


def funclatency_works(env):
    """(exe, None) when BCC's funclatency runs here, else (None, why)."""
    exe = shutil.which("funclatency-bpfcc")
    if not exe:
        return None, "funclatency-bpfcc not installed (bench/deps installs it)"
    try:
        p = subprocess.run([exe, "-d", "1", "c:getpid"], capture_output=True, text=True, timeout=120,
                           env={**os.environ, **env})
    except subprocess.TimeoutExpired:
        return None, "funclatency-bpfcc did not start within 120 s"
    if "Tracing" not in p.stdout:
        return None, ("funclatency-bpfcc cannot compile its program here: BCC needs kernel headers "
                      "(bench/deps installs Debian's)")
    return exe, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--calls", type=int, default=300000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--modes", default="session,multi,classic")
    ap.add_argument("--func", action="append", choices=FUNCS, help="only these functions (repeatable)")
    ap.add_argument("--events", default="default",
                    help="dlprof-bpf's -e: default (its own choice: page faults and context switches without a PMU), "
                    "none, or a list")
    ap.add_argument("--only", choices=["dlprof,floor"], help="only dlprof-bpf and its floor, no other tools")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("compare.py: needs root (it loads BPF programs)")
    dlprof = os.path.abspath(os.path.join(a.build, "user", "dlprof-bpf"))
    floor = os.path.abspath(os.path.join(a.build, "bench", "probe_floor"))
    bench = os.path.abspath(os.path.join(a.build, "bench", "callbench"))
    lib = os.path.abspath(os.path.join(a.build, "bench", "libbenchfn.so"))
    if a.only:
        run_all(a, dlprof, floor, None, lib, bench)
        return
    with tempfile.TemporaryDirectory(prefix="dlprof-khdr-") as khdr:
        env, headers = bcc_env(khdr)
        exe, why = funclatency_works(env)
        if why:
            print(f"# funclatency: {why}")
        else:
            print(f"# funclatency: BCC compiles against {headers or 'the headers it finds itself'}")
        run_all(a, dlprof, floor, (exe, env) if exe else None, lib, bench)


def run_all(a, dlprof, floor, funclatency, lib, bench):
    print(f"# median of {a.runs} interleaved runs x {a.calls} calls; added = tool - unprobed; "
          f"dlprof-bpf events: {a.events}")
    print("# vs bpftrace, vs funclat: that tool's added ns / this row's; "
          "over floor: this dlprof row minus the floor row of its mode; x floor: their added ns, divided")
    print(f"{'function':<15} {'tool':<24} {'ns/call':>9} {'added':>9} {'vs bpftrace':>12} {'vs funclat':>11} "
          f"{'over floor':>11} {'x floor':>8}")
    for fn in a.func or FUNCS:
        t = tools(dlprof, floor, funclatency, lib, bench, fn, a.calls, a.modes.split(","), a.events, a.only)
        res = {k: [] for k in t}
        for _ in range(a.runs):
            for k, cmd in t.items():
                v = cmd() if callable(cmd) else ns_per_call(cmd)
                if v is not None:
                    res[k].append(v)
        med = {k: statistics.median(v) for k, v in res.items() if v}
        base = med["unprobed"]
        refs = [med.get("bpftrace latency hist"), med.get("funclatency (BCC)")]
        for k, v in med.items():
            ratios = [f"{(r - base) / (v - base):.1f}x" if r and k != "unprobed" and v > base else ""
                      for r in refs]
            fl = med.get(k.replace("dlprof", "floor")) if k.startswith("dlprof") else None
            over = f"{v - fl:.1f}" if fl else ""
            times = f"{(v - base) / (fl - base):.2f}x" if fl and fl > base else ""
            print(f"{fn:<15} {k:<24} {v:>9.1f} {v - base:>9.1f} {ratios[0]:>12} {ratios[1]:>11} {over:>11} {times:>8}")


if __name__ == "__main__":
    main()
