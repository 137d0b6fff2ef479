#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The probes' cost warned while it bites (docs/list.md, "What a profile then says"):
a workload that the probes slow down far past the threshold is warned of on
stderr within the first seconds, once, naming the function and the remedies,
for a launched command, -p (record) and every process (-i); a light one never.

Runner and helpers: itest.py; the driver and library: tests/progs."""
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

import itest
from itest import *  # noqa: F401,F403 (the shared helpers and environment)

WARNING = "warning: the probes cost the targets"
# The warning must come this soon after the profile began (the checks run at 0.5 s, 1 s and 2 s).
WARN_WITHIN_S = 3.0
# How long the costly workloads run under probes: long enough that a warning at the end would be late.
COSTLY_S = 8


class Stderr:
    """A process's stderr read line by line on a thread, each line with when it was read."""

    def __init__(self, p):
        self.p = p
        self.lines = []
        self.cond = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.p.stderr:
            with self.cond:
                self.lines.append((line.rstrip("\n"), time.monotonic()))
                self.cond.notify_all()
        with self.cond:
            self.lines.append((None, time.monotonic()))
            self.cond.notify_all()

    def wait_for(self, needle, timeout):
        """(line, when) of the first line holding needle; (None, None) at the end or the timeout."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for line, t in self.lines:
                    if line and needle in line:
                        return line, t
                left = deadline - time.monotonic()
                if left <= 0 or (self.lines and self.lines[-1][0] is None):
                    return None, None
                self.cond.wait(left)

    def finish(self, timeout=120):
        """The whole of stderr once the process ended, and its stdout."""
        out = self.p.stdout.read()
        self.p.wait(timeout=timeout)
        self.reader.join(timeout=10)
        return [l for l, _ in self.lines if l is not None], out


def start(args, subcommand=()):
    """The profiler (or its subcommand, such as record -o DIR) in the background."""
    argv = base_args(args)
    argv[1:1] = list(subcommand)
    return Stderr(subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))


def steady_driver(count_file, work_us=None):
    """dlt_test_je called in a loop until killed: back to back, or with work_us of work between calls."""
    mode = ["steady", "0"] if work_us is None else ["steady-us", str(work_us)]
    return [DRIVER] + mode + [count_file]


def check_early_warning(err, since, what):
    """The warning arrived within WARN_WITHIN_S of since, naming the function and what to do."""
    line, t = err.wait_for(WARNING, WARN_WITHIN_S + 30)
    seen = "\n".join(l for l, _ in err.lines if l)
    check(line, f"{what}: no warning of the probes' cost: {seen!r}")
    print(f"{what}: warned {t - since:.2f} s after the start: {line}")
    check(t - since <= WARN_WITHIN_S, f"{what}: warned {t - since:.2f} s after the start, want <= {WARN_WITHIN_S}")
    # "(N% of one CPU)", then whose time held it when the estimate was more (", all the time its ...").
    check(" s profiled (" in line and "% of one CPU)" in line and ", most in dlt_test_je ~" in line
          and "--func/--exclude" in line
          and f"'dlprof-bpf list --lib {LIB}'" in line, f"{what}: warning {line!r}")


def check_said_once(lines, what):
    """Once while it ran, once after the summary (the last line, with the whole profile's figures)."""
    warnings = [l for l in lines if WARNING in l]
    check(len(warnings) == 2 and lines[-1] == warnings[-1], f"{what}: want the warning once while running and "
          f"once at the end: {lines!r}")


def test_launched_command_warned_early():
    """A launched command in a tight loop of probed calls, no -i: warned within the first seconds, not at
    its end; measured from the profiler's launch (attach and calibration included)."""
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.monotonic()
        err = start(["--lib", LIB, "--func", "dlt_*", "-d", str(COSTLY_S), "--"] +
                    steady_driver(os.path.join(tmp, "count")))
        check_early_warning(err, t0, "launched")
        lines, _ = err.finish()
        check(err.p.returncode == 124, f"rc {err.p.returncode}: {lines!r}")
        check_said_once(lines, "launched")


def test_pid_record_warned_early():
    """record -p on a running process in a tight loop: warned within the first seconds of "profiling"."""
    with tempfile.TemporaryDirectory() as tmp:
        d = subprocess.Popen(steady_driver(os.path.join(tmp, "count")))
        try:
            err = start(["--lib", LIB, "--func", "dlt_*", "-d", str(COSTLY_S), "-p", str(d.pid)],
                        subcommand=["record", "-o", os.path.join(tmp, "trace.d")])
            line, t = err.wait_for("profiling", 60)
            check(line, f"the profiler did not attach: {err.lines!r}")
            check_early_warning(err, t, "-p")
            lines, _ = err.finish()
            check(err.p.returncode == 0, f"rc {err.p.returncode}: {lines!r}")
            check_said_once(lines, "-p")
        finally:
            d.kill()
            d.wait()


def test_every_process_with_interval_warned_early():
    """Every process that maps the library, -i longer than the wait: the watch, not the interval, warns;
    the interval then says it no more."""
    with tempfile.TemporaryDirectory() as tmp:
        err = start(["--lib", LIB, "--func", "dlt_test_je", "-i", "5", "-d", str(COSTLY_S)])
        line, t = err.wait_for("profiling", 60)
        check(line, f"the profiler did not attach: {err.lines!r}")
        d = subprocess.Popen(steady_driver(os.path.join(tmp, "count")))
        try:
            check_early_warning(err, t, "every process")
            lines, out = err.finish()
            check(err.p.returncode == 0, f"rc {err.p.returncode}: {lines!r}")
            check(len(out.splitlines()) >= 2, f"no interval line: {out!r}")
            check_said_once(lines, "every process")
        finally:
            d.kill()
            d.wait()


def test_light_workload_not_warned():
    """A call every millisecond (under 1% of one CPU in probes), -i 1: never warned, at any check,
    interval or the end."""
    with tempfile.TemporaryDirectory() as tmp:
        err = start(["--lib", LIB, "--func", "dlt_*", "-i", "1", "-d", "5", "--"] +
                    steady_driver(os.path.join(tmp, "count"), work_us=1000))
        lines, _ = err.finish()
        check(err.p.returncode == 124, f"rc {err.p.returncode}: {lines!r}")
        check(not any(WARNING in l for l in lines), f"a light workload warned of: {lines!r}")


def test_one_thread_never_past_one_cpu():
    """One thread recursing through probed calls: whatever the calibration says, the probes cannot have
    cost it more than its own time, so no figure (while it runs or at the end) says more than 100% of one
    CPU, on a machine of any number of CPUs."""
    err = start(["--lib", LIB, "--func", "dlt_recurse", "--", DRIVER, "recurse", "100", "3000"])
    lines, _ = err.finish()
    check(err.p.returncode == 0, f"rc {err.p.returncode}: {lines!r}")
    shares = [float(m) for l in lines for m in re.findall(r"\(([0-9.]+)% of one CPU", l)]
    check(shares, f"no share of one CPU said: {lines!r}")
    check(max(shares) <= 100.0, f"a single thread said to spend more than one CPU in probes: {lines!r}")
    check(not any("of each of" in l for l in lines), f"one thread's cost spread over CPUs: {lines!r}")


if __name__ == "__main__":
    sys.exit(itest.run(globals()))
