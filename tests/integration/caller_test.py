#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""--by caller: each function's calls split by the function that made them,
keyed in the kernel by return address and named from where the address was
mapped when the BPF side first saw it. The driver (tests/progs/callers_driver.c)
says how many calls each of its callers made: the driver's own functions (one
static, one calling from two sites), a second library, and dlt_test_je, whose
probe stands past its entry. Runner and helpers: itest.py."""
import os
import subprocess
import sys
import tempfile
import time

import itest
from itest import *  # noqa: F401,F403 (the shared helpers and environment)

CALLERS_DRIVER = os.environ.get("CALLERS_DRIVER", "")
CALLERS_LIB = os.environ.get("CALLERS_LIB", "")
DRIVER_NAME = os.path.basename(CALLERS_DRIVER)
REUSE_ONE = os.environ.get("CALLERS_REUSE_ONE", "")
REUSE_TWO = os.environ.get("CALLERS_REUSE_TWO", "")
FUNCS = ["--lib", LIB, "--func", "dlt_add,dlt_test_je", "--by", "caller"]


def expected(n, runs=1):
    """{(function, caller, caller_module): calls} as the driver makes them."""
    lib2 = os.path.basename(CALLERS_LIB)
    return {("dlt_add", "static_caller", DRIVER_NAME): n * runs,
            ("dlt_add", "exported_caller", DRIVER_NAME): 2 * n * runs,
            ("dlt_add", "two_sites_caller", DRIVER_NAME): 6 * n * runs,
            ("dlt_add", "callers_relay", lib2): 5 * n * runs,
            ("dlt_test_je", "je_caller", DRIVER_NAME): 7 * n * runs}


def driver_said(stdout):
    return {l.split()[1]: int(l.split()[2]) for l in stdout.splitlines() if l.startswith("callers: ")}


def rows_by_caller(doc):
    return {(r["name"], r["caller"], r["caller_module"]): r for r in doc["functions"]}


def check_rows(doc, want):
    rows = rows_by_caller(doc)
    got = {k: r["calls"] for k, r in rows.items()}
    check(got == want, f"calls per caller: {got}, want {want}")
    for k, r in rows.items():
        check(r["timed"] == r["calls"] and r.get("unmatched", 0) == 0, f"{k}: {r['timed']} of {r['calls']} timed")
    check(doc["by"] == "caller" and doc["group_overflow"] == 0, f"by {doc['by']}, overflow {doc['group_overflow']}")


def test_by_caller_launched():
    """A launched command, named after it exited: every call site's calls exact, the static
    function named from .symtab, the two sites of one function in one row, the second
    library's function as the caller of the calls it makes, the probe past the entry too."""
    n = 150
    p = subprocess.run(base_args(FUNCS) + ["--", CALLERS_DRIVER, str(n)], capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"profiler exit {p.returncode}: {p.stderr}")
    said = driver_said(p.stdout.split("{", 1)[0])
    check(said["static_caller"] == n, f"driver said {said}")
    doc = json.loads(p.stdout[p.stdout.index("{"):])
    check_rows(doc, expected(n))


def test_by_caller_sums_match_function():
    """The callers' calls add up to the function's own count (--by function) in the same run's
    footer: the per-function totals the kernel keeps beside the rows."""
    n = 40
    p = subprocess.run(base_args(["--lib", LIB, "--func", "dlt_add"]) + ["--", CALLERS_DRIVER, str(n)],
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"profiler exit {p.returncode}: {p.stderr}")
    total = calls_of(json.loads(p.stdout[p.stdout.index("{"):]), "dlt_add")
    p = subprocess.run(base_args(["--lib", LIB, "--func", "dlt_add", "--by", "caller"]) + ["--", CALLERS_DRIVER, str(n)],
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"profiler exit {p.returncode}: {p.stderr}")
    doc = json.loads(p.stdout[p.stdout.index("{"):])
    by_caller = sum(r["calls"] for r in doc["functions"] if r["name"] == "dlt_add")
    check(by_caller == total == 14 * n, f"callers sum {by_caller}, --by function {total}, want {14 * n}")


@modes("session", "multi")
def test_by_caller_system_wide():
    """Every process of the library, two runs of the driver: one row per caller holding both
    processes' calls, each exact, named after both exited."""
    n = 60
    prof = start_profiler(FUNCS)
    for _ in range(2):
        d = subprocess.run([CALLERS_DRIVER, str(n)], capture_output=True, text=True, timeout=60)
        check(d.returncode == 0, f"driver exit {d.returncode}")
    doc = stop_profiler(prof)
    check_rows(doc, expected(n, runs=2))


