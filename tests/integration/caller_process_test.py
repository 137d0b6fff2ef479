#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""--by caller,process: each function's calls split by calling function and by
process. Two callers_driver processes (tests/progs/callers_driver.c) call
dlt_add and dlt_test_je from the same call sites, each a different number of
times: every (function, caller, process) row is exact, in the table, JSON,
CSV, and in report of a recorded trace. Runner and helpers: itest.py."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import itest
from itest import *  # noqa: F401,F403 (the shared helpers and environment)

CALLERS_DRIVER = os.environ.get("CALLERS_DRIVER", "")
CALLERS_LIB = os.environ.get("CALLERS_LIB", "")
DRIVER_NAME = os.path.basename(CALLERS_DRIVER)
COMM = DRIVER_NAME[:15]  # TASK_COMM_LEN - 1
FUNCS = ["--lib", LIB, "--func", "dlt_add,dlt_test_je", "--by", "caller,process"]


def expected(counts):
    """{(function, caller, caller_module, pid): calls} for {pid: rounds of n calls} as the driver makes them."""
    lib2 = os.path.basename(CALLERS_LIB)
    want = {}
    for pid, n in counts.items():
        want.update({("dlt_add", "static_caller", DRIVER_NAME, pid): n,
                     ("dlt_add", "exported_caller", DRIVER_NAME, pid): 2 * n,
                     ("dlt_add", "two_sites_caller", DRIVER_NAME, pid): 6 * n,
                     ("dlt_add", "callers_relay", lib2, pid): 5 * n,
                     ("dlt_test_je", "je_caller", DRIVER_NAME, pid): 7 * n})
    return want


def json_rows(doc):
    """{(function, caller, caller_module, pid): calls}; each row's comm the driver's, each call timed."""
    check(doc["by"] == "caller,process" and doc["group_overflow"] == 0,
          f"by {doc['by']}, overflow {doc['group_overflow']}")
    for r in doc["functions"]:
        check(r["comm"] == COMM, f"row {r}: comm {r['comm']!r}, want {COMM!r}")
        check(r["timed"] == r["calls"], f"row {r}: {r['timed']} of {r['calls']} timed")
    return {(r["name"], r["caller"], r["caller_module"], r["pid"]): r["calls"] for r in doc["functions"]}


