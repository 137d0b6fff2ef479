#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Integration tests of `dlprof-bpf top`, driven through a real terminal: a
detached tmux session runs top on two real workloads; the test reads the
screen (capture-pane), presses keys (send-keys) and checks that the terminal
is given back. The view does not depend on the attach mode: one is enough."""
import atexit
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

import itest
from itest import *  # noqa: F401,F403 (the shared helpers and environment)

SESSION = "dlprof-top-test"
# A tmux server of this test's own: a session killed by the test before ends the shared server, and a new
# session that reached it as it exited failed with "server exited unexpectedly".
SOCKET = f"dlprof-top-test-{os.getpid()}"
# Two functions of different rates and latencies: 1 ms naps (fast, short) and 30 ms sleeps.
NAPS = 20000
SLEEPS = 700


def tmux(*args, check_rc=True):
    p = subprocess.run(["tmux", "-L", SOCKET, "-f", "/dev/null"] + list(args), capture_output=True, text=True,
                       timeout=30)
    if check_rc:
        check(p.returncode == 0, f"tmux {args}: {p.stderr}")
    return p.stdout


@atexit.register
def end_tmux_server():
    """Whatever a failed test left running in it goes with the server, and its socket file with it."""
    subprocess.run(["tmux", "-L", SOCKET, "kill-server"], capture_output=True, timeout=30)
    try:
        os.unlink(os.path.join(os.environ.get("TMUX_TMPDIR", "/tmp"), f"tmux-{os.getuid()}", SOCKET))
    except OSError:
        pass


def screen():
    return tmux("capture-pane", "-p", "-t", SESSION)


def pane(fmt):
    return tmux("display-message", "-p", "-t", SESSION, fmt).strip()


def wait_for(pred, what, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        s = screen()
        if pred(s):
            return s
        time.sleep(0.2)
    raise AssertionError(f"{what} never showed; the screen:\n{screen()}")


def rows(s, prefix="dlt_"):
    """{function: [CALLS/s, P50, P99, ONCPU, CALLS, ...]} from the screen (FUNCTION is the first column)."""
    out = {}
    for line in s.splitlines():
        cells = line.split()
        if cells and cells[0].startswith(prefix):
            out[cells[0]] = cells[1:]
    return out


def order(s):
    return [l.split()[0] for l in s.splitlines() if l.split() and l.split()[0].startswith("dlt_")]


def ns(cell):
    m = re.fullmatch(r"([\d.]+)(ns|us|ms|s)", cell)
    check(m is not None, f"not a duration: {cell!r}")
    return float(m.group(1)) * {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[m.group(2)]


def start_top(workload=None, funcs=("dlt_nap", "dlt_sleep_ms"), lib=None, prefix="dlt_", width=160, extra=()):
    """top in a fresh tmux session on the workloads (default: the two) and the functions of lib (default:
    LIB) named prefix*; after it, its exit status and the terminal's modes."""
    if not shutil.which("tmux"):
        raise Skip("tmux is not installed (scripts/deps installs it)")
    if workload is None:
        workload = f"{shlex.quote(DRIVER)} sleep 30 {SLEEPS} & exec {shlex.quote(DRIVER)} nap 1 {NAPS}"
    top = [DLPROF, "top", "--lib", lib or LIB, "--func", prefix + "*"] + (["--attach", ATTACH] if ATTACH else [])
    top += list(extra)
    top += ["--", "sh", "-c", workload]
    shell = (" ".join(map(shlex.quote, top)) + "; echo TOP-EXIT=$?; stty -a | tr ' ;' '\\n\\n' | "
             "grep -x -e icanon -e -icanon -e echo -e -echo; echo MODES-SAID; sleep 120")
    tmux("kill-session", "-t", SESSION, check_rc=False)
    tmux("new-session", "-d", "-s", SESSION, "-x", str(width), "-y", "30", shell)
    return wait_for(lambda s: set(funcs) <= set(rows(s, prefix)), f"the rows of {funcs}")


