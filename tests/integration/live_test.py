#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Integration tests of the live mode: the real BPF programs in the real
kernel, profiling the test driver (runner and helpers: itest.py)."""
import json
import os
import subprocess
import sys
import tempfile
import time

import itest
from itest import *  # noqa: F401,F403 (the shared helpers and environment)

# ---- tests ---------------------------------------------------------------

def test_count_single():
    rc, doc, err = run_profiled([DRIVER, "count", "100000"])
    check(rc == 0, f"rc {rc}: {err}")
    f = func(doc, "dlt_add")
    check(f is not None, f"dlt_add missing: {doc}")
    check(f["calls"] == 100000, f"calls {f['calls']} != 100000")
    check(f["timed"] == 100000 and f["unmatched"] == 0, f"timed/unmatched wrong: {f}")
    check(f["min_ns"] <= f["p50_ns"] <= f["p90_ns"] <= f["p99_ns"] <= f["max_ns"], f"percentiles unordered: {f}")
    check(f["total_ns"] > 0 and f["avg_ns"] == f["total_ns"] // f["timed"], f"avg wrong: {f}")
    check(doc["functions_attached"] >= 6, f"functions_attached {doc['functions_attached']}")
    check(os.path.isabs(f["lib"]), "lib path not absolute")


def test_count_threads():
    rc, doc, err = run_profiled([DRIVER, "threads", "4", "25000"])
    check(rc == 0, f"rc {rc}: {err}")
    f = func(doc, "dlt_add")
    check(f["calls"] == 100000 and f["timed"] == 100000, f"4 threads: {f}")


def test_recursion():
    rc, doc, err = run_profiled([DRIVER, "recurse", "10", "1000"])
    check(rc == 0, f"rc {rc}: {err}")
    f = func(doc, "dlt_recurse")
    check(f["calls"] == 10000 and f["timed"] == 10000 and f["unmatched"] == 0, f"recursion: {f}")


def test_longjmp():
    rc, doc, err = run_profiled([DRIVER, "longjmp", "100", "1000"])
    check(rc == 0, f"rc {rc}: {err}")
    lj, outer, add = func(doc, "dlt_longjmp"), func(doc, "dlt_outer"), func(doc, "dlt_add")
    check(lj["calls"] == 200 and lj["unmatched"] == 200 and lj["timed"] == 0, f"dlt_longjmp: {lj}")
    check(outer["calls"] == 100 and outer["unmatched"] == 100 and outer["timed"] == 0, f"dlt_outer: {outer}")
    check(add["calls"] == 1000 and add["timed"] == 1000 and add["unmatched"] == 0, f"dlt_add after longjmp: {add}")


def test_sleep_p50():
    rc, doc, err = run_profiled([DRIVER, "sleep", "20", "25"])
    check(rc == 0, f"rc {rc}: {err}")
    f = func(doc, "dlt_sleep_ms")
    check(f["calls"] == 25, f"sleep calls {f}")
    # The histogram is within 3.2%; the driver's own median includes the probes' cost.
    want = oracle(err, "wall_ns_p50")
    check(abs(f["p50_ns"] - want) <= 0.05 * want, f"p50 {f['p50_ns']} not within 5% of the driver's own median {want}")


def test_nested_libraries():
    rc, doc, err = run_profiled([DRIVER, "nested", LATE_LIB, "3000"], ["--lib", LATE_LIB])
    check(rc == 0, f"rc {rc}: {err}")
    outer = func(doc, "dlt_apply")
    inner = [f for f in doc["functions"] if f["name"] == "dlt_add"]
    check(outer and outer["calls"] == 3000 and outer["timed"] == 3000, f"dlt_apply: {outer}")
    check(len(inner) == 1 and inner[0]["lib"].endswith(os.path.basename(LATE_LIB)),
          f"dlt_add must come from the late library only: {inner}")
    check(inner[0]["calls"] == 3000 and inner[0]["timed"] == 3000, f"dlt_add: {inner[0]}")
    check(outer["total_ns"] > inner[0]["total_ns"], "the outer call must include the inner one")


def test_ifunc():
    rc, doc, err = run_profiled([DRIVER, "ifunc", "20000"])
    check(rc == 0, f"rc {rc}: {err}")
    f = func(doc, "dlt_ifunc_add")
    check(f and f["calls"] == 20000 and f["timed"] == 20000, f"IFUNC implementation not probed: {f}")


def test_libc_strlen_ifunc():
    p = subprocess.run(base_args(["--lib", "libc.so.6", "--func", "strlen", "--", DRIVER, "strlen", "100000"]),
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"rc {p.returncode}: {p.stderr}")
    f = func(json.loads(p.stdout), "strlen")
    # libc's own start-up calls strlen a few times too.
    check(f and 100000 <= f["calls"] <= 100100, f"libc strlen: {f}")
    # libc's time() resolves into the vDSO and is left out, but only a selected one is worth a warning.
    check("IFUNC" not in p.stderr, f"warning about IFUNCs not asked for: {p.stderr}")
    p = subprocess.run(base_args(["--lib", "libc.so.6", "--func", "time", "--func", "strlen", "-d", "0.1"]),
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0 and "1 IFUNC function of" in p.stderr and "left out" in p.stderr,
          f"no warning for the unresolvable IFUNC time(): {p.stderr}")
    p = subprocess.run(base_args(["--lib", "libc.so.6", "--func", "time", "-d", "0.1"]),
                       capture_output=True, text=True, timeout=120)
    check(p.returncode != 0 and "IFUNC" in p.stderr and len(p.stderr.strip().splitlines()) == 1,
          f"time() alone: want a one-line error about the IFUNC: rc {p.returncode} {p.stderr}")


def test_counter_page_faults():
    rc, doc, err = run_profiled([DRIVER, "pages", "64", "50"], ["-e", "page-faults"])
    check(rc == 0, f"rc {rc}: {err}")
    f = func(doc, "dlt_touch_pages")
    check(f and f["timed"] == 50, f"dlt_touch_pages: {f}")
    check(doc["events"] == ["page-faults"], f"events {doc['events']}")
    # Not 64: with multi-size THP one fault maps several pages; the thread's rusage is the oracle.
    check_counter_oracle(f, "page-faults", err, "page_faults")


def test_oncpu_sleep():
    rc, doc, err = run_profiled([DRIVER, "sleep", "20", "10"])
    check(rc == 0, f"rc {rc}: {err}")
    f = func(doc, "dlt_sleep_ms")
    check(f["oncpu_ns"] < 0.05 * f["total_ns"], f"on-CPU {f['oncpu_ns']} not below 5% of wall {f['total_ns']}")


def test_oncpu_migration():
    if os.cpu_count() < 2:
        raise Skip("one CPU: a thread cannot change CPU")
    rc, doc, err = run_profiled([DRIVER, "migrate", "100", "5"], ["-e", "cpu-migrations"])
    check(rc == 0, f"rc {rc}: {err}")
    f = func(doc, "dlt_spin_migrate")
    own = thread_cpu_ns(err)
    # A switch sched_switch missed once inflated a call by the half it spent before migrating (+10%);
    # now such a call is taken from the kernel's run time, at most a tick (4 ms) stale.
    check(abs(f["oncpu_ns"] - own) <= 0.05 * own, f"on-CPU {f['oncpu_ns']} not within 5% of the thread's CPU clock {own}")
    check(f["raw_oncpu_ns" if f.get("raw_oncpu_ns") else "oncpu_ns"] <= 1.001 * f["raw_total_ns" if f.get("raw_total_ns") else "total_ns"],
          f"on-CPU above wall time: {f}")
    check(counter_per_call(f, "cpu-migrations") >= 1, f"no migration counted: {f}")


def test_shared_cpu():
    noise = subprocess.Popen([DRIVER, "noise", "10"], env=dict(os.environ, DLTEST_CPU="0"))
    try:
        time.sleep(0.2)
        rc, doc, err = run_profiled([DRIVER, "spintouch", "100", "32", "10"], ["-e", "page-faults"],
                                    env=dict(os.environ, DLTEST_CPU="0"))
    finally:
        noise.kill()
        noise.wait()
    check(rc == 0, f"rc {rc}: {err}")
    f = func(doc, "dlt_spin_touch")
    own = thread_cpu_ns(err)
    check(abs(f["oncpu_ns"] - own) <= 0.1 * own, f"on-CPU {f['oncpu_ns']} not within 10% of the thread's CPU clock {own}")
    # Without a real share of the CPU taken by the neighbour, wall time would pass for on-CPU time.
    check(own <= 0.8 * f["total_ns"], f"the neighbour did not share the CPU: own {own} of wall {f['total_ns']}")
    # The neighbour's faults must not leak in.
    check_counter_oracle(f, "page-faults", err, "page_faults")


def test_naps_context_switches():
    rc, doc, err = run_profiled([DRIVER, "nap", "5", "20"], ["-e", "context-switches"])
    check(rc == 0, f"rc {rc}: {err}")
    f = func(doc, "dlt_nap")
    check_counter_oracle(f, "context-switches", err, "context_switches")


def test_hardware_events():
    if has_pmu():
        rc, doc, err = run_profiled([DRIVER, "count", "1000"], ["-e", "cycles,instructions"])
        check(rc == 0, f"rc {rc}: {err}")
        f = func(doc, "dlt_add")
        check(f["counters"]["cycles"] > 0 and f["counters"]["instructions"] > 0, f"hardware counters: {f}")
        return
    # No PMU (our VMs): a clear one-line error, never a column of zeros.
    expect_error([DLPROF, "--lib", LIB, "-e", "cycles", "--", DRIVER, "exit", "0"], "no hardware PMU")
    rc, doc, err = run_profiled([DRIVER, "count", "10"])
    check("no hardware PMU" in err, f"default events must say there is no PMU: {err!r}")
    check(doc["events"] == ["page-faults", "context-switches"], f"default events {doc['events']}")


def test_placement_counts_match_entry():
    per = {}
    for placement in ("entry", "auto"):
        rc, doc, err = run_profiled([DRIVER, "asm", "3000"], ["--placement", placement, "--func", "dlt_*"])
        check(rc == 0, f"rc {rc}: {err}")
        per[placement] = doc
    for name in ("dlt_test_je", "dlt_loop_head", "dlt_loop_second"):
        e, a = func(per["entry"], name), func(per["auto"], name)
        check(e and a, f"{name} missing")
        check((e["calls"], e["timed"], e["unmatched"]) == (a["calls"], a["timed"], a["unmatched"]),
              f"{name}: entry probe {e} != placed probe {a}")
    check(func(per["auto"], "dlt_test_je")["calls"] == 3000, "dlt_test_je calls")
    check(func(per["auto"], "dlt_loop_second")["calls"] == 3000, "dlt_loop_second calls")
    check(per["auto"]["functions_moved"] >= 1 and per["entry"]["functions_moved"] == 0,
          f"moved: auto {per['auto']['functions_moved']}, entry {per['entry']['functions_moved']}")
    # dlt_lock_loop takes no probe anywhere: left out with a warning, counted, the rest profiled.
    for placement in ("entry", "auto"):
        rc, doc, err = run_profiled([DRIVER, "exit", "0"], ["--placement", placement, "--lib", UNPROBEABLE_LIB])
        check(rc == 0 and doc["functions_skipped"] == 1 and "1 function" in err and "left out" in err,
              f"{placement}: rc {rc}, skipped {doc and doc['functions_skipped']}: {err}")


def test_other_process_not_counted():
    """A process not under the profiler calls the same library meanwhile: none of its calls count."""
    other = subprocess.Popen([DRIVER, "spin", "1", "100000"])
    try:
        rc, doc, err = run_profiled([DRIVER, "sleep", "100", "5"])
        check(other.poll() is None, "the other process ended before the profile did")
    finally:
        other.kill()
        other.wait()
    check(rc == 0, f"rc {rc}: {err}")
    check(calls_of(doc, "dlt_sleep_ms") == 5, f"own calls {calls_of(doc, 'dlt_sleep_ms')} != 5")
    check(calls_of(doc, "dlt_spin_ms") == 0, f"the other process's calls counted: {func(doc, 'dlt_spin_ms')}")
    check(doc["orphan_returns"] == 0, f"orphan returns {doc['orphan_returns']}")


def test_fork_follow():
    rc, doc, err = run_profiled([DRIVER, "fork", "1000"])
    check(rc == 0, f"rc {rc}: {err}")
    check(calls_of(doc, "dlt_add") == 2000, f"parent+child calls {calls_of(doc, 'dlt_add')} != 2000")


def test_exit_status():
    rc, doc, err = run_profiled([DRIVER, "exit", "7"])
    check(rc == 7, f"exit status {rc} != 7: {err}")
    check(doc is not None, "no JSON document")
    called = [f["name"] for f in doc["functions"] if f["name"].startswith("dlt_")]
    check(not called, f"no library calls expected, got {called}")


def test_attach_pid():
    doc = profile_running_driver(["count", "50000"], [LIB])
    check(calls_of(doc, "dlt_add") == 50000, f"-p calls {calls_of(doc, 'dlt_add')} != 50000")


def test_attach_pid_new_threads():
    # The threads start only after the profiler attached.
    doc = profile_running_driver(["threads", "4", "10000"], [LIB])
    check(calls_of(doc, "dlt_add") == 40000, f"threads started later: {calls_of(doc, 'dlt_add')} != 40000")


def test_dlopen_late():
    def not_mapped_yet(d):
        maps = open(f"/proc/{d.pid}/maps").read()
        check(os.path.basename(LATE_LIB) not in maps, "late library already mapped")

    doc = profile_running_driver(["dlopen", LATE_LIB, "5000"], [LATE_LIB], not_mapped_yet)
    f = func(doc, "dlt_add")
    check(f and f["calls"] == 5000 and f["lib"].endswith(os.path.basename(LATE_LIB)),
          f"dlopen'd library: {f}")


def test_dlopen_late_by_name():
    """A plugin dlopened later by a bare name that only its program's DT_RUNPATH resolves
    (no LD_LIBRARY_PATH anywhere), given to --lib by that name: counted as by its path,
    for a launched command and for a -p process."""
    name = os.path.basename(LATE_LIB)
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    p = subprocess.run(base_args(["--lib", name, "--func", "dlt_add", "--", DRIVER, "dlopen", name, "5000"]),
                       capture_output=True, text=True, timeout=120, env=env)
    check(p.returncode == 0 and p.stdout.strip(), f"launched: rc {p.returncode}: {p.stderr}")
    f = func(json.loads(p.stdout), "dlt_add")
    check(f and f["calls"] == 5000 and f["lib"] == LATE_LIB, f"launched, by name: {f}")

    d = subprocess.Popen([DRIVER, "--wait", "dlopen", name, "5000"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True, env=env)
    try:
        check(d.stdout.readline().startswith("ready "), "driver did not start")
        check(name not in open(f"/proc/{d.pid}/maps").read(), "late library already mapped")
        prof = start_profiler(["--lib", name, "--func", "dlt_add", "-p", str(d.pid)])
        drive(d)
        doc = stop_profiler(prof)
    finally:
        finish(d)
    f = func(doc, "dlt_add")
    check(f and f["calls"] == 5000 and f["lib"] == LATE_LIB, f"-p, by name: {f}")


def test_sigkill_leaves_no_probe():
    d = start_waiting_driver(["count", "1000"])
    try:
        prof = start_profiler_on(d.pid, [LIB])
        ours = prog_ids_of(prof.pid)
        check(ours, "profiler holds no BPF program fd")
        prof.kill()
        prof.wait()
        deadline = time.time() + 10
        while time.time() < deadline:
            links = link_prog_ids()
            if not (ours & live_prog_ids()) and (links is None or not (ours & links)):
                break
            time.sleep(0.1)
        check(not (ours & live_prog_ids()), f"programs {ours} still referenced after SIGKILL")
        links = link_prog_ids()
        check(links is None or not (ours & links), f"links of {ours} still present after SIGKILL")
        # The probes are gone from the process too: its calls reach nobody and it runs on.
        drive(d)
    finally:
        finish(d)


def test_errors():
    expect_error([DLPROF, "--lib", "libdoesnotexist.so.9", "--", DRIVER, "exit", "0"], "not found")
    expect_error([DLPROF, "--lib", LIB, "--func", "nosuchfunc*", "--", DRIVER, "exit", "0"],
                 "no function matched")
    expect_error([DLPROF, "--lib", LIB, "-p", "999999999"], "not found")
    expect_error([DLPROF, "--lib", LIB, "--", "/nonexistent/command"], "command not found")
    expect_error([DLPROF, "--lib", "/etc/passwd", "--", DRIVER, "exit", "0"], "not an ELF")
    expect_error([DLPROF, "--lib", LIB, "--bogus"], "unknown option")
    expect_error([DLPROF, "--", DRIVER, "exit", "0"], "no library")
    expect_error([DLPROF, "--lib", "libc.so.6", "--max-functions", "10", "-d", "1"],
                 "more than the 10 a profile takes unasked: narrow them with --lib/--func/--exclude, "
                 "or allow them with --max-functions N")
    expect_error([DLPROF, "recrod", "-o", "/tmp/x", "--lib", LIB, "--", DRIVER, "exit", "0"],
                 "unknown command 'recrod': did you mean 'record'?")
    # A target whose environment even root cannot read (pid 1 of some sandboxes): the file is named.
    try:
        open("/proc/1/environ", "rb").close()
    except PermissionError:
        expect_error([DLPROF, "--lib", "libc.so.6", "-p", "1", "-d", "1"], "/proc/1/environ: Permission denied")


@modes("session")
def test_version_lists_kernel_features():
    """--version -v: each feature probed, what the kernel has of it; the required ones are here
    (the suite runs), and the attach modes auto can pick agree with what the kernel accepts."""
    p = subprocess.run([DLPROF, "--version", "-v"], capture_output=True, text=True, timeout=60)
    check(p.returncode == 0 and p.stdout.startswith("dlprof-bpf "), f"{p.returncode}: {p.stdout!r} {p.stderr!r}")
    rows = {w[0]: w for w in (l.split() for l in p.stdout.splitlines()) if len(w) > 3 and w[1] in ("yes", "no")}
    for name in ("btf", "ringbuf", "task-storage", "attach-cookie", "uprobe-multi", "uprobe-session",
                 "write-user", "filemap-tracepoints", "hardware-pmu"):
        check(name in rows, f"{name} not listed: {p.stdout}")
    for name in ("btf", "ringbuf", "task-storage", "attach-cookie"):
        check(rows[name][1] == "yes" and "(required)" in rows[name], f"{name}: {rows[name]}")
    check(rows["hardware-pmu"][1] == ("yes" if has_pmu() else "no"), f"hardware-pmu disagrees with -e list: {p.stdout}")
    for mode, feature in (("session", "uprobe-session"), ("multi", "uprobe-multi")):
        r = subprocess.run([DLPROF, "--attach", mode, "--lib", LIB, "-e", "none", "--", DRIVER, "count", "1"],
                           capture_output=True, text=True, timeout=120)
        check((r.returncode == 0) == (rows[feature][1] == "yes"), f"{feature} {rows[feature][1]}, but --attach {mode}: "
              f"exit {r.returncode} {r.stderr[-300:]!r}")


def test_not_root_error():
    with itest.reachable_copies(DLPROF, LIB) as (dlprof, lib):
        expect_error([dlprof, "--lib", lib, "--", "/bin/true"], "needs root", preexec=itest.drop_to_nobody)


# ---- trace mode ------------------------------------------------------------


@modes("session")
def test_report_says_its_times_are_raw():
    """record's own summary is compensated; report of the same trace shows raw times (a call
    must lie inside its caller) and says so in the table and the JSON, as the summary does."""
    with tempfile.TemporaryDirectory() as tmp:
        trace, doc = record(tmp, [DRIVER, "recurse", "5", "20"])
        check(doc["latency"] == "compensated", f"record's summary: {doc['latency']}")
        table = subprocess.run([DLPROF, "report", trace], capture_output=True, text=True)
        rep = subprocess.run([DLPROF, "report", trace, "--json"], capture_output=True, text=True)
    check(table.returncode == 0 and "# times are raw, the probes' own cost included: a trace keeps" in table.stdout,
          f"report's table does not say its times are raw: {table.stdout[-600:]}")
    check(json.loads(rep.stdout)["latency"] == "raw", f"report's JSON: {rep.stdout[:300]}")


def test_record_exact_nesting():

    with tempfile.TemporaryDirectory() as tmp:
        trace, doc = record(tmp, [DRIVER, "recurse", "5", "100"])
        header, rows, _ = dump_csv(trace)
    check(header[:8] == ["ts_ns", "dur_ns", "pid", "tid", "cpu", "lib", "func", "depth"], f"header {header}")
    check(header[-1] == "oncpu_ns", f"header {header}")
    rows = [r for r in rows if r["func"] == "dlt_recurse"]
    check(len(rows) == 500, f"{len(rows)} records != 500 calls")
    check(func(doc, "dlt_recurse")["calls"] == 500, "summary disagrees")
    ts = [int(r["ts_ns"]) for r in rows]
    check(ts == sorted(ts), "records not ordered by entry time")
    # Each call of depth d > 0 lies inside the call of depth d-1 just before it.
    stack = []
    for r in rows:
        d, start, end = int(r["depth"]), int(r["ts_ns"]), int(r["ts_ns"]) + int(r["dur_ns"])
        del stack[d:]
        check(len(stack) == d, f"depth {d} without a parent: {r}")
        if stack:
            check(stack[-1][0] <= start and end <= stack[-1][1], f"call {r} outside its parent {stack[-1]}")
        stack.append((start, end))
    check(sum(int(r["depth"]) == 0 for r in rows) == 100, "outermost calls")


def test_record_sigkill_recovers_flushed():

    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace.d")
        d = start_waiting_driver(["count", "20000"])
        try:
            args = [DLPROF, "record", "-o", trace, "--lib", LIB, "--func", "dlt_add", "-p", str(d.pid)]
            if ATTACH:
                args += ["--attach", ATTACH]
            prof = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            line = ""
            while "profiling" not in line:
                line = prof.stderr.readline()
                check(line, "recorder did not start")
            drive(d)
            time.sleep(2.5)   # more than the 1 s flush interval
            prof.kill()
            prof.wait()
        finally:
            finish(d)
        merged = os.path.join(tmp, "trace.dlt")
        p = subprocess.run([DLPROF, "merge", trace, "-o", merged], capture_output=True, text=True)
        check(p.returncode == 0, f"merge after SIGKILL: {p.stderr}")
        _, rows, _ = dump_csv(merged)
    n = sum(r["func"] == "dlt_add" for r in rows)
    check(n == 20000, f"{n} of 20000 flushed calls recovered after SIGKILL")


def test_record_storm_drops_counted():

    calls = 200000
    with tempfile.TemporaryDirectory() as tmp:
        trace, doc = record(tmp, [DRIVER, "count", str(calls)], ["--ringbuf-size", "4K"])
        _, rows, _ = dump_csv(trace)
        rep = subprocess.run([DLPROF, "report", trace, "--json"], capture_output=True, text=True)
    written = sum(r["func"] == "dlt_add" for r in rows)
    check(doc["drops"] > 0, "a 4K ringbuf must overflow under a call storm")
    check(written + doc["drops"] == calls, f"records {written} + drops {doc['drops']} != calls {calls}")
    check(func(doc, "dlt_add")["calls"] == calls, "aggregates must stay exact despite drops")
    check(rep.returncode == 0 and "incomplete" in rep.stderr, f"report must say the trace is incomplete: {rep.stderr!r}")
    check(json.loads(rep.stdout)["drops"] == doc["drops"], "report shows the drops")


if __name__ == "__main__":
    sys.exit(itest.run(globals()))
