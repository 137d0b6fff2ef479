#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Safety on a shared host: profiling libc system-wide leaves other programs
unharmed, other uprobe users (bpftrace, another dlprof-bpf) and dlprof-bpf
count the same functions exactly side by side, and a slow detach never holds
the summary back. Runner and helpers: itest.py."""
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time

import itest
from itest import *  # noqa: F401,F403 (the shared helpers and environment)

LIBC_WORKLOAD = os.environ.get("DLTEST_LIBC_WORKLOAD", "")

# Functions that keep their own return address, as the workload calls them.
ENTRY_ONLY = ("__sigsetjmp", "_setjmp", "getcontext", "swapcontext", "__vfork", "dlsym")


def real_programs():
    """Programs people run, using setjmp (bash), contexts, vfork, dlsym(RTLD_NEXT)."""
    bash = ('x=$(echo hi); for i in 1 2 3; do y=$(printf "%s-%d" "$x" $i); '
            '[ -n "$y" ] && echo "$y"; done; [ "$x" = hi ]; echo "test: $?"; '
            'z=`echo back`; echo "$z"; (exit 3); echo "sub: $?"')
    py = ("import json, subprocess; print(json.dumps({'a': [1, 2, 3]})); "
          "print(subprocess.run(['echo', 'child'], capture_output=True, text=True).stdout.strip())")
    progs = [
        ["bash", "-c", bash],
        [shutil.which("python3") or sys.executable, "-c", py],
        ["sqlite3", ":memory:",
         "create table t(a); insert into t values (1),(2),(3); select sum(a), count(*) from t;"],
    ]
    progs += [[LIBC_WORKLOAD, m] for m in ("sigsetjmp", "context", "vfork", "dlsym")]
    for p in progs:
        check(shutil.which(p[0]), f"{p[0]} is not installed (scripts/deps installs it)")
    return progs


def outcomes(progs):
    res = []
    for p in progs:
        r = subprocess.run(p, capture_output=True, timeout=120)
        res.append((r.returncode, r.stdout))
    return res


def unwind_repair():
    """Whether this kernel lets dlprof-bpf repair the stack for unwinders (JSON unwind_repair)."""
    rc, doc, err = run_profiled([DRIVER, "exit", "0"])
    check(rc == 0 and doc, f"rc {rc}: {err}")
    return doc["unwind_repair"]


def unharmed_under_libc_profile(funcs=()):
    progs = real_programs()
    alone = outcomes(progs)
    for (rc, out), p in zip(alone, progs):
        check(rc == 0 and out, f"{p[0]} fails even without the profiler: rc {rc} {out!r}")
    # Where the kernel lets no probe repair the stack for unwinders (lockdown: our VMs), libc would be
    # counted at entry only; "unsafe" keeps its return probes, which these programs never unwind through.
    extra = ["--lib", "libc.so.6"] + ([] if unwind_repair() else ["--unwind", "unsafe"])
    for f in funcs:
        extra += ["--func", f]
    prof = start_profiler(extra)
    try:
        profiled = outcomes(progs)
    finally:
        # Classic links detach at ~0.2 s each.
        doc = stop_profiler(prof, timeout=200)
    for a, b, p in zip(alone, profiled, progs):
        check(a == b, f"{p[0]} {p[1]}: alone rc {a[0]} {a[1]!r}, profiled rc {b[0]} {b[1]!r}")
    for name in ENTRY_ONLY:
        f = func(doc, name)
        check(f and f["entry_only"] and f["calls"] >= 1 and f["timed"] == 0,
              f"{name} must be counted at entry only: {f}")
    check(doc["untimed_calls"] == 0, f"{doc['untimed_calls']} calls counted but not timed")
    return doc


@modes("session", "multi")
def test_libc_system_wide_programs_unharmed():
    """Every libc function probed in every process: programs behave byte for byte the same."""
    unharmed_under_libc_profile()


@modes("classic")
def test_libc_classic_setjmp_family_unharmed():
    # Classic detach costs ~0.2 s a function: a few hundred, the setjmp family among them.
    unharmed_under_libc_profile(["*setjmp*", "*context*", "*vfork*", "dl*", "str*", "mem*", "f*",
                                 "*printf*", "*alloc*", "free", "getenv", "exit"])


def bpftrace_count(lib, fn, cmd):
    """Runs cmd while bpftrace counts fn's entries and returns; returns (entries, returns)."""
    bt = shutil.which("bpftrace")
    check(bt, "bpftrace is not installed (scripts/deps installs it)")
    # BEGIN fires once every probe is attached: "Attaching" is printed before the attach,
    # and a SIGINT that lands while bpftrace 0.17 still attaches can be left unhandled.
    prog = (f'BEGIN {{ printf("READY\\n"); }} '
            f'uprobe:{lib}:{fn} {{ @entries = count(); }} uretprobe:{lib}:{fn} {{ @returns = count(); }}')
    p = subprocess.Popen([bt, "-e", prog], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        # bpftrace 0.17 first warns that it cannot raise RLIMIT_MEMLOCK (memcg accounts BPF here).
        seen, attached = read_until(p.stdout, lambda l: l.startswith("READY"), 60)
        check(attached, f"bpftrace did not start: {''.join(seen)!r}")
        result = cmd()
    finally:
        out = stop_bpftrace(p)
    counts = {}
    for l in out.splitlines():
        if l.startswith("@"):
            k, v = l.split(":")
            counts[k.strip("@ ")] = int(v)
    return counts.get("entries", 0), counts.get("returns", 0), result


def stop_bpftrace(p):
    """Its output after a SIGINT; asks again while it has not answered, then kills it."""
    for _ in range(3):
        p.send_signal(signal.SIGINT)
        try:
            return p.communicate(timeout=20)[0]
        except subprocess.TimeoutExpired:
            continue
    p.kill()
    out = p.communicate()[0]
    check(False, f"bpftrace did not stop on SIGINT within 60 s: {out!r}")


def test_beside_bpftrace():
    """bpftrace probes the same function: both count every call."""
    def profile():
        rc, doc, err = run_profiled([DRIVER, "count", "20000"], ["--func", "dlt_add,dlt_test_je"])
        check(rc == 0, f"rc {rc}: {err}")
        return doc
    entries, returns, doc = bpftrace_count(LIB, "dlt_add", profile)
    f = func(doc, "dlt_add")
    check(f and f["calls"] == 20000 and f["timed"] == 20000, f"dlprof-bpf beside bpftrace: {f}")
    check(doc["functions_attached"] == 2 and doc["functions_skipped"] == 0, f"functions lost: {doc}")
    check(entries == 20000 and returns == 20000, f"bpftrace counted {entries} entries, {returns} returns")


def test_beside_another_dlprof():
    """Two profilers on the same library: each keeps every function and counts exactly."""
    rc, solo, err = run_profiled([DRIVER, "count", "10"])
    check(rc == 0, f"rc {rc}: {err}")
    first = start_profiler(["--lib", LIB])
    try:
        rc, doc, err = run_profiled([DRIVER, "count", "30000"])
    finally:
        whole = stop_profiler(first)
    check(rc == 0, f"rc {rc}: {err}")
    for d, who in ((doc, "second"), (whole, "first")):
        check(d["functions_attached"] == solo["functions_attached"] and
              d["functions_skipped"] == solo["functions_skipped"],
              f"{who} profiler lost functions: {d['functions_attached']} attached, "
              f"{d['functions_skipped']} skipped; alone {solo['functions_attached']}")
        f = func(d, "dlt_add")
        check(f and f["calls"] == 30000 and f["timed"] == 30000, f"{who} profiler: {f}")


@modes("session")
def test_unprobeable_only_is_named():
    expect_error([DLPROF, "--lib", UNPROBEABLE_LIB, "--func", "dlt_lock_loop", "--", DRIVER, "exit", "0"],
                 "dlt_lock_loop")
    p = subprocess.run([DLPROF, "--lib", UNPROBEABLE_LIB, "--func", "dlt_lock_loop", "--", DRIVER, "exit", "0"],
                       capture_output=True, text=True, timeout=60)
    check("left out" in p.stderr and "no function matched" not in p.stderr,
          f"a function dropped after matching must be named as dropped: {p.stderr!r}")


def read_until(stream, want, timeout):
    """Lines of stream until one contains want (or the time is up). A thread reads:
    select() cannot see lines already in the stream's buffer."""
    lines, q = [], queue.Queue()

    def reader():
        for line in iter(stream.readline, ""):
            q.put(line)
            if want(line):
                break
        q.put(None)
    threading.Thread(target=reader, daemon=True).start()
    end = time.monotonic() + timeout
    while True:
        try:
            line = q.get(timeout=max(0.0, end - time.monotonic()))
        except queue.Empty:
            return lines, False
        if line is None:
            return lines, False
        lines.append(line)
        if want(line):
            return lines, True


@modes("classic")
def test_slow_detach_second_signal_prints_summary():
    """Classic links detach at ~0.2 s each: the wait is said, and a second Ctrl-C gets the summary."""
    d = start_waiting_driver(["count", "10"])
    prof = start_profiler_on(d.pid, ["libc.so.6"], ["--func", "str*,mem*,*printf*,*alloc*"])
    try:
        drive(d)
        t0 = time.monotonic()
        prof.send_signal(signal.SIGINT)
        err, told = read_until(prof.stderr, lambda l: "removing the probes has taken" in l, 30)
        check(told, f"no word about the slow detach: {''.join(err)!r}")
        prof.send_signal(signal.SIGINT)
        t1 = time.monotonic()
        out, done = read_until(prof.stdout, lambda l: l.rstrip() == "}", 10)
        check(done, f"no summary after the second signal: {''.join(out)!r}")
        check(time.monotonic() - t1 < 5, f"summary took {time.monotonic() - t1:.1f} s after the second signal")
        doc = json.loads("".join(out))
        check(doc["detach_finished"] is False and doc["detach_ms"] >= 4000,
              f"summary must say the detach did not finish: {doc['detach_finished']} {doc['detach_ms']}")
        check(t1 - t0 < 15, f"the wait was said only after {t1 - t0:.1f} s")
    finally:
        prof.wait(timeout=240)
        finish(d)


if __name__ == "__main__":
    sys.exit(itest.run(globals()))
