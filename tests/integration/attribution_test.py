#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Attribution (--by process|cgroup|container): aggregates keyed in the kernel
by (function, group), each group named from what the BPF side captured at
first sight. Every count is compared with what the workload itself says it
did; the workloads are short-lived on purpose (a process that lived a few
milliseconds must still be named). Runner and helpers: itest.py; cgroups and
containers: cgroup_test.py's helpers."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import itest
from itest import *  # noqa: F401,F403 (the shared helpers and environment)
from containers import PODMAN_RUN, cgroup2_mount, driver_image, move_into, scratch_cgroup


def rows_of(doc, name="dlt_add"):
    return [f for f in doc["functions"] if f["name"] == name]


def named_drivers(tmp, names):
    """Links to the driver under other names: a process's comm is the name it was exec'd by."""
    paths = []
    for n in names:
        p = os.path.join(tmp, n)
        os.symlink(DRIVER, p)
        paths.append(p)
    return paths


def short_lived_script(drivers, counts):
    """A shell that runs each driver in turn, each after saying its pid, name and count (exec keeps the pid)."""
    return "".join(f"sh -c 'echo workload $$ {os.path.basename(d)} {n}; exec {d} count {n}'\n"
                   for d, n in zip(drivers, counts))


def workloads_said(stdout):
    """{pid: (name, count)} from the workloads' own lines."""
    said = {}
    for line in stdout.splitlines():
        if line.startswith("workload "):
            _, pid, name, n = line.split()
            said[int(pid)] = (name, int(n))
    return said


def test_profiler_never_profiles_itself():
    """record compresses its trace with libz: a profile of libz counts the workload's calls only,
    never the profiler's own, in the summary, --by process and the trace. The profiler and the
    workload share a scratch cgroup, the target (system-wide, as the profiler sees it, without
    probing the machine's other processes)."""
    n = 3000
    work = ["python3", "-c", f"import zlib\nfor _ in range({n}): zlib.compress(b'x' * 100)"]
    with tempfile.TemporaryDirectory() as tmp, scratch_cgroup("self") as cg:
        trace = os.path.join(tmp, "t.d")
        enter = lambda: move_into(cg, os.getpid())  # noqa: E731
        prof = subprocess.Popen([DLPROF, "record", "-o", trace] + base_args()[1:] +
                                ["--by", "process", "--cgroup", cg, "--lib", "libz.so.1", "--func", "deflate,deflateEnd"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=enter)
        line = ""
        while "profiling" not in line:
            line = prof.stderr.readline()
            check(line or prof.poll() is None, f"profiler ended before it attached: exit {prof.returncode}")
        w = subprocess.run(work, preexec_fn=enter, timeout=120)
        check(w.returncode == 0, f"workload exit {w.returncode}")
        time.sleep(1.5)  # a flush of the trace (every second) compresses in the profiler
        doc = stop_profiler(prof)
        rows = sorted((r["comm"], r["name"], r["calls"]) for r in doc["functions"])
        check(rows == [("python3", "deflate", n), ("python3", "deflateEnd", n)],
              f"want only the workload's {n} compressions: {rows}")
        rep = subprocess.run([DLPROF, "report", trace, "--json", "--by", "process"], capture_output=True, text=True)
        check(rep.returncode == 0, f"report: {rep.returncode} {rep.stderr}")
        rows = sorted((r["comm"], r["name"], r["calls"]) for r in json.loads(rep.stdout)["functions"])
        check(rows == [("python3", "deflate", n), ("python3", "deflateEnd", n)], f"the trace: {rows}")


@modes("session", "multi")
def test_by_process_short_lived():
    """Six processes of ~1 ms each, under six names: one row per process, each named, each exact."""
    names = [f"w{i}-short" for i in range(6)]
    counts = [100 + 37 * i for i in range(6)]
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "run.sh")
        with open(script, "w") as f:
            f.write(short_lived_script(named_drivers(tmp, names), counts))
        out = os.path.join(tmp, "summary.json")
        p = subprocess.run(base_args(["--lib", LIB, "--func", "dlt_add", "--by", "process", "-o", out,
                                      "--", "sh", script]), capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, f"profiler exit {p.returncode}: {p.stderr}")
        said = workloads_said(p.stdout)
        doc = json.load(open(out))
    check(len(said) == 6, f"the workloads said {said}")
    check(doc["by"] == "process" and doc["group_overflow"] == 0, f"by {doc['by']}, overflow {doc['group_overflow']}")
    rows = {r["pid"]: r for r in rows_of(doc)}
    check(set(rows) == set(said), f"rows for pids {sorted(rows)}, workloads {sorted(said)}")
    for pid, (name, n) in said.items():
        check(rows[pid]["comm"] == name, f"pid {pid}: comm {rows[pid]['comm']!r}, want {name!r}")
        check(rows[pid]["calls"] == n and rows[pid]["timed"] == n, f"pid {pid}: {rows[pid]['calls']} calls, want {n}")
        check(rows[pid]["cgroup_id"] > 0, f"pid {pid}: no cgroup id")


