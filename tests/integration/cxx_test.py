#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Integration tests of calls left by C++ exceptions and forced unwinding: a
return probe must not change where an exception is caught, what backtrace()
sees, or which cleanup handlers a cancelled thread runs (runner and helpers:
itest.py).

Each case runs the C++ driver alone, then under the profiler; stdout and exit
status must be the same byte for byte, and the JSON must agree with the
driver's oracle: its "calls NAME N" / "unwound NAME N" / "open NAME N" lines
(calls == the oracle's; unwound == the oracle's; unmatched == open, the calls
the process exited inside of; timed == the rest).

Environment, beside itest.py's: DLCXX_DRIVER, DLCXX_LIB.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import itest
from itest import *  # noqa: F401,F403 (the shared helpers and environment)

CXX_DRIVER = os.environ.get("DLCXX_DRIVER", "")
CXX_LIB = os.environ.get("DLCXX_LIB", "")
STDCXX = "libstdc++.so.6"
# What the profiler needs without CAP_SYS_ADMIN, found by trying: nothing else.
NO_ADMIN_CAPS = "+bpf,+perfmon"


def run_alone(args):
    p = subprocess.run([CXX_DRIVER] + args, capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, f"driver {args} alone: rc {p.returncode}: {p.stderr}")
    return p


ORACLE_WORDS = ("calls", "unwound", "open")


def oracle(stdout):
    """{name: [calls, unwound, open]} from the driver's closing lines."""
    want = {}
    for line in stdout.splitlines():
        words = line.split()
        if len(words) == 3 and words[0] in ORACLE_WORDS:
            want.setdefault(words[1], [0, 0, 0])[ORACLE_WORDS.index(words[0])] = int(words[2])
    check(want, f"driver printed no oracle: {stdout!r}")
    return want


def profile(args, libs, funcs, wrapper=(), timeout=180):
    """The driver under the profiler: (CompletedProcess, JSON document or None)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "profile.json")
        cmd = list(wrapper) + base_args(["-o", out, "--func", ",".join(funcs)])
        for lib in libs:
            cmd += ["--lib", lib]
        p = subprocess.run(cmd + ["--", CXX_DRIVER] + args, capture_output=True, text=True, timeout=timeout)
        doc = json.load(open(out)) if os.path.exists(out) else None
    return p, doc


def first_difference(a, b):
    al, bl = a.splitlines(), b.splitlines()
    for i, (x, y) in enumerate(zip(al, bl)):
        if x != y:
            return f"line {i + 1}: {x!r} alone, {y!r} profiled"
    return f"{len(al)} lines alone, {len(bl)} profiled"


def func_in(doc, name, lib):
    for f in doc["functions"]:
        if name in (f["name"], f.get("mangled")) and os.path.basename(f["lib"]).startswith(lib):
            return f
    return None


def of_dlcxx(want):
    """The oracle's lines for libdlcxx (the driver's libstdc++ lines count only its stdlib mode)."""
    return {n: v for n, v in want.items() if n.startswith(("dlx_", "_ZN3dlx"))}


def count_problems(doc, want, lib):
    """Where the profile disagrees with the oracle, for the functions of lib. Where the kernel
    lets dlprof-bpf repair the stack for unwinders (unwind_repair), calls unwound are counted
    unwound, calls the process exited inside of unmatched (they never end) and the others timed;
    elsewhere (lockdown, no CAP_SYS_ADMIN: our VMs) the functions of a library exceptions may
    cross are counted at entry only, exactly, and never timed, but those whose code shows
    nothing they reach can unwind, which are timed: no unwinding may then have crossed them."""
    repair = doc["unwind_repair"]
    bad = []
    for name, (calls, unwound, open_) in want.items():
        f = func_in(doc, name, lib)
        if calls == 0:
            if f and f["calls"]:
                bad.append(f"{name}: {f['calls']} calls, the driver made none")
            continue
        if not f:
            bad.append(f"{name}: missing, the driver made {calls} calls")
            continue
        got = (f["calls"], f["timed"], f["unwound"], f["unmatched"], f["entry_only"])
        expect = (calls, calls - unwound - open_, unwound, open_, False) if repair else (calls, 0, 0, 0, True)
        if not repair and not f["entry_only"]:
            # Judged safe: an unwound call, or one the process exited inside of, would be a wrong "safe".
            expect = (calls, calls, 0, 0, False)
        if got != expect:
            bad.append(f"{name}: calls/timed/unwound/unmatched/entry_only {got}, want {expect}")
    return bad


def same_as_alone(args, libs, lib_of_oracle, extra_funcs=(), only=lambda want: want):
    """Runs args alone and profiled; checks output, status, the counts of only(oracle)."""
    alone = run_alone(args)
    want = only(oracle(alone.stdout))
    p, doc = profile(args, libs, list(want) + list(extra_funcs))
    bad = []
    if p.returncode != alone.returncode:
        err = " | ".join(l for l in p.stderr.splitlines() if "PMU" not in l)
        bad.append(f"rc {p.returncode} profiled, {alone.returncode} alone (stderr: {err[-300:]})")
    if p.stdout != alone.stdout:
        bad.append(f"stdout differs: {first_difference(alone.stdout, p.stdout)}")
    if doc is None:
        bad.append("no JSON document written")
    else:
        bad += count_problems(doc, want, lib_of_oracle)
    check(not bad, f"{' '.join(args)}: " + "; ".join(bad))
    return alone, want, doc


def check_no_cold_fragment(doc):
    """gcc's dlx_throw.cold and its kind are blocks of their function, jumped to, never called:
    a probe there would count calls that are none, and a return probe would overwrite a word of
    the function's frame."""
    cold = [f["name"] for f in doc["functions"] if ".cold" in f["name"]]
    check(not cold, f"cold fragments probed as functions: {cold}")