def check_restored(exit_status):
    # The modes print after the exit status: wait for the line after them, not for the status.
    s = wait_for(lambda s: "TOP-EXIT=" in s and "MODES-SAID" in s, "top's exit and the terminal's modes", timeout=60)
    check(f"TOP-EXIT={exit_status}" in s, f"top's exit status, want {exit_status}: {s}")
    check(pane("#{alternate_on}") == "0", "the alternate screen was left on")
    check(pane("#{cursor_flag}") == "1", "the cursor was left hidden")
    modes_after = [l.strip() for l in s.splitlines() if l.strip() in ("icanon", "-icanon", "echo", "-echo")]
    check(sorted(modes_after) == ["echo", "icanon"], f"terminal modes after top: {modes_after}")


def top_pid():
    """dlprof-bpf, the child of the pane's shell."""
    shell = int(pane("#{pane_pid}"))
    with open(f"/proc/{shell}/task/{shell}/children") as f:
        for pid in map(int, f.read().split()):
            with open(f"/proc/{pid}/comm") as c:
                if c.read().strip() == "dlprof-bpf":
                    return pid
    raise AssertionError("top's process not found under the pane's shell")


@modes("session")
def test_top_tmux():
    try:
        s1 = start_top()
        check(pane("#{alternate_on}") == "1", "top does not use the alternate screen")
        header = next(l for l in s1.splitlines() if "FUNCTION" in l).split()
        check(header[:6] == ["FUNCTION", "CALLS/s", "P50", "P99", "ONCPU", "CALLS"], f"columns: {header}")
        check(any(c.endswith("/call") for c in header), f"no counter per call column: {header}")
        # Which times these are, and what the probes cost so far: what the summary would say.
        check(cost_line(s1).startswith("times compensated"), f"no latency kind in the header:\n{s1}")
        time.sleep(2.5)
        s2 = screen()
        r1, r2 = rows(s1), rows(s2)
        for f in ("dlt_nap", "dlt_sleep_ms"):
            check(int(r2[f][4]) > int(r1[f][4]), f"{f}: total calls did not grow: {r1[f]} then {r2[f]}")
        nap, sleep = r2["dlt_nap"], r2["dlt_sleep_ms"]
        # Rates over the last second: ~33/s for 30 ms sleeps; naps of 1 ms, far more.
        check(10 <= float(sleep[0]) <= 40, f"dlt_sleep_ms calls/s {sleep[0]}")
        check(float(nap[0]) > 3 * float(sleep[0]), f"dlt_nap calls/s {nap[0]} vs sleeps {sleep[0]}")
        # The interval's percentiles: a 30 ms sleep's, a 1 ms nap's.
        check(29e6 <= ns(sleep[1]) <= 60e6 and ns(sleep[1]) <= ns(sleep[2]), f"dlt_sleep_ms p50/p99 {sleep[1:3]}")
        check(0.9e6 <= ns(nap[1]) <= 10e6, f"dlt_nap p50 {nap[1]}")
        check(float(sleep[3].rstrip("%")) < 10, f"a sleeping call on a CPU {sleep[3]}")
        # Sorted by calls/s first; p sorts by p99, c back.
        check(order(s2) == ["dlt_nap", "dlt_sleep_ms"], f"default order (calls/s): {order(s2)}")
        tmux("send-keys", "-t", SESSION, "p")
        s3 = wait_for(lambda s: "sort: p99" in s, "sort by p99")
        check(order(s3) == ["dlt_sleep_ms", "dlt_nap"], f"order by p99: {order(s3)}")
        tmux("send-keys", "-t", SESSION, "c")
        s4 = wait_for(lambda s: "sort: calls/s" in s, "sort by calls")
        check(order(s4) == ["dlt_nap", "dlt_sleep_ms"], f"order by calls/s: {order(s4)}")
        tmux("send-keys", "-t", SESSION, "q")
        check_restored(0)
    finally:
        tmux("kill-session", "-t", SESSION, check_rc=False)


def cost_line(s):
    """The header's line saying which times these are and what the probes cost."""
    return next((l.strip() for l in s.splitlines() if l.startswith("times ")), "")