def table_rows(stdout):
    """The table's rows below its header: [(name, library, calls)], callers indented by two spaces."""
    lines = stdout.splitlines()
    head = next(i for i, l in enumerate(lines) if l.startswith("FUNCTION"))
    rows = []
    for l in lines[head + 1:]:
        if l.startswith("#") or not l.strip():
            break
        name = l[:len(l) - len(l.lstrip())] + l.split()[0] if not l.lstrip().startswith("(") else \
            l[:len(l) - len(l.lstrip())] + " ".join(l.split()[:3])
        w = l[len(name):].split()
        rows.append((name, w[0], int(w[1])))
    return lines, rows


@modes("session")
def test_by_caller_table_and_csv():
    """The table nests each function's callers under it (their module in LIBRARY), by time; with
    --callers 2 the two that took the most time and one row of the rest, whose calls make up the
    function's; CSV has caller and caller_module as its last keys."""
    n = 25
    p = subprocess.run([DLPROF] + FUNCS + ["--callers", "all", "--", CALLERS_DRIVER, str(n)], capture_output=True,
                       text=True, timeout=120)
    check(p.returncode == 0, f"profiler exit {p.returncode}: {p.stderr}")
    lines, rows = table_rows(p.stdout)
    want = expected(n)
    got, func = {}, None
    for name, lib, calls in rows:
        if name.startswith("  "):
            got[(func, name.strip(), lib)] = calls
        else:
            func = name
            check(calls == sum(k for (f, _c, _m), k in want.items() if f == func), f"{func}'s row: {calls} calls")
    check(got == want, f"table rows {got}, want {want}")
    check(any("one row per function and caller" in l for l in lines), f"footer: {p.stdout}")
    p = subprocess.run([DLPROF] + FUNCS + ["--callers", "2", "--", CALLERS_DRIVER, str(n)], capture_output=True,
                       text=True, timeout=120)
    check(p.returncode == 0, f"--callers 2: exit {p.returncode}: {p.stderr}")
    lines, rows = table_rows(p.stdout)
    at = next(i for i, r in enumerate(rows) if r[0] == "dlt_add")
    under = rows[at + 1:at + 4]
    check([r[0].startswith("  ") for r in under] == [True] * 3 and under[2][0] == "  (2 other callers)",
          f"dlt_add's rows {rows[at:at + 4]}")
    check(sum(r[2] for r in under) == rows[at][2] == 14 * n, f"dlt_add's callers {under}, its row {rows[at]}")
    check(any("the top 2 by time, the rest summed" in l for l in lines), f"footer: {p.stdout}")
    expect_error([DLPROF] + FUNCS + ["--callers", "0", "--", CALLERS_DRIVER, "1"], "--callers: '0' is not a number")
    p = subprocess.run([DLPROF, "--format", "csv"] + FUNCS + ["--", CALLERS_DRIVER, str(n)],
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"csv: exit {p.returncode}: {p.stderr}")
    csv_lines = [l for l in p.stdout.splitlines() if l.startswith("lib,") or l.startswith(LIB)]
    check(csv_lines and ",caller,caller_module," in csv_lines[0], f"csv header {csv_lines[:1]}")
    check(any(",static_caller," + DRIVER_NAME + "," in l for l in csv_lines), f"csv rows {csv_lines}")


@modes("session", "classic")
def test_by_caller_unreturned_calls():
    """Calls left by longjmp never return, so the kernel never hands over their return address:
    they make their function's "(unattributed)" row, and the rows still add up to its calls."""
    n, m = 7, 11
    rc, doc, err = run_profiled([DRIVER, "longjmp", str(n), str(m)], ["--func", "dlt_longjmp,dlt_add", "--by", "caller"])
    check(rc == 0, f"profiler exit {rc}: {err}")
    got = {(r["name"], r["caller"], r["caller_module"]): r["calls"] for r in doc["functions"]}
    want = {("dlt_longjmp", "(unattributed)", "-"): 2 * n, ("dlt_add", "run", os.path.basename(DRIVER)): m}
    check(got == want, f"rows {got}, want {want}")


