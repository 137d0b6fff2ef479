#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Integration tests of the launched command's life (`-- COMMAND`): it never
outlives the profile silently. Real processes, checked by pid; none of this
depends on the attach mode, so each test runs once."""
import ctypes
import os
import signal
import subprocess
import sys
import tempfile
import time

import itest
from itest import *  # noqa: F401,F403 (the shared helpers and environment)


def profiler_args(extra, cmd):
    return base_args(["--lib", LIB, "-e", "none"] + list(extra)) + ["--"] + cmd


def gone(pid, within=5.0):
    """True once pid no longer runs: reaped, or a zombie left for init to reap."""
    deadline = time.time() + within
    while True:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        if time.time() >= deadline:
            return False
        time.sleep(0.05)


def stop_line(err, name):
    """The profiler's one line about stopping the command, and the pid it names."""
    lines = [l for l in err.splitlines() if f"stopped {name} (pid " in l]
    check(len(lines) == 1, f"want one line about stopping {name}: {err!r}")
    return lines[0], int(lines[0].split("(pid ")[1].split(")")[0])


def child_of(ppid, comm, within=10.0):
    """The pid of ppid's child named comm, once it has exec'd."""
    deadline = time.time() + within
    while time.time() < deadline:
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            name, rest = stat.split("(", 1)[1].rsplit(")", 1)
            if name == comm and int(rest.split()[1]) == ppid:
                return int(pid)
        time.sleep(0.02)
    raise AssertionError(f"no child {comm} of {ppid} appeared")


@modes("session")
def test_command_duration_stops_it():
    t0 = time.time()
    p = subprocess.run(profiler_args(["-d", "1"], ["sleep", "30"]), capture_output=True, text=True, timeout=60)
    took = time.time() - t0
    check(p.returncode == 124, f"rc {p.returncode}, want 124 as timeout(1): {p.stderr}")
    line, pid = stop_line(p.stderr, "sleep")
    check("with SIGTERM at the end of the profile; it was killed by SIGTERM" in line, line)
    check(took < 1 + 5, f"took {took:.1f} s: -d 1 plus more than the default grace")
    check(gone(pid, 0), f"sleep (pid {pid}) still there")
    check(p.stdout.strip().startswith("{"), f"no summary: {p.stdout!r}")


