#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""dlprof-bpf list (docs/list.md): each function's probe class, checked
against what the test libraries' assembly says, the calibrated costs per
class in each attach mode, the classes without root; and the live
mode's estimate of what the probes cost the targets, with its warning.

Runner and helpers: itest.py; the libraries: tests/progs."""
import json
import os
import subprocess
import sys

import itest
from itest import *  # noqa: F401,F403 (the shared helpers and environment)

COMP_LIB = os.environ.get("COMP_LIB", "")
CXX_LIB = os.environ.get("DLCXX_LIB", "")


def list_args(extra, attach=True):
    args = [DLPROF, "list"]
    if attach and ATTACH:
        args += ["--attach", ATTACH]
    return args + list(extra)


def list_json(extra, **kw):
    p = subprocess.run(list_args(list(extra) + ["--json"]), capture_output=True, text=True, timeout=120, **kw)
    check(p.returncode == 0, f"list {extra}: exit {p.returncode}: {p.stderr}")
    check(p.stderr == "", f"list {extra} said on stderr: {p.stderr!r}")
    return json.loads(p.stdout)


def classes(doc):
    """{name: (class, entry_probe, moved_bytes, reason)}"""
    return {f["name"]: (f["class"], f.get("entry_probe"), f.get("moved_bytes"),
                        f.get("entry_only_reason") or f.get("reason")) for f in doc["functions"]}


def expect_classes(got, want, what):
    for name, w in want.items():
        check(got.get(name) == w, f"{what}: {name} is {got.get(name)}, the assembly says {w}")


@modes("session")
def test_classes_follow_the_assembly():
    """tests/progs/dltest_asm.S, dltest_unprobeable.S and comptest_inner.S: where each entry
    probe goes, by placement, and which class the kernel treats it as."""
    auto = classes(list_json(["--lib", LIB, "--func", "dlt_*"]))
    expect_classes(auto, {
        # test; je: the probe moves to the je (+2), which the kernel emulates.
        "dlt_test_je": ("emulated", "emulated", 2, None),
        # A loop back to offset 0 only fires the entry probe again: moved to the je too.
        "dlt_loop_head": ("emulated", "emulated", 2, None),
        # mov at the entry, a loop back to the second instruction: it stays, single-stepped.
        "dlt_loop_second": ("single_stepped", "single_stepped", 0, None),
    }, "--placement auto")
    entry = classes(list_json(["--lib", LIB, "--func", "dlt_*", "--placement", "entry"]))
    expect_classes(entry, {
        "dlt_test_je": ("single_stepped", "single_stepped", 0, None),
        "dlt_loop_head": ("single_stepped", "single_stepped", 0, None),
        "dlt_loop_second": ("single_stepped", "single_stepped", 0, None),
    }, "--placement entry")
    unprobeable = classes(list_json(["--lib", UNPROBEABLE_LIB, "--func", "dlt_*"]))
    expect_classes(unprobeable, {
        # lock prefix at the entry, a loop head next: no place at all.
        "dlt_lock_loop": ("not_probeable", None, None, "no-probeable-instruction"),
        "dlt_plain_ret": ("emulated", "emulated", 0, None),
    }, "unprobeable library")
    for placement in ("auto", "entry"):
        comp = classes(list_json(["--lib", COMP_LIB, "--func", "comp_*", "--placement", placement]))
        expect_classes(comp, {
            "comp_inner": ("emulated", "emulated", 0, None),		# push %rbp
            "comp_outer": ("emulated", "emulated", 0, None),		# push %rbp (frame pointers)
            "comp_stepped": ("single_stepped", "single_stepped", 0, None),	# mov, loop to the sub
        }, f"comptest, --placement {placement}")


# libdlcxx's functions whose code reaches nothing that can unwind through them.
UNWIND_SAFE_CXX = {"_init", "_fini", "dlx_cleanup_log"}


@modes("session")
def test_entry_only_and_ifunc():
    """libc's setjmp family keeps its return address; its time is an IFUNC resolved into the
    vDSO; a C++ library is entry-only where nothing repairs unwinding, and never with
    --unwind unsafe."""
    libc = classes(list_json(["--lib", "libc.so.6", "--func", "_setjmp,getcontext,time", "--unwind", "unsafe"]))
    for name in ("_setjmp", "getcontext"):
        check(libc[name][0] == "entry_only" and libc[name][3] == "return-address", f"libc {name}: {libc[name]}")
    check(libc["time"] == ("not_probeable", None, None, "ifunc-unresolved"), f"libc time: {libc['time']}")
    auto = list_json(["--lib", CXX_LIB])
    unsafe = list_json(["--lib", CXX_LIB, "--unwind", "unsafe"])
    reasons = {f.get("entry_only_reason") for f in auto["functions"] if f["class"] == "entry_only"}
    check(reasons <= {"unwinding", "return-address"}, f"reasons {reasons}")
    repaired = "unwinding" not in reasons
    # Without the repair, only what the library's own code shows cannot start an unwind is timed
    # (docs/live-mode.md): of libdlcxx, the functions that throw, catch, call back or cancel nothing.
    timed = {f["name"] for f in auto["functions"] if f["class"] != "entry_only"}
    check(repaired or timed <= UNWIND_SAFE_CXX,
          f"unwinding cannot be repaired here, yet {sorted(timed - UNWIND_SAFE_CXX)} are timed: {auto['counts']}")
    check(not any(f.get("entry_only_reason") == "unwinding" for f in unsafe["functions"]),
          "--unwind unsafe still counts functions at entry only for unwinding")


@modes("session")
def test_classes_match_the_profile():
    """What list says is what a profile of the same selection does: the same functions
    single-stepped (timed raw) and the same number placed off the entry."""
    listed = list_json(["--lib", LIB, "--func", "dlt_test_je,dlt_loop_head,dlt_loop_second,dlt_add"])
    rc, doc, err = run_profiled([DRIVER, "asm", "20"],
                                ["--func", "dlt_test_je,dlt_loop_head,dlt_loop_second,dlt_add"])
    check(rc == 0 and doc, f"profile rc {rc}: {err}")
    check(doc["functions_moved"] == listed["counts"]["moved"],
          f"profile moved {doc['functions_moved']}, list {listed['counts']['moved']}")
    for f in doc["functions"]:
        want = classes(listed)[f["name"]][0]
        got = "single_stepped" if f.get("latency") == "raw" else "emulated"
        check(got == want, f"{f['name']}: the profile times it as {got}, list says {want}")


def test_costs_per_class():
    """The footer's costs are calibrated now, in the attach mode asked, per class."""
    doc = list_json(["--lib", COMP_LIB, "--func", "comp_inner"])
    costs = doc["probe_cost_ns"]
    check(doc["attach_mode"] == (ATTACH or doc["attach_mode"]), f"attach mode {doc['attach_mode']}, asked {ATTACH}")
    for k in ("emulated", "single_stepped"):
        check(0 < costs[k]["pair_least"] <= costs[k]["pair"], f"{k}: {costs[k]}")
    check(costs["single_stepped"]["pair"] > costs["emulated"]["pair"], f"costs {costs}")
    # An entry probe alone: its class's pair less a return probe, taken as half an emulated pair.
    half = costs["emulated"]["pair"] // 2
    check(costs["emulated"]["entry"] == costs["emulated"]["pair"] - half
          and costs["single_stepped"]["entry"] == costs["single_stepped"]["pair"] - half, f"entry costs: {costs}")
    p = subprocess.run(list_args(["--lib", COMP_LIB, "--func", "comp_inner,comp_stepped"]), capture_output=True,
                       text=True, timeout=120)
    lines = p.stdout.splitlines()
    check(p.returncode == 0 and lines[0].split() == ["FUNCTION", "LIBRARY", "CLASS", "WHERE,", "WHY"],
          f"rc {p.returncode}: {p.stdout}{p.stderr}")
    check(lines[-2] == "# 2 functions: 1 emulated, 1 single-stepped, 0 entry-only, 0 not probeable", lines[-2])
    check(lines[-1].startswith("# a probe pair costs a call ") and " emulated, " in lines[-1]
          and " single-stepped (medians" in lines[-1], lines[-1])


