#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""dlprof-bpf agent --callers K: the caller label on the function series.
tests/progs/callers_driver makes known calls from known call sites (its
own functions, one static, one calling from two sites, and a second
library); each caller="module:symbol" series equals that caller's count,
caller="other" holds the rest when K is smaller than the callers, a
container's callers have series of their own, the series stay inside
--max-series, and a sampled function's series carry the label too.
Runner and helpers: itest.py."""
import os
import subprocess
import sys

import itest
from itest import *  # noqa: F401,F403 (the shared helpers and environment)
from agent_test import Agent, agent_error, samples, wait_value
from containers import move_into, scratch_cgroup

CALLERS_DRIVER = os.environ.get("CALLERS_DRIVER", "")
CALLERS_LIB = os.environ.get("CALLERS_LIB", "")
DRIVER_NAME = os.path.basename(CALLERS_DRIVER)
FUNCS = ["--lib", LIB, "--func", "dlt_add,dlt_test_je"]


def expected(n):
    """{(function, caller label): calls} as the driver makes them."""
    lib2 = os.path.basename(CALLERS_LIB)
    return {("dlt_add", f"{DRIVER_NAME}:static_caller"): n,
            ("dlt_add", f"{DRIVER_NAME}:exported_caller"): 2 * n,
            ("dlt_add", f"{DRIVER_NAME}:two_sites_caller"): 6 * n,
            ("dlt_add", f"{lib2}:callers_relay"): 5 * n,
            ("dlt_test_je", f"{DRIVER_NAME}:je_caller"): 7 * n}


def label(lbl, name):
    return lbl.split(f'{name}="')[1].split('"')[0] if f'{name}="' in lbl else None


def per_caller(text, container=None, sampled=False):
    """{(function, caller label): calls} of the exact (or sampled) series of one container (None: the host)."""
    out = {}
    for lbl, v in samples(text, "dlprof_calls_total").items():
        if label(lbl, "container") != container or ('sampled="true"' in lbl) != sampled or not label(lbl, "caller"):
            continue
        key = (label(lbl, "function"), label(lbl, "caller"))
        out[key] = out.get(key, 0) + v
    return out


def run_callers(n):
    p = subprocess.run([CALLERS_DRIVER, str(n)], capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"callers_driver failed: {p.stderr}")


@modes("session", "multi", "classic")
def test_agent_caller_label_exact():
    """K above the callers: one series per caller, each exact, named after the process
    exited (the static function from .symtab, the second library's caller, two sites
    in one series, the probe past the entry of dlt_test_je); no caller="other"."""
    n = 300
    with Agent(FUNCS + ["--max-overhead", "off", "--callers", "5"]) as a:
        a.wait_ready()
        run_callers(n)
        text = wait_value(a, per_caller, expected(n))
        check(not any('caller="other"' in l for l in samples(text, "dlprof_calls_total")),
              f"an other series with every caller named: {samples(text, 'dlprof_calls_total')}")
        # Every series has a caller label: none is left without.
        check(all(label(l, "caller") for l in samples(text, "dlprof_calls_total")),
              f"a series without a caller: {samples(text, 'dlprof_calls_total')}")
        check(a.stop() == 0, f"exit {a.p.returncode}: {a.text()}")


@modes("session")
def test_agent_caller_label_other_and_bounds():
    """K = 2: dlt_add's two callers with the most time named, exact, the other two summed in
    caller="other"; a second run adds to the same series (the places are kept); then
    --max-series 3 bounds the exposed series, folding the rest into __other__ with no call lost."""
    n = 400
    want = expected(n)
    with Agent(FUNCS + ["--max-overhead", "off", "--callers", "2"]) as a:
        a.wait_ready()
        run_callers(n)
        total = sum(v for (f, _), v in want.items() if f == "dlt_add")
        text = wait_value(a, lambda t: sum(v for (f, _), v in per_caller(t).items() if f == "dlt_add"), total)
        got = per_caller(text)
        add = {c: v for (f, c), v in got.items() if f == "dlt_add"}
        named = {c: v for c, v in add.items() if c != "other"}
        check(len(named) == 2 and "other" in add, f"dlt_add's series: {add}")
        for c, v in named.items():
            check(want.get(("dlt_add", c)) == v, f"{c}: {v} calls, the driver made {want.get(('dlt_add', c))}")
        check(add["other"] == total - sum(named.values()), f"other {add['other']}, want the rest of {total}")
        check(got[("dlt_test_je", f"{DRIVER_NAME}:je_caller")] == 7 * n, f"dlt_test_je: {got}")
        run_callers(n)
        text = wait_value(a, lambda t: sum(v for (f, _), v in per_caller(t).items() if f == "dlt_add"), 2 * total)
        again = {c: v for (f, c), v in per_caller(text).items() if f == "dlt_add"}
        check(again == {c: 2 * v for c, v in add.items()}, f"second run: {again}, first {add}")
        check(a.stop() == 0, f"exit {a.p.returncode}: {a.text()}")
    with Agent(FUNCS + ["--max-overhead", "off", "--callers", "2", "--max-series", "3"]) as a:
        a.wait_ready()
        run_callers(n)
        all_calls = sum(want.values())
        text = wait_value(a, lambda t: sum(samples(t, "dlprof_calls_total").values()) == all_calls and
                          samples(t, "dlprof_agent_series_folded_total").get("", 0) >= 1, True)
        series = samples(text, "dlprof_calls_total")
        check(len(series) == 3 and any('function="__other__"' in s for s in series), f"series: {series}")
        check(a.stop() == 0, f"exit {a.p.returncode}: {a.text()}")


@modes("session")
def test_agent_caller_label_per_container():
    """A process in a container's cgroup (podman's scope name) has caller series of its own,
    with the container label, beside the host's; each exact."""
    cid = os.urandom(32).hex()
    n, m = 200, 300
    with scratch_cgroup("machine.slice", f"libpod-{cid}.scope") as cg, \
            Agent(FUNCS + ["--max-overhead", "off", "--callers", "5"]) as a:
        a.wait_ready()
        d = subprocess.Popen([CALLERS_DRIVER, "--wait", str(n)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
        try:
            check(d.stdout.readline().startswith("ready "), "driver did not start")
            move_into(cg, d.pid)
            drive(d)
            run_callers(m)
            text = wait_value(a, lambda t: (per_caller(t, cid), per_caller(t)), (expected(n), expected(m)))
        finally:
            finish(d)
        check(a.stop() == 0, f"exit {a.p.returncode}: {a.text()}")


@modes("session")
def test_agent_caller_label_sampled():
    """A budget far below what the calls cost: the functions are sampled in windows, and
    their sampled series carry the caller labels too (per caller, K = 1: one named
    and other); the exact and sampled series of a caller add up to about its calls."""
    n = 20000
    with Agent(FUNCS + ["--max-overhead", "0.05", "--callers", "1"]) as a:
        a.wait_ready()
        d = subprocess.Popen([CALLERS_DRIVER, "--wait", str(n)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
        try:
            check(d.stdout.readline().startswith("ready "), "driver did not start")
            for _ in range(5):
                drive(d)
        finally:
            finish(d)
        text = wait_value(a, lambda t: any(k[0] == "dlt_add" for k in per_caller(t, sampled=True)), True, timeout=30)
        sampled = per_caller(text, sampled=True)
        callers = {c for f, c in sampled if f == "dlt_add"}
        check(callers <= {"other", f"{DRIVER_NAME}:two_sites_caller", f"{DRIVER_NAME}:exported_caller",
                          f"{DRIVER_NAME}:static_caller", f"{os.path.basename(CALLERS_LIB)}:callers_relay"} and
              len(callers) <= 2, f"sampled dlt_add series: {sampled}")
        exact = per_caller(text)
        check(len({c for f, c in exact if f == "dlt_add"} | callers) <= 2, f"exact {exact}, sampled {sampled}")
        check("event=budget" in a.text(), f"no budget line: {a.text()}")
        check(a.stop() == 0, f"exit {a.p.returncode}: {a.text()}")



@modes("session")
def test_agent_caller_label_bad_input():
    """--callers 0, a word, or DLPROF_AGENT_CALLERS that is not a number: one line naming
    the flag (and the variable it came from), exit 2; DLPROF_AGENT_CALLERS=2 turns the label on."""
    for args, env, words in ((["--callers", "0"], {}, "--callers"),
                             (["--callers", "some"], {}, "--callers"),
                             ([], {"DLPROF_AGENT_CALLERS": "-1"}, "DLPROF_AGENT_CALLERS")):
        rc, lines = agent_error(["--lib", LIB] + args, env={**os.environ, **env})
        check(rc == 2 and len(lines) == 1 and words in lines[0], f"{args} {env}: exit {rc}: {lines}")
    with Agent(FUNCS + ["--max-overhead", "off"], env={**os.environ, "DLPROF_AGENT_CALLERS": "2"}) as a:
        a.wait_ready()
        run_callers(100)
        text = wait_value(a, lambda t: sum(per_caller(t).values()), 2100)
        check(len([k for k in per_caller(text) if k[0] == "dlt_add"]) == 3, f"series: {per_caller(text)}")
        check(a.stop() == 0, f"exit {a.p.returncode}: {a.text()}")


if __name__ == "__main__":
    sys.exit(itest.run(globals()))