def dlcxx(args):
    return same_as_alone(args, [CXX_LIB], os.path.basename(CXX_LIB))


# ---- tests ---------------------------------------------------------------

def test_cxx_throw_one_frame():
    """Thrown from a probed frame, caught by the driver (not probed)."""
    dlcxx(["throw1"])


def test_cxx_throw_three_frames():
    """Through dlx_throw, dlx::descend, dlx::raise: three probed frames, no landing pad."""
    dlcxx(["throw3"])


def test_cxx_catch_inside():
    """The catching frame is probed too and returns normally: timed == calls."""
    _, want, _ = dlcxx(["catch_inside"])
    check(want["dlx_catch_inside"] == [100, 0, 0], f"oracle {want['dlx_catch_inside']}")


def test_cxx_rethrow():
    """`throw;` from a probed handler, caught outside and inside the library."""
    dlcxx(["rethrow"])


def test_cxx_nested_try():
    """Nested try blocks, a try inside a handler, a cleanup frame, a translated exception."""
    dlcxx(["nested"])


def test_cxx_threads():
    """Eight threads throwing through probed frames at once."""
    dlcxx(["threads", "8"])


def test_cxx_backtrace():
    """backtrace() and _Unwind_Backtrace from 5 probed frames: the same frames."""
    alone, _, _ = dlcxx(["backtrace"])
    check("backtrace: 11 frames:" in alone.stdout, f"the driver's own backtrace changed: {alone.stdout}")


def test_cxx_cancel_cleanup():
    """pthread_cancel through probed frames: every destructor and cleanup handler runs."""
    dlcxx(["cancel"])


def test_cxx_exit_cleanup():
    """pthread_exit from the innermost probed frame: the same."""
    dlcxx(["exit_thread"])


def test_cxx_exit_in_catch():
    """A catch handler that ends the thread (pthread_exit: a forced unwind through the handler
    that caught), then one that ends the process (exit): the destructors and cleanup handlers
    run as alone, the oracle printed before the exit agrees."""
    alone, want, _ = dlcxx(["exit_in_catch"])
    check(want["dlx_exit_in_catch"] == [2, 1, 1], f"oracle {want['dlx_exit_in_catch']}")
    check("library cleanups: ~exit_in_catch(3)" in alone.stdout, f"the driver's own run changed: {alone.stdout}")


def test_cxx_stdlib():
    """libstdc++ itself probed: vector::at, stoi, substr throw from it and __cxa_throw."""
    same_as_alone(["stdlib"], [STDCXX], "libstdc++.so")


def test_cxx_all_with_libstdcxx():
    """Every case at once, both libraries probed (libstdc++'s throw and catch entry points)."""
    std = ["__cxa_allocate_exception", "__cxa_throw", "__cxa_rethrow", "__cxa_begin_catch", "__cxa_end_catch"]
    same_as_alone(["all"], [CXX_LIB, STDCXX], os.path.basename(CXX_LIB), std, of_dlcxx)