@modes("session")
def test_command_ignoring_sigterm_killed():
    with tempfile.TemporaryDirectory() as tmp:
        ready = os.path.join(tmp, "ignoring")
        # exec: sh becomes sleep, which keeps ignoring SIGTERM; no grandchild is left behind.
        prof = subprocess.Popen(profiler_args(["--kill-after", "1.5"],
                                              ["sh", "-c", f'trap "" TERM; touch {ready}; exec sleep 30']),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 30
        while not os.path.exists(ready):
            check(time.time() < deadline and prof.poll() is None, "the command did not start")
            time.sleep(0.02)
        t0 = time.time()
        prof.send_signal(signal.SIGINT)
        out, err = prof.communicate(timeout=60)
        took = time.time() - t0
    check(prof.returncode == 130, f"rc {prof.returncode}: {err}")
    line, pid = stop_line(err, "sh")
    check("with SIGKILL, 1.5 s after SIGTERM, at the end of the profile; it was killed by SIGKILL" in line, line)
    check(1.5 <= took < 10, f"took {took:.1f} s after Ctrl-C, want the 1.5 s grace")
    check(gone(pid, 0), f"pid {pid} still there")
    check(out.strip().startswith("{"), f"no summary: {out!r}")


@modes("session")
def test_command_signal_stops_it():
    for sig in (signal.SIGINT, signal.SIGTERM):
        prof = subprocess.Popen(profiler_args([], ["sleep", "30"]), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        pid = child_of(prof.pid, "sleep")
        prof.send_signal(sig)
        out, err = prof.communicate(timeout=60)
        check(prof.returncode == 128 + sig, f"{sig.name}: rc {prof.returncode}: {err}")
        line, named = stop_line(err, "sleep")
        check(named == pid and "it was killed by SIGTERM" in line, f"{sig.name}: {line}")
        check(gone(pid, 0), f"{sig.name}: sleep (pid {pid}) still there")
        check(out.strip().startswith("{"), f"{sig.name}: no summary: {out!r}")


@modes("session")
def test_command_leave_running():
    # Its output elsewhere: left running, it would hold our pipes open.
    p = subprocess.run(profiler_args(["-d", "0.5", "--leave-running"], ["sh", "-c", "exec sleep 30 >/dev/null 2>&1"]),
                       capture_output=True, text=True, timeout=60)
    lines = [l for l in p.stderr.splitlines() if "left sh (pid " in l]
    check(p.returncode == 124 and len(lines) == 1 and "running at the end of the profile" in lines[0],
          f"rc {p.returncode}: {p.stderr}")
    pid = int(lines[0].split("(pid ")[1].split(")")[0])
    try:
        time.sleep(0.3)
        check(not gone(pid, 0), f"the command (pid {pid}) did not outlive the profiler")
    finally:
        os.kill(pid, signal.SIGKILL)
    check(p.stdout.strip().startswith("{"), f"no summary: {p.stdout!r}")


@modes("session")
def test_command_profiler_killed_while_running():
    prof = subprocess.Popen(profiler_args([], ["sleep", "30"]), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    pid = child_of(prof.pid, "sleep")
    prof.kill()
    prof.wait()
    # No time to stop it: the kernel's death signal (SIGTERM) does.
    check(gone(pid), f"sleep (pid {pid}) outlived the SIGKILLed profiler")


# ptrace(2), to hold the profiler at the very fork that makes the command.
PTRACE_TRACEME, PTRACE_CONT, PTRACE_DETACH, PTRACE_SETOPTIONS, PTRACE_GETEVENTMSG = 0, 7, 17, 0x4200, 0x4201
PTRACE_O_TRACEFORK, PTRACE_O_EXITKILL, PTRACE_EVENT_FORK = 0x2, 0x100000, 1
WALL = 0x40000000


@modes("session")
def test_command_held_never_runs_after_sigkill():
    """The profiler is SIGKILLed after forking the command and before letting it exec:
    the command must never run (its marker file never appears) and must not stay."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    with tempfile.TemporaryDirectory() as tmp:
        marker = os.path.join(tmp, "ran")
        prof = subprocess.Popen(profiler_args([], ["touch", marker]),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                preexec_fn=lambda: libc.ptrace(PTRACE_TRACEME, 0, None, None))
        try:
            _, status = os.waitpid(prof.pid, 0)         # stopped at its exec
            check(os.WIFSTOPPED(status), f"profiler not stopped at exec: {status:#x}")
            libc.ptrace(PTRACE_SETOPTIONS, prof.pid, None, ctypes.c_void_p(PTRACE_O_TRACEFORK | PTRACE_O_EXITKILL))
            child, sig = None, 0
            while child is None:
                check(libc.ptrace(PTRACE_CONT, prof.pid, None, ctypes.c_void_p(sig)) == 0, "PTRACE_CONT failed")
                _, status = os.waitpid(prof.pid, WALL)
                check(os.WIFSTOPPED(status), f"profiler ended before it forked: {status:#x}")
                sig = 0
                if status >> 8 == signal.SIGTRAP | (PTRACE_EVENT_FORK << 8):
                    msg = ctypes.c_ulong()
                    libc.ptrace(PTRACE_GETEVENTMSG, prof.pid, None, ctypes.byref(msg))
                    # A new child starts traced and stopped: let it go, untraced.
                    os.waitpid(msg.value, WALL)
                    check(libc.ptrace(PTRACE_DETACH, msg.value, None, None) == 0, "cannot detach a child")
                    # Not the IFUNC helper: the command is forked once the BPF programs are loaded.
                    if prog_ids_of(prof.pid):
                        child = msg.value
                elif os.WSTOPSIG(status) != signal.SIGTRAP:
                    sig = os.WSTOPSIG(status)   # the profiler's own signal: deliver it
            time.sleep(0.3)
            check(os.readlink(f"/proc/{child}/exe") == os.path.realpath(DLPROF), "the command ran unreleased")
        finally:
            prof.kill()
            os.waitpid(prof.pid, 0)
            prof.returncode = -9
        check(gone(child), f"the held command (pid {child}) outlived the profiler")
        time.sleep(0.2)
        check(not os.path.exists(marker), "the held command ran after the profiler was killed")


if __name__ == "__main__":
    sys.exit(itest.run(globals()))
