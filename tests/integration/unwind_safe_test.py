#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Where nothing repairs the stack for unwinders (lockdown, no CAP_SYS_ADMIN:
our VMs), libc's functions that nothing they reach can unwind through are
timed and the others counted at entry only (docs/live-mode.md, "Unwinding").
The unwinders that do cross libc's frames (a C++ exception thrown by qsort's
comparator, cancelled threads blocked in read() and nanosleep(), backtrace()
below qsort) leave the program's output unchanged, and everyday programs are
unharmed with all of libc profiled. Where the kernel allows the repair, the
same programs must run unharmed too. Runner and helpers: itest.py.

Environment, beside itest.py's: UNWIND_CROSS (tests/progs/unwind_cross.cc),
DLTEST_LIBC_WORKLOAD (for safety_test.real_programs)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import itest
from itest import *  # noqa: F401,F403 (the shared helpers and environment)
from containers import move_into, scratch_cgroup
from safety_test import ENTRY_ONLY, real_programs

UNWIND_CROSS = os.environ.get("UNWIND_CROSS", "")
LIBC = "libc.so.6"
TIMED = ("malloc", "free", "strlen", "memcpy", "memset")
# What an unwinder crosses in unwind_cross, by the name the table prints; backtrace keeps its
# own return address besides.
CROSSED = ("qsort", "read", "__nanosleep", "__backtrace")


def profile(funcs, cmd, extra=(), timeout=300):
    """cmd under the profiler of libc's funcs: (CompletedProcess, JSON document or None)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "profile.json")
        args = base_args(["-o", out, "--lib", LIBC, "--func", ",".join(funcs)] + list(extra))
        p = subprocess.run(args + ["--"] + cmd, capture_output=True, text=True, timeout=timeout)
        doc = json.load(open(out)) if os.path.exists(out) else None
    return p, doc


def check_timed(doc, stderr, names, want_calls=1):
    """Each of names is timed (or, memset on CPUs where its entry takes no probe, said left out)."""
    for name in names:
        f = func(doc, name)
        if not f and name == "memset" and "left out" in stderr:
            continue
        check(f and not f["entry_only"] and f["calls"] >= want_calls and f["timed"] >= want_calls and
              f["timed"] + f["unmatched"] == f["calls"], f"{name} must be timed: {f}")


def test_libc_timed_without_repair():
    """The issue's command: every probeable function of the four shows its latency."""
    require_bpf()
    cmd = [UNWIND_CROSS, "work", "2000"]
    p, doc = profile(["malloc", "free", "strlen", "memcpy"], cmd)
    check(p.returncode == 0 and doc, f"rc {p.returncode}: {p.stderr[-500:]}")
    check_timed(doc, p.stderr, ("malloc", "free", "strlen", "memcpy"), 2000)
    if not doc["unwind_repair"]:
        check(any("timed although this kernel lets no probe repair the stack" in l for l in p.stderr.splitlines()),
              f"no start-up note says they are timed: {p.stderr!r}")
    # The table: a latency on each row, not `-`.
    t = subprocess.run([a for a in base_args(["--lib", LIBC, "--func", "malloc,free,strlen,memcpy"]) if a != "--json"]
                       + ["--"] + cmd, capture_output=True, text=True, timeout=300)
    rows = [l.split() for l in t.stdout.splitlines() if l.split()[:1] and l.split()[0] in
            ("malloc", "free", "strlen", "memcpy")]
    check(len(rows) == 4 and all(r[3] != "-" and r[4] != "-" for r in rows), f"table: {t.stdout!r}")


def test_unwinders_cross_libc_unharmed():
    """Exceptions, cancellation and backtrace() through libc's frames: the same output as alone; the
    frames they cross are counted at entry only, the functions beside them timed."""
    require_bpf()
    alone = subprocess.run([UNWIND_CROSS, "all"], capture_output=True, text=True, timeout=120)
    check(alone.returncode == 0 and "50 of 50 caught" in alone.stdout and alone.stdout.count("10 of 10") == 2,
          f"unwind_cross fails alone: rc {alone.returncode} {alone.stdout!r}")
    p, doc = profile(TIMED + ("qsort", "read", "nanosleep", "backtrace"), [UNWIND_CROSS, "all"])
    check(p.returncode == 0, f"profiled: rc {p.returncode}: {p.stderr[-500:]}")
    check(p.stdout == alone.stdout, f"profiled output differs: {p.stdout!r}, alone {alone.stdout!r}")
    check(doc, "no JSON document written")
    check_timed(doc, p.stderr, TIMED)
    for name in CROSSED:
        f = func(doc, name)
        check(f and f["calls"] >= 1, f"{name}: not called: {f}")
        if not doc["unwind_repair"]:
            check(f["entry_only"] and f["timed"] == 0, f"{name} must be counted at entry only: {f}")
    for name in ("qsort", "read", "__nanosleep"):
        if not doc["unwind_repair"]:
            check(func(doc, name)["entry_only_reason"] == "unwinding", f"{name}: {func(doc, name)}")