@modes("session")
def test_by_process_table():
    """The table shows PID and COMM before each function."""
    with tempfile.TemporaryDirectory() as tmp:
        (drv,) = named_drivers(tmp, ["tablework"])
        p = subprocess.run([DLPROF, "--lib", LIB, "--func", "dlt_add", "--by", "process", "--", drv, "count", "321"],
                           capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"profiler exit {p.returncode}: {p.stderr}")
    lines = p.stdout.splitlines()
    check(lines[0].split()[:4] == ["PID", "COMM", "FUNCTION", "LIBRARY"], f"header {lines[0]!r}")
    row = lines[1].split()
    check(row[1:5] == ["tablework", "dlt_add", os.path.basename(LIB), "321"], f"row {lines[1]!r}")
    check(any("one row per function and process" in l for l in lines), f"footer: {p.stdout}")


@modes("session", "multi")
def test_by_cgroup_two_cgroups():
    """Two test cgroups under one target: a row for each, exact; a process outside is not counted."""
    with scratch_cgroup("a") as ca, scratch_cgroup("b") as cb:
        parent = os.path.dirname(ca)
        da = start_waiting_driver(["count", "3000"])
        db = start_waiting_driver(["count", "2000"])
        outside = start_waiting_driver(["count", "1000"])
        try:
            move_into(ca, da.pid)
            move_into(cb, db.pid)
            prof = start_profiler(["--lib", LIB, "--func", "dlt_add", "--cgroup", parent, "--by", "cgroup"])
            for d in (da, db, outside):
                drive(d)
            doc = stop_profiler(prof)
        finally:
            for d in (da, db, outside):
                finish(d)
        mnt = cgroup2_mount()
        want = {"/" + os.path.relpath(ca, mnt): 3000, "/" + os.path.relpath(cb, mnt): 2000}
        got = {r["cgroup"]: r["calls"] for r in rows_of(doc)}
        check(got == want, f"per cgroup {got}, want {want}")
        for r in rows_of(doc):
            check(r["cgroup_id"] == os.stat(os.path.join(mnt, r["cgroup"][1:])).st_ino,
                  f"{r['cgroup']}: id {r['cgroup_id']} is not its directory's inode")
            check(r["container_id"] is None and r["container"] is None, f"{r['cgroup']} is in no container: {r}")