# "~" for an estimate, "at most" where it is held to the calling threads' or the CPUs' time.
COST = re.compile(r"the probes cost the targets (?:~|at most )(\S+) of CPU in ([\d.]+) s profiled "
                  r"\(([\d.]+)% of one CPU\)")


@modes("session")
def test_top_says_probe_cost():
    """A hot loop of probed calls: the header says what the probes cost the target (calls at the
    calibrated cost of their class, most of its time) and warns in one line past the threshold;
    a workload of 1 ms naps costs it a few percent and is not warned about."""
    try:
        s = start_top(f"exec {shlex.quote(DRIVER)} count 400000000", funcs=("dlt_add",))
        s = wait_for(lambda s: COST.search(cost_line(s)), "the probes' cost")
        m = COST.search(cost_line(s))
        # A single-threaded loop that does little but probed calls: its probes take most of one CPU.
        check(20 <= float(m.group(3)) <= 150, f"the probes' share of a hot loop: {cost_line(s)}")
        warning = [l for l in s.splitlines() if l.startswith("warning: the probes cost the targets")]
        # The screen cuts it at its width (160 columns here): the start is what is read first.
        check(len(warning) == 1 and "most in dlt_add" in warning[0], f"no warning line naming dlt_add:\n{s}")
        tmux("send-keys", "-t", SESSION, "q")
        check_restored(0)
        s = start_top()
        s = wait_for(lambda s: COST.search(cost_line(s)), "the probes' cost")
        check(float(COST.search(cost_line(s)).group(3)) < 10, f"1 ms naps: {cost_line(s)}")
        check(not any(l.startswith("warning:") for l in s.splitlines()), f"naps warned about:\n{s}")
        tmux("send-keys", "-t", SESSION, "q")
        check_restored(0)
    finally:
        tmux("kill-session", "-t", SESSION, check_rc=False)


@modes("session")
def test_top_marks_uncertain():
    """comp_outer spinning ~1 us around 20 probed calls of comp_inner: most of its time is their
    probes', and top marks its times "?" with a line that says what to do, as the summary does
    (compensation_test.py checks the other front ends)."""
    driver, lib = os.environ.get("COMP_DRIVER", ""), os.environ.get("COMP_LIB", "")
    try:
        # comp_driver starts on a line on stdin; it runs far longer than the test looks.
        work = f"while echo go; do sleep 1; done | {shlex.quote(driver)} 1000 20 1000000 >/dev/null"
        start_top(work, funcs=("comp_outer",), lib=lib, prefix="comp_")
        s = wait_for(lambda s: all(c.endswith("?") for c in rows(s, "comp_").get("comp_outer", ["-"])[1:3]),
                     "comp_outer's P50 and P99 marked ?")
        check(not any(c.endswith("?") for c in rows(s, "comp_")["comp_inner"][1:3]), f"comp_inner marked:\n{s}")
        check(any(l.startswith("? 1 function's time is mostly its nested calls' probes") for l in s.splitlines()),
              f"no line saying what ? means:\n{s}")
        tmux("send-keys", "-t", SESSION, "q")
        check_restored(0)
    finally:
        tmux("kill-session", "-t", SESSION, check_rc=False)


@modes("session")
def test_top_narrow_keeps_names():
    """At 70 columns the numbers on the right are cut, never the FUNCTION column (first)."""
    try:
        s = start_top(width=70)
        header = next(l for l in s.splitlines() if "FUNCTION" in l)
        check(header.startswith("FUNCTION") and len(header.rstrip()) <= 70, f"header: {header!r}")
        r = rows(s)
        check(len(r["dlt_nap"]) >= 4 and r["dlt_nap"][1] != "", f"dlt_nap's row: {r['dlt_nap']}")
        tmux("send-keys", "-t", SESSION, "q")
        wait_for(lambda s: "TOP-EXIT=0" in s, "top's exit", timeout=60)
    finally:
        tmux("kill-session", "-t", SESSION, check_rc=False)


