#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Integration tests of `dlprof-bpf export`: a real recording of nested calls
across two libraries, exported as Perfetto JSON and as folded stacks, and
checked against the trace itself. Export reads a file; one attach mode is enough."""
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

import itest
from itest import *  # noqa: F401,F403 (the shared helpers and environment)

CALLS = 300


def export(trace, fmt, out, extra=()):
    p = subprocess.run([DLPROF, "export", trace, "--format", fmt, "-o", out] + list(extra),
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"export --format {fmt} rc {p.returncode}: {p.stderr}")
    with open(out) as f:
        return f.read()


def nested_trace(tmp):
    trace, _ = record(tmp, [DRIVER, "nested", LATE_LIB, str(CALLS)], ["--lib", LATE_LIB])
    _, rows, _ = dump_csv(trace)
    return trace, rows


def inside(child, parent):
    return (child["tid"] == parent["tid"] and parent["ts"] <= child["ts"]
            and child["ts"] + child["dur"] <= parent["ts"] + parent["dur"])


@modes("session")
def test_export_perfetto():
    with tempfile.TemporaryDirectory() as tmp:
        trace, rows = nested_trace(tmp)
        doc = json.loads(export(trace, "perfetto", os.path.join(tmp, "t.json")))
        events = doc["traceEvents"]
        calls = [e for e in events if e["ph"] in ("X", "i") and e.get("s") != "g"]
        check(len(calls) == len(rows), f"{len(calls)} slices and instants for {len(rows)} recorded calls")
        slices = [e for e in events if e["ph"] == "X"]
        apply_ = sorted((e for e in slices if e["name"] == "dlt_apply"), key=lambda e: e["ts"])
        add = [e for e in slices if e["name"] == "dlt_add"]
        check(len(apply_) == CALLS and len(add) == CALLS, f"{len(apply_)} dlt_apply, {len(add)} dlt_add slices")
        for a in add:
            check(any(inside(a, p) for p in apply_), f"dlt_add not inside a dlt_apply: {a}")
            check(a["args"]["depth"] == 1 and a["cat"] == os.path.basename(LATE_LIB), f"dlt_add: {a}")
        names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
        check(os.path.basename(DRIVER)[:15] in names, f"process names {names}")


@modes("session")
def test_export_folded():
    with tempfile.TemporaryDirectory() as tmp:
        trace, rows = nested_trace(tmp)
        text = export(trace, "folded", os.path.join(tmp, "t.folded"))
        weights = collections.Counter()
        for line in text.splitlines():
            # flamegraph.pl's own pattern: frames, one space, an integer.
            m = re.fullmatch(r"(\S+(?:;\S+)*) (\d+)", line)
            check(m is not None, f"not a folded line: {line!r}")
            weights[m.group(1)] += int(m.group(2))
        check(len(weights) == len(text.splitlines()), "a stack is on more than one line")
        nested = [s for s in weights if s.endswith(";dlt_apply;dlt_add")]
        check(nested, f"no dlt_apply;dlt_add stack in {list(weights)}")
        # Self weights add up to the outermost calls' wall time.
        outer = sum(int(r["dur_ns"]) for r in rows if r["depth"] == "0")
        check(sum(weights.values()) == outer, f"folded total {sum(weights.values())} != outer calls' {outer}")
        add = sum(int(r["dur_ns"]) for r in rows if r["func"] == "dlt_add")
        check(sum(weights[s] for s in nested) == add, "dlt_add's stacks do not weigh its calls' wall time")


def driver_threads(stderr):
    """The driver's own list of its named threads: {tid: name}."""
    named = {}
    for line in stderr.splitlines():
        m = re.fullmatch(r"dltest: thread (\d+) (\S+)", line)
        if m:
            named[int(m.group(1))] = m.group(2)
    return named