@modes("session")
def test_not_root_lists_classes():
    """Without root the classes are listed all the same, and one line says the costs need root."""
    with itest.reachable_copies(DLPROF, UNPROBEABLE_LIB) as (dlprof, lib):
        p = subprocess.run([dlprof, "list", "--lib", lib], capture_output=True, text=True, timeout=60,
                           preexec_fn=itest.drop_to_nobody)
        pj = subprocess.run([dlprof, "list", "--lib", lib, "--json"], capture_output=True, text=True, timeout=60,
                            preexec_fn=itest.drop_to_nobody)
    check(p.returncode == 0 and p.stderr == "", f"rc {p.returncode}: {p.stderr}")
    lines = p.stdout.splitlines()
    rows = {l.split()[0]: l for l in lines[1:] if not l.startswith("#")}
    check("not probeable" in rows.get("dlt_lock_loop", "") and " emulated " in rows.get("dlt_plain_ret", ""),
          f"rows {rows}")
    check(lines[-1].startswith("# probe costs not measured: that needs root"), f"last line {lines[-1]!r}")
    check(sum(l.startswith("#") for l in lines) == 2, f"footer {lines}")
    doc = json.loads(pj.stdout)
    check("probe_cost_ns" not in doc and "needs root" in doc["probe_cost_error"], f"JSON {doc}")


