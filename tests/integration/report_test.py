#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Integration tests of the reports people and programs read while and after
profiling: the live mode's interval JSON Lines (-i --json) and the HTML
report (report --html, --html), loaded in headless Chromium. The outputs do
not depend on the attach mode: one is enough."""
import json
import os
import subprocess
import sys

import itest
from itest import *  # noqa: F401,F403 (the shared helpers and environment)

SLEEP_MS, SLEEPS = 20, 60


@modes("session")
def test_interval_json_lines():
    args = base_args(["-i", "0.25", "--lib", LIB, "--func", "dlt_*", "--", DRIVER, "sleep", str(SLEEP_MS), str(SLEEPS)])
    p = subprocess.run(args, capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"rc {p.returncode}: {p.stderr}")
    lines = p.stdout.splitlines()
    docs = [json.loads(l) for l in lines]  # every line a JSON object on its own
    intervals, summary = docs[:-1], docs[-1]
    check(len(intervals) >= 3, f"{len(intervals)} interval lines for a {SLEEP_MS * SLEEPS} ms run with -i 0.25")
    check("interval" not in summary and summary["functions_attached"] >= 1, f"last line is not the summary: {lines[-1]}")
    sums, prev_t = {}, 0
    for n, d in enumerate(intervals, 1):
        check(d["interval"] == n and d["t_s"] > prev_t and d["interval_s"] > 0, f"line {n}: {d}")
        prev_t = d["t_s"]
        for f in d["functions"]:
            acc = sums.setdefault(f["name"], {})
            for key in ("calls", "timed", "unmatched", "total_ns", "oncpu_ns"):
                acc[key] = acc.get(key, 0) + f["interval"][key]
                # What the intervals added up to so far is what the totals say.
                check(acc[key] == f["total"][key], f"line {n} {f['name']}: {key} deltas sum to {acc[key]}, total {f['total'][key]}")
            for ev, v in f["interval"]["counters"].items():
                acc[ev] = acc.get(ev, 0) + v
                check(acc[ev] == f["total"]["counters"][ev], f"line {n} {f['name']}: {ev} deltas do not sum to the total")
            if f["interval"]["timed"]:
                # The interval's percentiles, from histogram deltas: a 20 ms sleep's, within the buckets' 3.2%.
                check(0.97 * SLEEP_MS * 1e6 <= f["interval"]["p50_ns"] <= f["interval"]["p99_ns"],
                      f"line {n}: interval percentiles {f['interval']}")
    f = func(summary, "dlt_sleep_ms")
    check(f["calls"] == SLEEPS == oracle(p.stderr, "calls"), f"summary calls {f['calls']} != {SLEEPS}")
    last = next(x for x in intervals[-1]["functions"] if x["name"] == "dlt_sleep_ms")
    # Calls after the last tick are in the summary alone.
    check(last["total"]["calls"] <= f["calls"] and sums["dlt_sleep_ms"]["calls"] == last["total"]["calls"],
          f"last interval total {last['total']['calls']}, summary {f['calls']}")
    check(any(x["functions"] and x["functions"][0]["interval"]["calls"] for x in intervals[1:]), "no later interval saw calls")


@modes("session")
def test_interval_html_refused():
    expect_error([DLPROF, "-i", "1", "--html", "/tmp/x.html", "--lib", LIB, "--", DRIVER, "count", "1"], "-i")


if __name__ == "__main__":
    sys.exit(itest.run(globals()))