def start_container(image, name, tmp, count):
    cidfile = os.path.join(tmp, f"{name}.cid")
    c = subprocess.Popen(PODMAN_RUN + ["--name", name, "--cidfile", cidfile,
                                       "-v", f"{LIB}:/app/{os.path.basename(LIB)}:ro", "-e", "LD_LIBRARY_PATH=/app",
                                       image, "/app/dltest_driver", "--wait", "count", str(count)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = c.stdout.readline()
    check(line.startswith("ready "), f"container {name}'s driver did not start: {line!r}")
    return c, open(cidfile).read().strip()


@modes("session", "multi")
def test_by_container_two_podman_containers():
    """Two real podman containers side by side and a host process, profiled by library (the
    test's own file, bind-mounted into both) with --by container: one row per container,
    named as podman names it, and one for the host, each exact."""
    check(shutil.which("podman") and shutil.which("runc"), "podman and runc are not installed (scripts/deps)")
    tag = f"{os.getpid()}"
    want = {f"dlprof-attr-a-{tag}": 30000, f"dlprof-attr-b-{tag}": 20000}
    with driver_image() as image, tempfile.TemporaryDirectory() as tmp:
        started, ids = [], {}
        try:
            for name, n in want.items():
                c, cid = start_container(image, name, tmp, n)
                started.append(c)
                ids[name] = cid
            host = start_waiting_driver(["count", "5000"])
            started.append(host)
            prof = start_profiler(["--lib", LIB, "--func", "dlt_add", "--by", "container"])
            for c in started:
                drive(c)
            doc = stop_profiler(prof)
        finally:
            for c in started:
                finish(c)
    rows = {r["container"]: r for r in rows_of(doc)}
    check(set(rows) == set(want) | {None}, f"rows for {sorted(map(str, rows))}, want {sorted(want)} and the host")
    for name, n in want.items():
        r = rows[name]
        check(r["calls"] == n and r["timed"] == n, f"container {name}: {r['calls']} calls, want {n}")
        check(r["container_id"] == ids[name], f"container {name}: id {r['container_id']}, want {ids[name]}")
        check(ids[name] in r["cgroup"], f"container {name}: cgroup {r['cgroup']}")
    check(rows[None]["calls"] == 5000 and rows[None]["container_id"] is None, f"host row {rows[None]}")


@modes("session")
def test_record_names_short_lived_process():
    """record takes a process's name from the BPF side: a workload that lived ~1 ms is
    named in the trace, and report --by process shows it with its exact count."""
    with tempfile.TemporaryDirectory() as tmp:
        (drv,) = named_drivers(tmp, ["blink"])
        trace = os.path.join(tmp, "trace.d")
        p = subprocess.run([DLPROF, "record", "-o", trace, "--json", "--lib", LIB, "--func", "dlt_add",
                            "--", "sh", "-c", f"echo workload $$ blink 150; exec {drv} count 150"],
                           capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, f"record exit {p.returncode}: {p.stderr}")
        (pid, (name, n)), = workloads_said(p.stdout).items()
        meta = json.load(open(os.path.join(trace, "meta.json")))
        procs = {pr["pid"]: pr for pr in meta["processes"]}
        check(procs.get(pid, {}).get("comm") == name, f"the trace names pid {pid} {procs.get(pid)}")
        r = subprocess.run([DLPROF, "report", trace, "--json", "--by", "process"], capture_output=True, text=True,
                           timeout=120)
        check(r.returncode == 0, f"report exit {r.returncode}: {r.stderr}")
        rows = rows_of(json.loads(r.stdout))
        expect_error([DLPROF, "report", trace, "--by", "cgroup"], "a trace keeps each process's name and cgroup id")
    check([(x["pid"], x["comm"], x["calls"]) for x in rows] == [(pid, name, n)], f"report --by process: {rows}")


@modes("session")
def test_by_errors():
    expect_error([DLPROF, "--lib", LIB, "--by", "thread", "-d", "0.1"], "--by: 'thread' is not one of")
    expect_error([DLPROF, "--lib", LIB, "--by", "process", "--html", "/dev/null", "-d", "0.1"],
                 "--html draws one row per function")
    expect_error([DLPROF, "report", "--by", "process", "--html", "/dev/null", "trace.d"],
                 "--html draws one row per function")
    expect_error([DLPROF, "--lib", LIB, "--by", "process", "-i", "1", "--json", "-d", "0.1"],
                 "-i --json prints per-function deltas")


if __name__ == "__main__":
    sys.exit(itest.run(globals()))
