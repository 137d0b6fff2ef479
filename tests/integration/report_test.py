#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Integration tests of the reports people and programs read while and after
profiling: the live mode's interval JSON Lines (-i --json) and the HTML
report (report --html, --html), loaded in headless Chromium. The outputs do
not depend on the attach mode: one is enough."""
import html.parser
import json
import os
import shutil
import subprocess
import sys
import tempfile

import itest
from itest import *  # noqa: F401,F403 (the shared helpers and environment)

SLEEP_MS, SLEEPS = 20, 60
NESTED = 300
CXX_DRIVER = os.environ.get("DLCXX_DRIVER", "")
# Where the screenshots are kept: the meson build directory (DLPROF is BUILD/user/dlprof-bpf).
ARTIFACTS = os.path.join(os.path.dirname(os.path.dirname(DLPROF)), "test-artifacts")


class Dom(html.parser.HTMLParser):
    """What the checks read from the DOM Chromium dumps after the page's script ran."""

    def __init__(self):
        super().__init__()
        self.body = {}
        self.rows = []          # per table row: {"cells": {class: (data-v, text)}, "bars": [counts]}
        self.tracks = []        # timeline tracks' data-calls
        self.cell = None
        self.external = []      # anything that would fetch from elsewhere

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("src", "href"):
            if key in a:
                self.external.append(f"{tag} {key}={a[key]}")
        if tag == "body":
            self.body = a
        elif tag == "tr" and self.rows is not None and self.body:
            self.rows.append({"cells": {}, "bars": []})
        elif tag == "td" and self.rows:
            self.cell = [a.get("class", ""), a.get("data-v"), ""]
        elif tag == "rect" and "bar" in a.get("class", "").split() and self.rows:
            self.rows[-1]["bars"].append(int(a["data-count"]))
        elif tag == "g" and a.get("class") == "track":
            self.tracks.append(int(a["data-calls"]))

    def handle_data(self, data):
        if self.cell is not None:
            self.cell[2] += data

    def handle_endtag(self, tag):
        if tag == "td" and self.cell is not None:
            cls, v, text = self.cell
            self.rows[-1]["cells"].setdefault(cls, (v, text))
            self.cell = None


def chromium():
    exe = shutil.which("chromium")
    if not exe:
        raise Skip("chromium is not installed (scripts/deps installs it): the page cannot be loaded")
    return exe


def load(page, fragment=""):
    """The page in headless Chromium: the DOM once its script ran."""
    p = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                        f"file://{page}{fragment}"], capture_output=True, text=True, timeout=120)
    check(p.returncode == 0 and "<html" in p.stdout, f"chromium --dump-dom rc {p.returncode}: {p.stderr[-500:]}")
    dom = Dom()
    dom.feed(p.stdout)
    dom.rows = [r for r in dom.rows if r["cells"]]
    return dom


def screenshot(page, name):
    os.makedirs(ARTIFACTS, exist_ok=True)
    png = os.path.join(ARTIFACTS, name)
    p = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1400,900",
                        f"--screenshot={png}", f"file://{page}"], capture_output=True, text=True, timeout=120)
    check(p.returncode == 0 and os.path.getsize(png) > 0, f"chromium --screenshot rc {p.returncode}: {p.stderr[-500:]}")
    print(f"screenshot: {png}")


def names(dom):
    return [r["cells"]["name"][1] for r in dom.rows]


