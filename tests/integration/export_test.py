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


if __name__ == "__main__":
    sys.exit(itest.run(globals()))