def start_drivers(*ns):
    """Waiting callers drivers, one per n (itest.drive makes one round of its calls)."""
    ds = []
    for n in ns:
        d = subprocess.Popen([CALLERS_DRIVER, "--wait", str(n)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
        line = d.stdout.readline()
        check(line.startswith("ready "), f"callers driver did not start: {line!r}")
        ds.append(d)
    return ds


def run_two(args, ns, rounds=1, **profiler):
    """Two waiting drivers under -p (args before it), each making rounds of its calls:
    (stdout, {pid: calls per caller unit})."""
    ds = start_drivers(*ns)
    try:
        prof = start_profiler(args + ["-p", ",".join(str(d.pid) for d in ds)], **profiler)
        for _ in range(rounds):
            for d in ds:
                drive(d)
    finally:
        for d in ds:
            finish(d)
    prof.send_signal(signal.SIGINT)
    out, err = prof.communicate(timeout=60)
    check(prof.returncode == 0, f"{profiler.get('command', ['profiler'])[0]} exit {prof.returncode}: {err}")
    return out, {d.pid: n * rounds for d, n in zip(ds, ns)}


def profile_two(extra, ns=(20, 45), rounds=1, json_doc=True):
    """Two drivers under -p, each making rounds of its calls: (stdout, {pid: calls per caller unit})."""
    return run_two(extra, ns, rounds, json_doc=json_doc)


def test_by_caller_process_exact():
    """Two processes, the same call sites, two rounds: one row per function, caller and process,
    each exact and named after both exited."""
    out, counts = profile_two(FUNCS, rounds=2)
    got = json_rows(json.loads(out))
    want = expected(counts)
    check(got == want, f"rows {got}, want {want}")


@modes("session", "multi")
def test_by_caller_process_system_wide():
    """Every process of the library: a driver that exited a while before the end (its rows taken
    out of the kernel's table and kept) and one that exits at the end, each exact and named."""
    n1, n2 = 30, 11
    prof = start_profiler(FUNCS)
    first = subprocess.run([CALLERS_DRIVER, str(n1)], capture_output=True, text=True, timeout=60)
    check(first.returncode == 0, f"first driver exit {first.returncode}")
    # The profiler retires an exited process's callers about once a second.
    time.sleep(2.5)
    second = subprocess.Popen([CALLERS_DRIVER, str(n2)], stdout=subprocess.DEVNULL)
    check(second.wait(timeout=60) == 0, f"second driver exit {second.returncode}")
    got = json_rows(stop_profiler(prof))
    # The first driver's pid is not known from run(): the rows name it.
    pids = {k[3] for k in got} - {second.pid}
    check(len(pids) == 1, f"processes in the rows: {sorted({k[3] for k in got})}, second {second.pid}")
    want = expected({pids.pop(): n1, second.pid: n2})
    check(got == want, f"rows {got}, want {want}")


def table_rows(stdout):
    """The table's rows below its header: [(pid, comm, name, library, calls)]; name keeps its indent."""
    lines = stdout.splitlines()
    head = next(i for i, l in enumerate(lines) if l.lstrip().startswith("PID"))
    name_at = lines[head].index("FUNCTION")
    rows = []
    for l in lines[head + 1:]:
        if l.startswith("#") or not l.strip():
            break
        pid, comm = l[:name_at].split()
        rest = l[name_at:]
        # The rest's row: "(N other callers by process)", spaces and all.
        name = rest[:rest.index(")") + 1] if rest.lstrip().startswith("(") else \
            rest[:len(rest) - len(rest.lstrip())] + rest.split()[0]
        w = rest[len(name):].split()
        rows.append((pid, comm, name, w[0], int(w[1])))
    return lines, rows


@modes("session")
def test_by_caller_process_table_and_csv():
    """The table nests each function's callers in each process under it (PID and COMM first, the
    function's row and the rest's "-"): with --callers all every row exact; with --callers 3 the
    top 3 and one row summing the rest, which make up the function's calls. CSV ends its
    caller columns with pid and comm."""
    out, counts = profile_two(FUNCS[:-2] + ["--by", "caller,process", "--callers", "all"], json_doc=False)
    lines, rows = table_rows(out)
    want = expected(counts)
    got, func = {}, None
    for pid, comm, name, lib, calls in rows:
        if name.startswith("  "):
            check(comm == COMM, f"row {(pid, comm, name)}")
            got[(func, name.strip(), lib, int(pid))] = calls
        else:
            check((pid, comm) == ("-", "-"), f"function row {(pid, comm, name)}")
            func = name
            check(calls == sum(k for key, k in want.items() if key[0] == func), f"{func}'s row: {calls} calls")
    check(got == want, f"table rows {got}, want {want}")
    check(any("one row per function, caller and process" in l for l in lines), f"footer: {out}")
    out, counts = profile_two(FUNCS[:-2] + ["--by", "caller,process", "--callers", "3"], json_doc=False)
    lines, rows = table_rows(out)
    at = next(i for i, r in enumerate(rows) if r[2] == "dlt_add")
    under = rows[at + 1:at + 5]
    # dlt_add: 4 callers in each of 2 processes, 8 rows: the top 3 and the other 5 summed.
    check([r[2].startswith("  ") for r in under] == [True] * 4 and under[3][2] == "  (5 other callers by process)"
          and under[3][:2] == ("-", "-"), f"dlt_add's rows {rows[at:at + 5]}")
    check(sum(r[4] for r in under) == rows[at][4] == 14 * sum(counts.values()),
          f"dlt_add's callers {under}, its row {rows[at]}")
    out, counts = profile_two(["--format", "csv"] + FUNCS, json_doc=False)
    csv_lines = [l for l in out.splitlines() if l.startswith("lib,") or l.startswith(LIB)]
    check(csv_lines and ",caller,caller_module,pid,comm," in csv_lines[0], f"csv header {csv_lines[:1]}")
    head = csv_lines[0].split(",")
    got = {}
    for l in csv_lines[1:]:
        r = dict(zip(head, l.split(",")))
        check(r["comm"] == COMM, f"csv row {l}")
        got[(r["func"], r["caller"], r["caller_module"], int(r["pid"]))] = int(r["calls"])
    check(got == expected(counts), f"csv rows {got}, want {expected(counts)}")


def test_record_report_by_caller_process():
    """record --by caller,process of two processes: report --by caller,process of the trace (and
    of its merged .dlt) gives the live summary's rows, each exact, pid and comm alike;
    report --by caller of the same trace sums the processes."""
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "t.d")
        out, counts = record_two(trace)
        live = json_rows(json.loads(out))
        check(live == expected(counts), f"live rows {live}, want {expected(counts)}")
        dlt = os.path.join(tmp, "t.dlt")
        m = subprocess.run([DLPROF, "merge", trace, "-o", dlt], capture_output=True, text=True, timeout=120)
        check(m.returncode == 0, f"merge: {m.returncode} {m.stderr}")
        for src in (trace, dlt):
            rep = subprocess.run([DLPROF, "report", src, "--json", "--by", "caller,process"], capture_output=True,
                                 text=True, timeout=120)
            check(rep.returncode == 0, f"report {src}: {rep.returncode} {rep.stderr}")
            got = json_rows(json.loads(rep.stdout))
            check(got == live, f"report {src}: {got}, live {live}")
        rep = subprocess.run([DLPROF, "report", trace, "--json", "--by", "caller"], capture_output=True, text=True,
                             timeout=120)
        check(rep.returncode == 0, f"report --by caller: {rep.returncode} {rep.stderr}")
        summed = {}
        for (f, c, mod, _pid), k in live.items():
            summed[(f, c, mod)] = summed.get((f, c, mod), 0) + k
        got = {(r["name"], r["caller"], r["caller_module"]): r["calls"] for r in json.loads(rep.stdout)["functions"]}
        check(got == summed, f"report --by caller {got}, want {summed}")


def record_two(trace, ns=(9, 16)):
    """record -o trace --by caller,process of two waiting drivers: (the live JSON summary, {pid: n})."""
    return run_two(FUNCS, ns, command=["record", "-o", trace])


@modes("session")
def test_by_caller_combinations_refused():
    """Combinations other than caller,process: one line naming what --by accepts; process,caller
    is the same key; top and --html do not take it."""
    expect_error([DLPROF, "--lib", LIB, "--by", "caller,cgroup", "--", CALLERS_DRIVER, "1"],
                 "caller,process is the one combination")
    expect_error([DLPROF, "--lib", LIB, "--by", "caller,container", "--", CALLERS_DRIVER, "1"],
                 "one of function, process, container, cgroup, caller, caller,process")
    expect_error([DLPROF, "top", "--lib", LIB, "--by", "caller,process", "--", CALLERS_DRIVER, "1"],
                 "top --by: only caller")
    p = subprocess.run(base_args(["--lib", LIB, "--func", "dlt_test_je", "--by", "process,caller", "--",
                                  CALLERS_DRIVER, "3"]), capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"process,caller: exit {p.returncode}, {p.stderr}")
    # The driver's own lines come first ("callers: ..."), then the summary.
    got = json_rows(json.loads(p.stdout[p.stdout.index("{"):]))
    check(set(got.values()) == {21} and len(got) == 1, f"process,caller rows {got}")


if __name__ == "__main__":
    sys.exit(itest.run(globals()))