@modes("session")
def test_interval_rates_with_a_big_library():
    """Each interval's calls over its interval_s is the rate the workload kept in that interval.
    The workload does nothing but 10 ms spins back to back, so its calls' own wall time in an
    interval (what they took, however loaded the machine) spans the interval, one call at
    each edge aside. With libcrypto's 5,000 functions beside, the first read takes 0.1-0.4 s
    after its counts; an interval stamped after that read had shown the second one at twice
    the rate."""
    spin_ms, spins = 10, 300
    args = base_args(["-i", "0.5", "--lib", LIB, "--lib", "libcrypto.so.3",
                      "--", DRIVER, "spin", str(spin_ms), str(spins)])
    p = subprocess.run(args, capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"rc {p.returncode}: {p.stderr}")
    intervals = [d for d in map(json.loads, p.stdout.splitlines()) if "interval" in d]
    check(len(intervals) >= 4, f"{len(intervals)} intervals for a {spin_ms * spins} ms run with -i 0.5")
    # The first interval holds the workload's start, the last its exit; the others are all spins.
    for d in intervals[1:-1]:
        f = next((x for x in d["functions"] if x["name"] == "dlt_spin_ms"), None)
        check(f and f["interval"]["timed"], f"interval {d['interval']}: no spin returned in it: {d}")
        iv = f["interval"]
        rate = iv["calls"] / d["interval_s"]
        own_rate = iv["timed"] / (iv["total_ns"] / 1e9)
        # A call at each edge is half in the interval before or after: at most two calls' time
        # (p99 bounds a call, the buckets' 3.2% aside), and one entry more or less than returns.
        edge_s = 2 * 1.04 * iv["p99_ns"] / 1e9 + 0.002
        check(abs(iv["total_ns"] / 1e9 - d["interval_s"]) <= edge_s and abs(iv["calls"] - iv["timed"]) <= 1,
              f"interval {d['interval']}: {iv['calls']} calls over {d['interval_s']:.3f} s ({rate:.1f}/s), "
              f"but the calls took {iv['total_ns'] / 1e9:.3f} s ({own_rate:.1f}/s, edges {edge_s:.3f} s)")
    calls = sum(next((x["interval"]["calls"] for x in d["functions"] if x["name"] == "dlt_spin_ms"), 0)
                for d in intervals)
    summary = json.loads(p.stdout.splitlines()[-1])
    check(calls <= calls_of(summary, "dlt_spin_ms") == spins == oracle(p.stderr, "calls"),
          f"intervals {calls}, summary {calls_of(summary, 'dlt_spin_ms')}, workload {spins}")


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
def test_html_report_chromium():
    chromium()
    with tempfile.TemporaryDirectory() as tmp:
        trace, _ = record(tmp, [DRIVER, "nested", LATE_LIB, str(NESTED)], ["--lib", LATE_LIB])
        _, calls, _ = dump_csv(trace)
        page = os.path.join(tmp, "report.html")
        p = subprocess.run([DLPROF, "report", trace, "--html", page], capture_output=True, text=True, timeout=120)
        check(p.returncode == 0 and p.stdout == "", f"report --html rc {p.returncode}: {p.stderr}")
        screenshot(page, "report-trace.png")
        want = {}
        for c in calls:
            want[c["func"]] = want.get(c["func"], 0) + 1
        dom = load(page)
        check(not dom.external, f"the page fetches from elsewhere: {dom.external}")
        check(dom.body.get("data-sort") == "total,desc", f"the page's script did not run: body {dom.body}")
        got = {r["cells"]["name"][1]: int(r["cells"]["calls"][0]) for r in dom.rows}
        check(got == want and want.get("dlt_apply") == NESTED and want.get("dlt_add") == NESTED,
              f"rows {got}, the trace holds {want}")
        for r in dom.rows:
            timed = int(r["cells"]["timed"][0])
            check(r["bars"] and sum(r["bars"]) == timed, f"{names(dom)}: histogram bars {r['bars']} for {timed} timed calls")
        check(sum(dom.tracks) == len(calls) and dom.tracks, f"timeline tracks {dom.tracks}, {len(calls)} calls")
        # Sorting, driven from the address: by name both ways, then by calls.
        for frag, order in (("#sort=name,asc", sorted(want)), ("#sort=name,desc", sorted(want, reverse=True))):
            d = load(page, frag)
            check(d.body.get("data-sort") == frag[6:] and names(d) == order, f"{frag}: {names(d)}, want {order}")
        p50 = [int(r["cells"]["p50"][0]) for r in load(page, "#sort=p50,asc").rows]
        check(p50 == sorted(p50), f"#sort=p50,asc: {p50}")