def test_record_report_by_caller():
    """record --by caller keeps each call's return address and names it in the metadata:
    report --by caller of the trace (and of its merged .dlt) has the live summary's rows,
    each exact, after the process exited. A trace recorded without the key is refused."""
    n = 80
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "t.d")
        p = subprocess.run([DLPROF, "record", "-o", trace] + base_args(FUNCS)[1:] + ["--", CALLERS_DRIVER, str(n)],
                           capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, f"record exit {p.returncode}: {p.stderr}")
        live = json.loads(p.stdout[p.stdout.index("{"):])
        check_rows(live, expected(n))
        dlt = os.path.join(tmp, "t.dlt")
        m = subprocess.run([DLPROF, "merge", trace, "-o", dlt], capture_output=True, text=True, timeout=120)
        check(m.returncode == 0, f"merge: {m.returncode} {m.stderr}")
        for src in (trace, dlt):
            rep = subprocess.run([DLPROF, "report", src, "--json", "--by", "caller"], capture_output=True, text=True,
                                 timeout=120)
            check(rep.returncode == 0, f"report {src}: {rep.returncode} {rep.stderr}")
            doc = json.loads(rep.stdout)
            got = {k: r["calls"] for k, r in rows_by_caller(doc).items()}
            check(got == expected(n), f"report {src}: {got}, want {expected(n)}")
        # Folded stacks stand each outermost call on its caller; Perfetto slices carry it in args.
        folded = subprocess.run([DLPROF, "export", trace, "--format", "folded"], capture_output=True, text=True,
                                timeout=120)
        check(folded.returncode == 0, f"folded: {folded.returncode} {folded.stderr}")
        tails = {";".join(l.rsplit(" ", 1)[0].split(";")[2:]) for l in folded.stdout.splitlines()}
        want = {f"{c};{f}" for (f, c, _m) in expected(n)}
        check(tails == want, f"folded stacks below proc;thread: {sorted(tails)}, want {sorted(want)}")
        pf = subprocess.run([DLPROF, "export", trace, "--format", "perfetto"], capture_output=True, text=True,
                            timeout=120)
        check(pf.returncode == 0, f"perfetto: {pf.returncode} {pf.stderr}")
        events = [e for e in json.loads(pf.stdout)["traceEvents"] if e.get("ph") == "X"]
        by = {}
        for e in events:
            k = (e["name"], e["args"].get("caller"), e["args"].get("caller_module"))
            by[k] = by.get(k, 0) + 1
        check(by == expected(n), f"perfetto slices per caller: {by}")
        plain = os.path.join(tmp, "plain.d")
        p = subprocess.run([DLPROF, "record", "-o", plain, "--lib", LIB, "--func", "dlt_add", "--", CALLERS_DRIVER, "5"],
                           capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, f"record without the key: {p.returncode} {p.stderr}")
        expect_error([DLPROF, "report", plain, "--by", "caller"], "record it with --by caller")


