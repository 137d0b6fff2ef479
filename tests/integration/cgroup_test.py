#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Targets: several -p processes with their descendants; by cgroup: --cgroup (a cgroup v2 subtree, processes that enter it
later included) and --container (a container's id prefix, found in
/proc/PID/cgroup). The tests make their own cgroups, named as podman names
its containers' where a container is needed, and move the test driver into
them; a driver outside calls the same library meanwhile and must not count.
Runner and helpers: itest.py."""
import contextlib
import os
import secrets
import shutil
import subprocess
import sys
import tempfile

import itest
from itest import *  # noqa: F401,F403 (the shared helpers and environment)
from containers import PODMAN_RUN, cgroup2_mount, driver_image, move_into, scratch_cgroup


def profile_cgroup_targets(target_args, inside_cgroup, move_before_attach=True):
    """Two waiting drivers, one moved into inside_cgroup (before or after the profiler
    attached); both call dlt_add; the profile covers target_args only."""
    inside = start_waiting_driver(["count", "30000"])
    outside = start_waiting_driver(["count", "20000"])
    try:
        if move_before_attach:
            move_into(inside_cgroup, inside.pid)
        prof = start_profiler(["--lib", LIB, "--func", "dlt_add"] + target_args)
        if not move_before_attach:
            move_into(inside_cgroup, inside.pid)
        drive(inside)
        drive(outside)
        return stop_profiler(prof)
    finally:
        finish(inside)
        finish(outside)


@modes("session", "multi")
def test_cgroup_counts_only_its_processes():
    with scratch_cgroup("app") as cg:
        rel = os.path.relpath(cg, cgroup2_mount())
        for spec in (cg, rel):
            doc = profile_cgroup_targets(["--cgroup", spec], cg)
            check(calls_of(doc, "dlt_add") == 30000, f"--cgroup {spec}: {calls_of(doc, 'dlt_add')} calls, want 30000")


@modes("session", "multi")
def test_cgroup_subtree_and_later_entrants():
    """A process that enters a child cgroup of the target after the profiler started counts."""
    with scratch_cgroup("svc", "worker") as cg:
        doc = profile_cgroup_targets(["--cgroup", os.path.dirname(cg)], cg, move_before_attach=False)
        check(calls_of(doc, "dlt_add") == 30000, f"subtree, later entrant: {calls_of(doc, 'dlt_add')} calls")


@modes("session", "multi")
def test_container_by_id_prefix():
    cid = secrets.token_hex(32)
    # podman's systemd-driver scope name; its cgroupfs name (libpod-<id>) and docker's are unit-tested.
    with scratch_cgroup("machine.slice", f"libpod-{cid}.scope") as cg:
        doc = profile_cgroup_targets(["--container", cid[:12]], cg)
        check(calls_of(doc, "dlt_add") == 30000, f"--container {cid[:12]}: {calls_of(doc, 'dlt_add')} calls")


@modes("session")
def test_cgroup_target_errors():
    mnt = cgroup2_mount()
    expect_error([DLPROF, "--lib", LIB, "--cgroup", "no-such-cgroup-dlprof", "-d", "0.1"],
                 "is not a cgroup v2 directory")
    expect_error([DLPROF, "--lib", LIB, "--container", "0123456789ab", "-d", "0.1"],
                 "no running process is in a container")
    expect_error([DLPROF, "--lib", LIB, "--container", "xyz", "-d", "0.1"], "hex digits")
    expect_error([DLPROF, "--lib", LIB, "--cgroup", mnt, "-p", "1"], "exclude -p")
    a, b = "abcd" + secrets.token_hex(30), "abcd" + secrets.token_hex(30)
    with scratch_cgroup(f"docker-{a}.scope") as ca, contextlib.ExitStack() as stack:
        cb = stack.enter_context(scratch_cgroup(f"docker-{b}.scope"))
        procs = [subprocess.Popen(["sleep", "30"]) for _ in range(2)]
        try:
            move_into(ca, procs[0].pid)
            move_into(cb, procs[1].pid)
            expect_error([DLPROF, "--lib", LIB, "--container", "abcd", "-d", "0.1"], "several containers")
        finally:
            for p in procs:
                p.kill()
                p.wait()


@modes("session", "multi")
def test_podman_container_by_id_prefix():
    """A real two-process podman container sharing the host's library file (bind mount): the
    driver forks once the profiler is attached, parent and child call 15,000 times each.
    --container counts the container's calls exactly, not those of a host process calling
    the same library; --by process splits them between the two processes."""
    check(shutil.which("podman") and shutil.which("runc"), "podman and runc are not installed (scripts/deps)")
    with driver_image() as image, tempfile.TemporaryDirectory() as tmp:
        cidfile = os.path.join(tmp, "cid")
        inside = subprocess.Popen(PODMAN_RUN + ["--cidfile", cidfile, "-v", f"{LIB}:/app/{os.path.basename(LIB)}:ro",
                                                "-e", "LD_LIBRARY_PATH=/app", image,
                                                "/app/dltest_driver", "--wait", "fork", "15000"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        outside = start_waiting_driver(["count", "20000"])
        try:
            line = inside.stdout.readline()
            check(line.startswith("ready "), f"the container's driver did not start: {line!r}")
            cid = open(cidfile).read().strip()
            prof = start_profiler(["--lib", LIB, "--func", "dlt_add", "--container", cid[:12], "--by", "process"])
            drive(inside)
            drive(outside)
            doc = stop_profiler(prof)
        finally:
            finish(inside)
            finish(outside)
    rows = [f for f in doc["functions"] if f["name"] == "dlt_add"]
    per_pid = {f["pid"]: f["calls"] for f in rows}
    check(sum(per_pid.values()) == 30000, f"--container {cid[:12]}: {per_pid} calls, want 30000 in all")
    check(len(per_pid) == 2 and set(per_pid.values()) == {15000},
          f"--container {cid[:12]} --by process: {per_pid}, want two processes of 15000 calls")


@modes("session", "multi")
def test_pids_several_with_descendants():
    """-p takes several processes and follows their descendants: a child already running
    when the profile starts (bash's) and one forked later (the driver's fork mode) count,
    a process outside does not."""
    a = start_waiting_driver(["count", "10000"])
    b = start_waiting_driver(["count", "20000"])
    forker = start_waiting_driver(["fork", "1000"])
    outside = start_waiting_driver(["count", "5000"])
    # bash forks the driver (no exec: a command follows it), which inherits the pipes.
    parent = subprocess.Popen(["bash", "-c", f"{DRIVER} --wait count 7000; true"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    procs = [a, b, forker, outside, parent]
    try:
        line = parent.stdout.readline()
        check(line.startswith("ready "), f"bash's driver did not start: {line!r}")
        prof = start_profiler(["--lib", LIB, "--func", "dlt_add", "-p", f"{a.pid},{b.pid}",
                               "-p", str(parent.pid), "-p", str(forker.pid)])
        for p in procs:
            drive(p)
        doc = stop_profiler(prof)
    finally:
        for p in procs:
            finish(p)
    want = 10000 + 20000 + 7000 + 2 * 1000
    check(calls_of(doc, "dlt_add") == want, f"-p with descendants: {calls_of(doc, 'dlt_add')} calls, want {want}")


if __name__ == "__main__":
    sys.exit(itest.run(globals()))