@modes("session")
def test_html_live_cxx_names():
    """A live run's page: C++ names (< > &) escaped, each one shown as the JSON names it."""
    chromium()
    if not CXX_DRIVER:
        raise Skip("DLCXX_DRIVER not set")
    glob = "std::__cxx11::basic_string*"
    with tempfile.TemporaryDirectory() as tmp:
        page, doc = os.path.join(tmp, "live.html"), os.path.join(tmp, "live.json")
        for out in (["--html", page], ["--json", "-o", doc]):
            cmd = [DLPROF] + out + ["--lib", "libstdc++.so.6", "--func", glob] + (["--attach", ATTACH] if ATTACH else [])
            p = subprocess.run(cmd + ["--", CXX_DRIVER, "stdlib"], capture_output=True, text=True, timeout=180)
            check(p.returncode == 0, f"{out[0]} rc {p.returncode}: {p.stderr[-500:]}")
        screenshot(page, "report-live-cxx.png")
        want = {f["name"]: f["calls"] for f in json.load(open(doc))["functions"]}
        dom = load(page)
        got = {r["cells"]["name"][1]: int(r["cells"]["calls"][0]) for r in dom.rows}
        check(any("<" in n for n in want), f"no templated name to escape among {list(want)}")
        # The same program twice: the same functions, each called as often.
        check(got == want, f"page rows {got}\nJSON {want}")
        check(all(r["bars"] for r in dom.rows if int(r["cells"]["timed"][0])), "a timed function without histogram bars")
        # The page says which times it shows, as the table's footer does.
        check(json.load(open(doc))["latency"] == "compensated" and
              'class="latency">times are compensated' in open(page).read(), "the page does not say its times are compensated")


def charged(functions, pair_ns, calls_of_f):
    """What the probes of these functions cost: their calls at their class's pair cost (none entry-only
    here: dlt_* keep no return address and reach no unwinder)."""
    return sum(calls_of_f(f) * pair_ns["single_stepped" if f.get("latency") == "raw" else "emulated"]
               for f in functions) / 1e9


HOT_CALLS = 300000


@modes("session")
def test_interval_says_probe_cost():
    """-i --json: every line says which times it holds and what the probes cost so far, its calls at
    the calibrated cost of their class, the same figures as the summary; a hot loop past the threshold
    is warned about once on stderr, at an interval, before the end. -i as text: each interval's footer
    says it."""
    args = base_args(["-i", "0.2", "--lib", LIB, "--func", "dlt_*", "--", DRIVER, "count", str(HOT_CALLS)])
    p = subprocess.run(args, capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"rc {p.returncode}: {p.stderr}")
    docs = [json.loads(l) for l in p.stdout.splitlines()]
    intervals, summary = docs[:-1], docs[-1]
    check(len(intervals) >= 2, f"{len(intervals)} intervals")
    prev = 0
    for d in intervals:
        ov = d.get("probe_overhead")
        check(d.get("latency") == summary["latency"] and ov, f"interval {d['interval']}: {d.get('latency')} {ov}")
        calls = sum(f["total"]["calls"] for f in d["functions"])
        check(sum(ov["calls"].values()) == calls, f"interval {d['interval']}: charged {ov['calls']}, {calls} calls")
        want = charged(d["functions"], ov["pair_ns"], lambda f: f["total"]["calls"])
        # A calibration drawn high on a busy machine can put the calls at their cost past the calling
        # thread's whole time: the figure is then that time, said so, and below the estimate.
        if ov["bounded"]:
            check(0 < ov["cpu_s"] < want and ov["cpu_s"] >= prev,
                  f"interval {d['interval']}: bounded cpu_s {ov['cpu_s']}, the calls at their cost {want}")
        else:
            check(abs(ov["cpu_s"] - want) <= 1e-6 * want + 1e-9 and ov["cpu_s"] >= prev,
                  f"interval {d['interval']}: cpu_s {ov['cpu_s']}, the calls at their cost {want}")
        check(abs(ov["share_of_one_cpu"] - ov["cpu_s"] / d["t_s"]) < 0.01, f"share {ov['share_of_one_cpu']} at {d['t_s']} s")
        prev = ov["cpu_s"]
    so = summary["probe_overhead"]
    check(so["pair_ns"] == intervals[-1]["probe_overhead"]["pair_ns"] and so["cpu_s"] >= prev, f"summary {so}")
    check(sum(so["calls"].values()) == sum(f["calls"] for f in summary["functions"]) >= HOT_CALLS,
          f"summary charged {so['calls']}")
    warnings = [l for l in p.stderr.splitlines() if "warning: the probes cost the targets" in l]
    # Once at the interval that passed the threshold, once after the summary.
    check(len(warnings) == 2 and "dlt_add" in warnings[0], f"stderr: {p.stderr}")
    text = subprocess.run([a for a in args if a != "--json"], capture_output=True, text=True, timeout=120)
    check(text.returncode == 0, f"text rc {text.returncode}: {text.stderr}")
    notes = [l for l in text.stdout.splitlines() if l.startswith("# the probes cost the targets")]
    latency = [l for l in text.stdout.splitlines() if l.startswith("# times are compensated")]
    check(len(notes) >= 3 and len(notes) == len(latency), f"{len(notes)} cost notes, {len(latency)} latency notes")