def record_named_threads(tmp, threads, calls, rename=False):
    """Records the driver's named threads; checks the metadata names each as the
    driver says it last called, and returns (trace, {tid: name}, meta)."""
    out = os.path.join(tmp, "trace.d")
    p = subprocess.run([DLPROF, "record", "-o", out, "--json", "--lib", LIB, "--func", "dlt_add"]
                       + (["--attach", ATTACH] if ATTACH else [])
                       + ["--", DRIVER, "namedthreads", str(threads), str(calls)] + (["rename"] if rename else []),
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"record rc {p.returncode}: {p.stderr}")
    named = driver_threads(p.stderr)
    check(len(named) == threads, f"the driver reported {len(named)} threads: {p.stderr!r}")
    with open(os.path.join(out, "meta.json")) as f:
        meta = json.load(f)
    have = {t["tid"]: t["comm"] for t in meta["threads"]}
    for tid, name in named.items():
        check(have.get(tid) == name, f"thread {tid}: metadata says {have.get(tid)!r}, it last called as {name!r}")
    check(meta["diag"]["threads_unnamed"] == 0, f"threads unnamed: {meta['diag']}")
    _, rows, _ = dump_csv(out)
    per_tid = collections.Counter(int(r["tid"]) for r in rows)
    want = calls + (1 if rename else 0)
    check(all(per_tid[t] == want for t in named), f"calls per thread {per_tid}, {want} each expected")
    return out, named, rows


@modes("session")
def test_export_thread_renamed():
    """A thread renamed between its calls (prctl/pthread_setname_np): the name
    is taken again at its next outermost call."""
    with tempfile.TemporaryDirectory() as tmp:
        _, named, _ = record_named_threads(tmp, 3, 10, rename=True)
        check(all(n.startswith("again-") for n in named.values()), f"driver names {named}")


@modes("session")
def test_export_thread_names():
    """Threads that name themselves, call, rename and exit before the recording
    ends: the metadata keeps each one's own name as it made its calls, and
    the Perfetto export names each thread track with it."""
    with tempfile.TemporaryDirectory() as tmp:
        out, named, rows = record_named_threads(tmp, 6, 20)
        doc = json.loads(export(out, "perfetto", os.path.join(tmp, "t.json")))
        tracks = {e["tid"]: e["args"]["name"] for e in doc["traceEvents"]
                  if e["ph"] == "M" and e["name"] == "thread_name"}
        for tid, name in named.items():
            check(tracks.get(tid) == f"{name} {tid}", f"track of thread {tid} is {tracks.get(tid)!r}, not {name} {tid}")
        # The HTML report's timeline labels its tracks the same way.
        page = os.path.join(tmp, "r.html")
        p = subprocess.run([DLPROF, "report", "--html", page, out], capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, f"report --html rc {p.returncode}: {p.stderr}")
        with open(page) as f:
            text = f.read()
        pid = int(rows[0]["pid"])
        for tid, name in named.items():
            check(f"{name} {pid}/{tid}" in text, f"the timeline has no track labelled {name} {pid}/{tid}")


@modes("session")
def test_export_trace_without_thread_names():
    """A trace written before threads were named (no "threads" key, same
    format version) still reads: its thread tracks keep the process's name."""
    with tempfile.TemporaryDirectory() as tmp:
        trace, rows = nested_trace(tmp)
        path = os.path.join(trace, "meta.json")
        with open(path) as f:
            meta = json.load(f)
        check("threads" in meta, "the recording wrote no threads")
        del meta["threads"]
        del meta["diag"]["threads_unnamed"]
        with open(path, "w") as f:
            json.dump(meta, f)
        doc = json.loads(export(trace, "perfetto", os.path.join(tmp, "t.json")))
        tracks = [e["args"]["name"] for e in doc["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"]
        comm = os.path.basename(DRIVER)[:15]
        check(tracks and all(t.startswith(comm + " ") for t in tracks), f"thread tracks {tracks}")


if __name__ == "__main__":
    sys.exit(itest.run(globals()))