@modes("session")
def test_unsafe_harms_what_auto_keeps():
    """What the analysis prevents: with --unwind unsafe and no repair, the same program dies or loses
    its cleanups and frames (so the test above would see it)."""
    require_bpf()
    _, doc = profile(["malloc"], [UNWIND_CROSS, "work", "1"])
    if doc["unwind_repair"]:
        raise Skip("this kernel lets dlprof-bpf repair the stack: --unwind unsafe harms nothing here")
    p, _ = profile(["qsort"], [UNWIND_CROSS, "qsort_throw"], ["--unwind", "unsafe"])
    check(p.returncode == 134 and "terminate called" in p.stderr, f"qsort_throw: rc {p.returncode} {p.stderr[-300:]!r}")
    p, _ = profile(["read"], [UNWIND_CROSS, "cancel_read"], ["--unwind", "unsafe"])
    check("10 of 10" not in p.stdout, f"cancel_read kept its cleanups through a return probe: {p.stdout!r}")


def coreutils():
    progs = [["sh", "-c", "ls -la /usr/bin | sort -k5 -n | tail -3 | wc -l"],
             ["sh", "-c", "find /usr/share/doc -maxdepth 1 | sort | head -20 | sed 's/doc/DOC/' | grep -c DOC"],
             ["sh", "-c", "seq 1 20000 | sort -rn | uniq | awk '{s+=$1} END {print s}'"],
             ["sh", "-c", "printf 'b\\na\\nc\\n' | sort | tr a-z A-Z; date -d @0 -u; env -i A=1 env; basename /a/b.c .c"],
             ["sh", "-c", "tar -cf - -C /usr/share/doc/bash . 2>/dev/null | tar -tf - | wc -l"],
             [UNWIND_CROSS, "all"]]
    for p in progs:
        check(shutil.which(p[0]), f"{p[0]} is not installed")
    return progs


def outcomes_in(cgroup, progs):
    res = []
    for p in progs:
        r = subprocess.run(p, capture_output=True, timeout=120, preexec_fn=lambda: move_into(cgroup, os.getpid()))
        res.append((r.returncode, r.stdout))
    return res


def unharmed_in_cgroup(funcs=()):
    """The safety suite's programs, coreutils and unwind_cross, alone then with libc profiled in their
    cgroup (every function, or funcs): the same status and output byte for byte."""
    require_bpf()
    progs = real_programs() + coreutils()
    with scratch_cgroup("libc") as cg:
        alone = outcomes_in(cg, progs)
        for (rc, out), p in zip(alone, progs):
            check(rc == 0 and out, f"{p} fails even without the profiler: rc {rc} {out!r}")
        extra = ["--lib", LIBC, "--cgroup", cg]
        for f in funcs:
            extra += ["--func", f]
        prof = start_profiler(extra)
        try:
            profiled = outcomes_in(cg, progs)
        finally:
            doc = stop_profiler(prof, timeout=280)
    for a, b, p in zip(alone, profiled, progs):
        check(a == b, f"{p}: alone rc {a[0]} {a[1][-300:]!r}, profiled rc {b[0]} {b[1][-300:]!r}")
    check(doc["untimed_calls"] == 0, f"{doc['untimed_calls']} calls counted but not timed")
    check_timed(doc, "", ("malloc", "free", "strlen", "memcpy"))
    for name in ENTRY_ONLY:
        f = func(doc, name)
        check(f and f["entry_only"] and f["timed"] == 0, f"{name} keeps its return address: {f}")
    if not doc["unwind_repair"]:
        for name in CROSSED:
            f = func(doc, name)
            check(f and f["entry_only"] and f["timed"] == 0, f"{name} must be counted at entry only: {f}")
        timed = sum(1 for f in doc["functions"] if not f["entry_only"] and f["timed"])
        entry = sum(1 for f in doc["functions"] if f["entry_only"] and f["calls"])
        check(timed and entry, f"{timed} functions timed, {entry} counted at entry only")
    return doc


@modes("session", "multi")
def test_libc_whole_in_cgroup_unharmed():
    """Every libc function probed, --unwind auto: shells, coreutils, python, sqlite and unwind_cross."""
    unharmed_in_cgroup()


@modes("classic")
def test_libc_classic_in_cgroup_unharmed():
    # Classic detach costs ~0.2 s a function: the functions these programs lean on, the crossed ones among them.
    unharmed_in_cgroup(["*setjmp*", "*context*", "*vfork*", "dl*", "str*", "mem*", "*printf*", "*alloc*",
                        "free", "getenv", "qsort*", "read", "*nanosleep", "*backtrace", "pthread_c*", "exit"])


if __name__ == "__main__":
    sys.exit(itest.run(globals()))