@modes("session")
def test_report_says_probe_cost():
    """A trace keeps its functions' probe classes and the calibrated pair costs: report (text, JSON,
    HTML) says what the probes cost while recording, the same estimate record's own summary made."""
    with tempfile.TemporaryDirectory() as tmp:
        trace, live = record(tmp, [DRIVER, "count", str(HOT_CALLS)])
        lo = live["probe_overhead"]
        p = subprocess.run([DLPROF, "report", "--json", trace], capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, f"report rc {p.returncode}: {p.stderr}")
        doc = json.loads(p.stdout)
        ro = doc.get("probe_overhead")
        check(ro and ro["calls"] == lo["calls"] and ro["pair_ns"] == lo["pair_ns"], f"report {ro}, record {lo}")
        # Held to the threads' time over the span where the estimate was more: the trace's span ends at
        # its last flush, the live summary's at the detach, a moment apart; an estimate that close to the
        # threads' time can be bounded over one span and not the other.
        if lo["bounded"] or ro["bounded"]:
            check(abs(ro["cpu_s"] - lo["cpu_s"]) <= 0.02 * lo["cpu_s"],
                  f"report cpu_s {ro['cpu_s']}, record {lo['cpu_s']}")
        else:
            check(abs(ro["cpu_s"] - lo["cpu_s"]) <= 1e-6 * lo["cpu_s"], f"report cpu_s {ro['cpu_s']}, record {lo['cpu_s']}")
        # Its times are raw, the summary's compensated: each says which.
        check(doc["latency"] == "raw" and live["latency"] == "compensated", f"{doc['latency']} / {live['latency']}")
        # The trace's calls at the classes the live summary marks (a trace's times are all raw).
        check({f["name"]: f["calls"] for f in doc["functions"]} == {f["name"]: f["calls"] for f in live["functions"]},
              "the trace's calls are not the summary's")
        want = charged(live["functions"], ro["pair_ns"], lambda f: f["calls"])
        check(abs(ro["cpu_s"] - want) <= 1e-6 * want or (ro["bounded"] and ro["cpu_s"] < want),
              f"cpu_s {ro['cpu_s']}, the calls at their cost {want}")
        check("warning: the probes cost the targets" in p.stderr, f"no warning for a hot loop: {p.stderr}")
        p = subprocess.run([DLPROF, "report", trace], capture_output=True, text=True, timeout=120)
        check("# the probes cost the targets" in p.stdout and "# times are raw" in p.stdout, f"report: {p.stdout}")
        page = os.path.join(tmp, "r.html")
        p = subprocess.run([DLPROF, "report", trace, "--html", page], capture_output=True, text=True, timeout=120)
        html_text = open(page).read()
        check('<span class="overhead">the probes cost the targets' in html_text and
              '<span class="overhead-warning">' in html_text and '<span class="latency">times are raw' in html_text,
              "the page does not say what the probes cost or which times it shows")


@modes("session")
def test_interval_html_refused():
    expect_error([DLPROF, "-i", "1", "--html", "/tmp/x.html", "--lib", LIB, "--", DRIVER, "count", "1"], "-i")


if __name__ == "__main__":
    sys.exit(itest.run(globals()))
