#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""A -p target that goes away: during a classic attach, and with its pid
taken at once by a new process.

A target that exits while thousands of classic probes are attached stops
the attach at once (every probe made is one grace period to remove), is
named as the reason with exit status 3, and the probes made are removed
before the profiler exits. A new process that gets the exited target's pid
is not the target: none of its calls count.
"""
import os
import subprocess
import sys
import tempfile
import time

import itest
from itest import check, modes

EXIT_TARGET_GONE = 3
BIG_FUNCS = 3000

# Loads the big library, then exits the moment any of its code changes in
# its own mapping: the kernel writes each uprobe's int3 into the process as
# the probe is attached, so it exits during the attach, after the first.
WATCHER = """
import ctypes, os, sys, time
lib = ctypes.CDLL(sys.argv[1])
addrs = [ctypes.cast(getattr(lib, f"big_{i}"), ctypes.c_void_p).value for i in range(int(sys.argv[2]))]
lo, hi = min(addrs), max(addrs) + 64
before = ctypes.string_at(lo, hi - lo)
print("ready", flush=True)
while ctypes.string_at(lo, hi - lo) == before:
    time.sleep(0.0002)
os._exit(0)
"""


def build_big_library(tmp):
    src, lib = os.path.join(tmp, "big.c"), os.path.join(tmp, "libbig.so")
    with open(src, "w") as f:
        for i in range(BIG_FUNCS):
            f.write(f"int big_{i}(int x) {{ return x * {i + 1} + 1; }}\n")
    subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", lib, src], check=True)
    return lib


@modes("classic")
def test_exit_during_classic_attach():
    with tempfile.TemporaryDirectory() as tmp:
        lib = build_big_library(tmp)
        d = subprocess.Popen([sys.executable, "-c", WATCHER, lib, str(BIG_FUNCS)], stdout=subprocess.PIPE, text=True)
        try:
            check(d.stdout.readline().strip() == "ready", "watcher did not start")
            t0 = time.monotonic()
            p = subprocess.run(itest.base_args(["--lib", lib, "-p", str(d.pid), "-e", "none"]),
                               capture_output=True, text=True, timeout=600)
            took = time.monotonic() - t0
        finally:
            d.kill()
            d.wait()
    err = p.stderr
    print(f"figures: rc {p.returncode} in {took:.1f} s: {err.strip()}", flush=True)
    check(p.returncode == EXIT_TARGET_GONE, f"exit status {p.returncode}, not {EXIT_TARGET_GONE}: {err}")
    said = f"target process {d.pid} exited during the attach, after "
    check(said in err, f"the exit is not named: {err}")
    check("cannot attach" not in err and "No such file" not in err, f"a wrong cause is named: {err}")
    done = int(err.split(said)[1].split(" of ")[0].replace(",", ""))
    # The watcher exits within milliseconds of the first probe: a tenth of the attach is plenty.
    check(done < BIG_FUNCS // 10, f"the attach went on after the target exited: {done} of {BIG_FUNCS}")
    # The probes made were removed before the profiler exited, not left to a background closer.
    check("stopped waiting" not in err, f"the detach was left behind: {err}")
    check("summary follows" not in err, f"a summary is promised for a target that never ran one: {err}")
    check(p.stdout.strip() == "", f"a profile was printed for a target that never ran one: {p.stdout!r}")


def reuse_pid(pid, argv, tries=50):
    """Start argv as process pid (just freed), through the pid allocator's last pid; None if others kept
    taking it first."""
    for _ in range(tries):
        with open("/proc/sys/kernel/ns_last_pid", "w") as f:
            f.write(str(pid - 1))
        c = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if c.pid == pid:
            return c
        c.wait()
    return None


def test_reused_pid_is_not_the_target():
    if not os.access("/proc/sys/kernel/ns_last_pid", os.W_OK):
        raise itest.Skip("/proc/sys/kernel/ns_last_pid is not writable here: a pid cannot be handed out again")
    a = itest.start_waiting_driver(["count", "1000"])
    b = itest.start_waiting_driver(["count", "1000"])
    try:
        prof = itest.start_profiler(["--lib", itest.LIB, "-p", f"{a.pid},{b.pid}"])
        itest.drive(a)
        itest.finish(a)
        # A new process with the exited target's pid, at once, making calls of its own.
        c = reuse_pid(a.pid, [itest.DRIVER, "count", "700"])
        check(c is not None, f"pid {a.pid} could not be handed to a new process")
        check(c.wait(timeout=60) == 0, "the new process failed")
        itest.drive(b)
        doc = itest.stop_profiler(prof)
    finally:
        itest.finish(b)
    calls = itest.calls_of(doc, "dlt_add")
    check(calls == 2000, f"dlt_add: {calls} calls, not the targets' 2000 (the pid's new process made 700)")


if __name__ == "__main__":
    sys.exit(itest.run(globals()))