@modes("session")
def test_list_errors():
    expect_error([DLPROF, "list"], "no library given")
    expect_error([DLPROF, "list", "--lib", "libnosuchlib.so.7"], "not found")
    expect_error([DLPROF, "list", "--lib", LIB, "--", "/bin/true"], "list takes no command")
    expect_error([DLPROF, "list", "--lib", LIB, "-d", "1"], "--duration belongs to")
    expect_error([DLPROF, "list", "--lib", LIB, "--func", "no_such_function"], "no function matched")


def test_stepped_overhead_said_and_warned():
    """A single-stepped function called in a tight loop: the footer and JSON give the probes'
    estimated cost (its calls at the calibrated single-stepped pair), and one line on stderr after
    the summary warns, naming it and the remedies."""
    calls = 50000
    rc, doc, err = run_profiled([DRIVER, "count", str(calls)], ["--func", "dlt_add"])
    check(rc == 0 and doc, f"rc {rc}: {err}")
    ov = doc["probe_overhead"]
    pair = ov["pair_ns"]["single_stepped"]
    check(ov["calls"] == {"emulated": 0, "single_stepped": calls, "entry_only": 0}, f"calls {ov['calls']}")
    # The calls at their class's cost, unless that is more than the loop's one thread had (then held to it).
    check(abs(ov["cpu_s"] - calls * pair / 1e9) < 1e-6 or (ov["bounded"] and ov["cpu_s"] < calls * pair / 1e9),
          f"cpu_s {ov['cpu_s']} for {calls} pairs of {pair} ns")
    check(abs(ov["share_of_one_cpu"] - ov["cpu_s"] / doc["elapsed_s"]) < 1e-6, f"share {ov}")
    check(ov["costliest"][0]["name"] == "dlt_add" and ov["costliest"][0]["probes"] == "single_stepped",
          f"costliest {ov['costliest']}")
    print(f"{calls} calls: ~{ov['cpu_s']:.3f} s of CPU in {doc['elapsed_s']:.3f} s ({ov['share_of_one_cpu']:.0%})")
    check(ov["share_of_one_cpu"] > 0.10, f"share {ov['share_of_one_cpu']}: a tight loop of stepped calls under 10%?")
    # Once while it ran, when it lasted past the first check (0.5 s), and once after the summary:
    # the last line, with the whole profile's figures.
    warnings = [l for l in err.splitlines() if "the probes cost the targets" in l]
    check(1 <= len(warnings) <= 2 and err.splitlines()[-1] == warnings[-1] and " s profiled (" in warnings[-1],
          f"stderr {err!r}")
    w = warnings[-1]
    check(w.startswith("dlprof-bpf: warning: ") and "most in dlt_add ~" in w and "(single-stepped)" in w
          and "--func/--exclude" in w and f"dlprof-bpf list --lib {LIB}" in w, f"warning {w!r}")
    # --placement entry: the remedy names placement too; the table's footer says the estimate.
    p = subprocess.run([DLPROF] + (["--attach", ATTACH] if ATTACH else []) +
                       ["--lib", LIB, "--func", "dlt_add", "--placement", "entry", "--", DRIVER, "count", str(calls)],
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"rc {p.returncode}: {p.stderr}")
    # "at most" when the calls at the calibrated pair come to more than the loop's thread had
    # (held to its CPU time, as the JSON's bounded above): a calibration on a busy CPU.
    footer = [l for l in p.stdout.splitlines()
              if l.startswith(("# the probes cost the targets ~", "# the probes cost the targets at most "))]
    check(len(footer) == 1 and f"{calls} calls at a single-stepped pair's " in footer[0], f"table {p.stdout}")
    check("--placement auto" in p.stderr, f"stderr {p.stderr!r}")


@modes("session")
def test_small_overhead_not_warned():
    """Two sleeps: the estimate is said, far under 10%, and no warning."""
    rc, doc, err = run_profiled([DRIVER, "sleep", "100", "2"], ["--func", "dlt_sleep_ms"])
    check(rc == 0 and doc, f"rc {rc}: {err}")
    ov = doc["probe_overhead"]
    check(ov["calls"]["emulated"] + ov["calls"]["single_stepped"] == 2 and ov["share_of_one_cpu"] < 0.01, f"{ov}")
    check("the probes cost the targets" not in err, f"stderr {err!r}")


@modes("session")
def test_raw_latency_still_estimates():
    """--raw-latency calibrates for the estimate only: its times stay raw, without compensation's costs."""
    rc, doc, err = run_profiled([DRIVER, "count", "1000"], ["--func", "dlt_add", "--raw-latency"])
    check(rc == 0 and doc, f"rc {rc}: {err}")
    check(doc["latency"] == "raw" and "probe_cost_ns" not in doc and "compensation_error" not in doc, f"{doc}")
    check(doc["probe_overhead"]["calls"]["single_stepped"] == 1000, f"{doc['probe_overhead']}")


if __name__ == "__main__":
    sys.exit(itest.run(globals()))