@modes("session")
def test_top_marks_raw():
    """comp_stepped's entry is single-stepped: its times are raw among compensated ones, marked "~" with a
    line that says so, as the summary's table does."""
    driver, lib = os.environ.get("COMP_DRIVER", ""), os.environ.get("COMP_LIB", "")
    try:
        work = f"while echo go; do sleep 1; done | {shlex.quote(driver)} 20000 1 1000000 stepped >/dev/null"
        # Probed at its entry's mov, which the kernel single-steps (compensation_test.py does the same).
        start_top(work, funcs=("comp_stepped",), lib=lib, prefix="comp_stepped", extra=["--placement", "entry"])
        s = wait_for(lambda s: all(c.endswith("~") for c in rows(s, "comp_").get("comp_stepped", ["-"])[1:3]),
                     "comp_stepped's P50 and P99 marked ~")
        check(cost_line(s).startswith("times compensated"), f"not a compensated profile:\n{s}")
        check(any(l.startswith("~ 1 function timed raw") for l in s.splitlines()), f"no line saying what ~ means:\n{s}")
        tmux("send-keys", "-t", SESSION, "q")
        wait_for(lambda s: "TOP-EXIT=0" in s, "top's exit", timeout=60)
    finally:
        tmux("kill-session", "-t", SESSION, check_rc=False)


@modes("session")
def test_top_sigterm():
    """SIGTERM ends top as it ends the live mode (128+15), the terminal given back first."""
    try:
        start_top()
        os.kill(top_pid(), signal.SIGTERM)
        check_restored(128 + signal.SIGTERM)
    finally:
        tmux("kill-session", "-t", SESSION, check_rc=False)


@modes("session")
def test_top_needs_a_terminal():
    p = subprocess.run([DLPROF, "top", "--lib", LIB, "--", DRIVER, "count", "10"], capture_output=True,
                       text=True, timeout=60, stdin=subprocess.DEVNULL)
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    check(p.returncode == 2 and len(lines) == 1 and "terminal" in lines[0], f"rc {p.returncode}: {p.stderr!r}")


@modes("session")
def test_top_opens_callers():
    """top --by caller: w opens each function into its callers (the three that took the most time,
    each named with its module, its calls so far) and closes them again."""
    drv = os.environ.get("CALLERS_DRIVER", "")
    lib2 = os.path.basename(os.environ.get("CALLERS_LIB", ""))
    names = {"static_caller": os.path.basename(drv), "exported_caller": os.path.basename(drv),
             "two_sites_caller": os.path.basename(drv), "callers_relay": lib2}
    try:
        start_top(f"while :; do {shlex.quote(drv)} 200 >/dev/null; done", funcs=("dlt_add",), prefix="dlt_add",
                  extra=["--by", "caller"])
        s = wait_for(lambda s: "w open callers" in s, "the callers key")
        tmux("send-keys", "-t", SESSION, "w")
        s = wait_for(lambda s: "w close callers" in s and "<-" in s, "dlt_add's callers")
        lines = s.splitlines()
        at = next(i for i, l in enumerate(lines) if l.split() and l.split()[0] == "dlt_add")
        under = [l.split() for l in lines[at + 1:at + 4]]
        check(all(w[0] == "<-" for w in under), f"dlt_add's callers:\n{s}")
        got = {w[1]: w[2].strip("()") for w in under}
        check(len(got) == 3 and all(names.get(c) == m for c, m in got.items()), f"callers shown {got}")
        total = int(lines[at].split()[5])
        check(0 < sum(int(w[-1]) for w in under) <= total, f"callers' calls {under} vs dlt_add's {total}")
        tmux("send-keys", "-t", SESSION, "w")
        s = wait_for(lambda s: "w open callers" in s and "<-" not in s, "the callers closed")
        tmux("send-keys", "-t", SESSION, "q")
        check_restored(0)
    finally:
        tmux("kill-session", "-t", SESSION, check_rc=False)


if __name__ == "__main__":
    sys.exit(itest.run(globals()))