@modes("session")
def test_cxx_no_sys_admin():
    """Without CAP_SYS_ADMIN no probe may write user memory: C++ libraries are probed at
    entry only, said once on stderr, and the program is unharmed; a C library keeps its
    return probes."""
    if not shutil.which("setpriv"):
        raise Skip("setpriv (util-linux) missing")
    drop = ["setpriv", f"--inh-caps=-all,{NO_ADMIN_CAPS}", f"--ambient-caps=-all,{NO_ADMIN_CAPS}",
            f"--bounding-set=-all,{NO_ADMIN_CAPS}", "--"]
    alone = run_alone(["all"])
    want = oracle(alone.stdout)
    p, doc = profile(["all"], [CXX_LIB, STDCXX], list(want), wrapper=drop)
    want = of_dlcxx(want)
    bad = []
    if p.returncode != alone.returncode:
        bad.append(f"rc {p.returncode} profiled, {alone.returncode} alone")
    if p.stdout != alone.stdout:
        bad.append(f"stdout differs: {first_difference(alone.stdout, p.stdout)}")
    notes = [l for l in p.stderr.splitlines() if "note:" in l and "entry" in l and ("libdlcxx" in l or "libstdc++" in l)]
    if not notes:
        bad.append(f"no stderr line says the C++ libraries are counted at entry only: {p.stderr!r}")
    elif len(notes) > 2 or not any("libdlcxx" in l for l in notes):
        bad.append(f"want one note per C++ library, naming libdlcxx: {notes}")
    if doc is None:
        bad.append("no JSON document written")
    else:
        lib = os.path.basename(CXX_LIB)
        for name, (calls, *_) in want.items():
            f = func_in(doc, name, lib) if calls else None
            if calls and not f:
                bad.append(f"{name}: missing")
            elif f and (f["calls"], f.get("entry_only"), f["timed"]) != (calls, True, 0):
                bad.append(f"{name}: calls/entry_only/timed {(f['calls'], f.get('entry_only'), f['timed'])}, "
                           f"want {(calls, True, 0)}")
        # A libstdc++ function keeps its return probe only where its code shows nothing it reaches
        # unwinds: then every call of it returned.
        for f in doc["functions"]:
            if f["lib"].find("libstdc++") >= 0 and not f.get("entry_only") and \
                    (f["timed"], f["unmatched"]) != (f["calls"], 0):
                bad.append(f"libstdc++ {f['name']} has a return probe and calls that did not return: {f}")
    # A C library that cannot throw keeps full timing without CAP_SYS_ADMIN.
    c = subprocess.run(drop + base_args(["--lib", LIB, "--func", "dlt_add", "--", DRIVER, "count", "1000"]),
                       capture_output=True, text=True, timeout=120)
    if c.returncode != 0:
        bad.append(f"C library without CAP_SYS_ADMIN: rc {c.returncode}: {c.stderr}")
    else:
        f = func(json.loads(c.stdout), "dlt_add")
        if not f or (f["calls"], f["timed"], f.get("entry_only")) != (1000, 1000, False):
            bad.append(f"C library without CAP_SYS_ADMIN: dlt_add {f}")
    check(not bad, "; ".join(bad))


@modes("session", "multi")
def test_cxx_all_of_libstdcxx():
    """Every libstdc++ function probed while every case runs: the same output as alone; without the
    repair the functions exceptions cross are counted at entry only and those they cannot are timed,
    every call of them returning."""
    alone = run_alone(["all"])
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "profile.json")
        p = subprocess.run(base_args(["-o", out, "--lib", STDCXX, "--", CXX_DRIVER, "all"]),
                           capture_output=True, text=True, timeout=280)
        doc = json.load(open(out)) if os.path.exists(out) else None
    check(p.returncode == alone.returncode and p.stdout == alone.stdout,
          f"rc {p.returncode}, alone {alone.returncode}: {first_difference(alone.stdout, p.stdout)} "
          f"{p.stderr[-300:]!r}")
    check(doc, "no JSON document written")
    timed = [f for f in doc["functions"] if not f["entry_only"] and f["calls"]]
    for f in timed:
        check((f["timed"], f["unmatched"]) == (f["calls"], 0), f"{f['name']}: calls that did not return: {f}")
    if not doc["unwind_repair"]:
        entry = [f for f in doc["functions"] if f["entry_only"] and f["calls"]]
        check(timed and entry, f"{len(timed)} called functions timed, {len(entry)} at entry only")
        for name in ("__cxa_throw", "__cxa_rethrow"):
            f = func_in(doc, name, "libstdc++.so")
            check(f and f["entry_only"], f"{name} must be counted at entry only: {f}")
        note = [l for l in p.stderr.splitlines() if "libstdc++" in l and "functions timed" in l]
        check(len(note) == 1, f"want one start-up note on libstdc++'s timed functions: {p.stderr!r}")