def start_waiting_callers(n, argv0=None):
    """The callers driver waiting for "go" lines (itest.drive/finish speak to it)."""
    d = subprocess.Popen([argv0 or CALLERS_DRIVER, "--wait", str(n)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True)
    line = d.stdout.readline()
    check(line.startswith("ready "), f"callers driver did not start: {line!r}")
    return d


@modes("session", "multi", "classic")
def test_by_caller_pid_target():
    """-p: a running process's calls per caller, exact over two rounds, named after it exited."""
    n = 50
    d = start_waiting_callers(n)
    try:
        prof = start_profiler(FUNCS + ["-p", str(d.pid)])
        drive(d)
        drive(d)
    finally:
        finish(d)
    doc = stop_profiler(prof)
    check_rows(doc, expected(n, runs=2))


@modes("session", "multi")
def test_by_caller_cgroup_target():
    """--cgroup: the calls of the processes in the cgroup, per caller and exact; a process outside
    calling from the same sites counts for nothing."""
    from containers import move_into, scratch_cgroup
    n = 30
    with scratch_cgroup("callers") as cg:
        inside, outside = start_waiting_callers(n), start_waiting_callers(n)
        try:
            move_into(cg, inside.pid)
            prof = start_profiler(FUNCS + ["--cgroup", cg])
            for d in (inside, outside):
                drive(d)
            doc = stop_profiler(prof)
        finally:
            for d in (inside, outside):
                finish(d)
    check_rows(doc, expected(n))


@modes("session", "multi")
def test_by_caller_container_target():
    """--container: a podman container's driver, its own copies of the two libraries (other inodes,
    another mount namespace) and a host process calling too: the container's calls per caller,
    exact, named from the container's files after it exited."""
    from containers import PODMAN_RUN, image_from_files, require_podman
    require_podman()
    n = 20
    out = subprocess.run(["ldd", CALLERS_DRIVER], capture_output=True, text=True, check=True).stdout
    deps = [w.split("=>")[-1].split("(")[0].strip() for w in out.splitlines()]
    files = [(d, d.lstrip("/")) for d in deps if d.startswith("/") and
             os.path.basename(d) not in (os.path.basename(LIB), os.path.basename(CALLERS_LIB))]
    files += [(CALLERS_DRIVER, "app/" + DRIVER_NAME), (LIB, "app/" + os.path.basename(LIB)),
              (CALLERS_LIB, "app/" + os.path.basename(CALLERS_LIB))]
    with image_from_files("callers", files) as image, tempfile.TemporaryDirectory() as tmp:
        cidfile = os.path.join(tmp, "cid")
        c = subprocess.Popen(PODMAN_RUN + ["--cidfile", cidfile, "-e", "LD_LIBRARY_PATH=/app", image,
                                           "/app/" + DRIVER_NAME, "--wait", str(n)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        host = None
        try:
            line = c.stdout.readline()
            check(line.startswith("ready "), f"the container's driver did not start: {line!r}")
            cid = open(cidfile).read().strip()
            host = start_waiting_callers(n)
            # By name: the container's copy is another file than the host's (docs/containers.md).
            os.environ["LD_LIBRARY_PATH"] = os.path.dirname(LIB)
            prof = start_profiler(["--lib", os.path.basename(LIB)] + FUNCS[2:] + ["--container", cid[:12]])
            for d in (c, host):
                drive(d)
        finally:
            for d in (c, host):
                if d:
                    finish(d)
        doc = stop_profiler(prof)
    check_rows(doc, expected(n))


def run_at_pid(pid, args):
    """Run args until one run gets pid; the number of runs it took."""
    for runs in range(1, 41):
        with open("/proc/sys/kernel/ns_last_pid", "w") as f:
            f.write(str(pid - 1))
        p = subprocess.Popen(args, stdout=subprocess.DEVNULL)
        check(p.wait(timeout=60) == 0, f"{args}: exit {p.returncode}")
        if p.pid == pid:
            return runs
    raise AssertionError(f"no run of {args} got pid {pid} in 40 tries: other processes took it")


@modes("session", "multi")
def test_by_caller_pid_reused():
    """A process that exits frees its pid: another program that takes it and returns to the very
    address the first did (two position-dependent builds alike but for their caller's name)
    is named from its own mapping, its calls apart and exact, not merged into the first's row."""
    if not os.path.exists("/proc/sys/kernel/ns_last_pid"):
        raise Skip("this kernel has no /proc/sys/kernel/ns_last_pid to hand a pid out again")
    n1, n2 = 30, 70
    prof = start_profiler(["--lib", LIB, "--func", "dlt_add", "--by", "caller"])
    first = subprocess.Popen([REUSE_ONE, str(n1)])
    check(first.wait(timeout=60) == 0, f"first program: exit {first.returncode}")
    # The profiler retires an exited process's entries once a second.
    time.sleep(2.5)
    runs = run_at_pid(first.pid, [REUSE_TWO, str(n2)])
    doc = stop_profiler(prof)
    got = {(r["caller"], r["caller_module"]): r["calls"] for r in doc["functions"]}
    want = {("caller_one", os.path.basename(REUSE_ONE)): n1, ("caller_two", os.path.basename(REUSE_TWO)): n2 * runs}
    check(got == want, f"rows {got}, want {want} (pid {first.pid} reused after {runs} runs)")


@modes("session")
def test_by_caller_html():
    """--html --by caller: the functions' table has one row per function, the sum of its callers;
    under it, a table per function of its callers (module as the library), each exact."""
    import re
    n = 20
    with tempfile.TemporaryDirectory() as tmp:
        page = os.path.join(tmp, "callers.html")
        p = subprocess.run([DLPROF, "--html", page] + FUNCS + ["--", CALLERS_DRIVER, str(n)], capture_output=True,
                           text=True, timeout=120)
        check(p.returncode == 0, f"profiler exit {p.returncode}: {p.stderr}")
        html = open(page).read()
    cell = r'<td class="name" data-v="([^"]*)".*?<td class="lib" data-v="([^"]*)".*?data-v="(\d+)"'
    funcs = re.search(r'<table id="funcs">.*?</table>', html, re.S).group(0)
    want = expected(n)
    got_funcs = {f: int(c) for f, _l, c in re.findall(cell, funcs, re.S)}
    check(got_funcs == {"dlt_add": 14 * n, "dlt_test_je": 7 * n}, f"functions {got_funcs}")
    names = re.findall(r'<h3 class="callers-of">([^<]*)</h3>', html)
    tables = re.findall(r'<table class="callers">.*?</table>', html, re.S)
    got = {(f, c, m): int(k) for f, t in zip(names, tables) for c, m, k in re.findall(cell, t, re.S)}
    check(got == want, f"callers per function {got}, want {want}")


if __name__ == "__main__":
    sys.exit(itest.run(globals()))