def test_cxx_unsafe_without_repair_aborts():
    """What the entry-only fallback prevents: where the kernel lets nothing repair the stack,
    --unwind unsafe puts the return probes back and an exception through them aborts."""
    rc, doc, err = run_profiled([DRIVER, "exit", "0"])
    check(rc == 0, f"rc {rc}: {err}")
    if doc["unwind_repair"]:
        # Every function of the library by glob: gcc's cold fragments (the throws and catch
        # handlers of "all" run in them) are among its symbols.
        alone = run_alone(["all"])
        p, doc = profile(["all"], [CXX_LIB], ["dlx_*", "_ZN3dlx*"])
        check(p.returncode == 0 and p.stdout == alone.stdout,
              f"with the stack repaired, all must run as alone: rc {p.returncode}: {p.stderr[-300:]}; "
              f"{first_difference(alone.stdout, p.stdout)}")
        check_no_cold_fragment(doc)
        bad = count_problems(doc, of_dlcxx(oracle(alone.stdout)), os.path.basename(CXX_LIB))
        check(not bad, "all, every function by glob: " + "; ".join(bad))
        return
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "profile.json")
        p = subprocess.run(base_args(["-o", out, "--unwind", "unsafe", "--lib", CXX_LIB, "--", CXX_DRIVER,
                                      "throw3"]), capture_output=True, text=True, timeout=120)
        check(p.returncode == 134 and "terminate called" in p.stderr,
              f"--unwind unsafe without repair: want the abort the fallback prevents: rc {p.returncode} {p.stderr!r}")
        doc = json.load(open(out))
    check_no_cold_fragment(doc)
    # Each unwinder entry (the throw, then the terminate handler's rethrows) met the three hijacked
    # frames (dlx_throw, descend, raise): the kernel's list of pending returns reads as the repair
    # expects it.
    slots = doc["unwind_slots"]
    check(slots >= 3 and slots % 3 == 0, f"unwind_slots {slots}: want 3 per unwinder entry")


@modes("session")
def test_cxx_demangled_names():
    """libstdc++ profiled: the table and the JSON name its functions demangled (JSON keeps the
    symbol as `mangled`), --func 'std::*' selects by the demangled name, the exact counts stay the
    driver's; --no-demangle prints and matches the symbols only."""
    require_bpf()
    alone = run_alone(["stdlib"])
    want = oracle(alone.stdout)
    throwers = {n: v for n, v in want.items() if n.startswith("_ZSt")}
    check(throwers, f"no std:: thrower in the oracle: {want}")
    p, doc = profile(["stdlib"], [STDCXX], ["std::__throw_*"])
    check(p.returncode == 0 and doc, f"--func 'std::__throw_*': rc {p.returncode}: {p.stderr[-300:]}")
    bad = []
    for name, (calls, *_) in throwers.items():
        f = func_in(doc, name, "libstdc++.so")
        if not f:
            bad.append(f"{name}: missing")
            continue
        if not f["name"].startswith("std::__throw_") or f.get("mangled") != name:
            bad.append(f"{name}: name {f['name']!r}, mangled {f.get('mangled')!r}")
        if f["calls"] != calls:
            bad.append(f"{f['name']}: {f['calls']} calls, the driver made {calls}")
    for f in doc["functions"]:
        if not f["name"].startswith("std::__throw_"):
            bad.append(f"{f['name']} selected by 'std::__throw_*'")
    want_name = "std::__throw_out_of_range(char const*)"
    if not any(f["name"] == want_name for f in doc["functions"]):
        bad.append(f"no {want_name} in {[f['name'] for f in doc['functions']]}")
    # The table: the demangled names, whole where they fit.
    cmd = [a for a in base_args(["--lib", STDCXX, "--func", "std::__throw_out_of_range*"]) if a != "--json"]
    t = subprocess.run(cmd + ["--", CXX_DRIVER, "stdlib"], capture_output=True, text=True, timeout=180)
    if t.returncode != 0 or want_name not in t.stdout:
        bad.append(f"table: rc {t.returncode}, no {want_name}: {t.stdout[-600:]!r} {t.stderr[-300:]!r}")
    # --no-demangle: globs see the symbols only, and JSON names them as the library spells them.
    nd = subprocess.run(base_args(["--no-demangle", "--lib", STDCXX, "--func", "std::*", "--", CXX_DRIVER,
                                   "stdlib"]), capture_output=True, text=True, timeout=180)
    if nd.returncode == 0 or "no function matched" not in nd.stderr:
        bad.append(f"--no-demangle --func 'std::*': want no match: rc {nd.returncode} {nd.stderr[-300:]!r}")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "profile.json")
        nd = subprocess.run(base_args(["-o", out, "--no-demangle", "--lib", STDCXX, "--func", "_ZSt*__throw_*",
                                       "--", CXX_DRIVER, "stdlib"]), capture_output=True, text=True, timeout=180)
        nd_doc = json.load(open(out)) if nd.returncode == 0 else None
    if nd_doc is None:
        bad.append(f"--no-demangle --func '_ZSt*': rc {nd.returncode}: {nd.stderr[-300:]!r}")
    else:
        names = {f["name"]: f for f in nd_doc["functions"]}
        for name, (calls, *_) in throwers.items():
            f = names.get(name)
            if not f or f["calls"] != calls or "mangled" in f:
                bad.append(f"--no-demangle: {name}: {f}")
    check(not bad, "; ".join(bad))


if __name__ == "__main__":
    sys.exit(itest.run(globals()))
