#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Every copy of a library: a system-wide profile by name probes the host's file
and each container's own copy (another inode, another mount namespace), those
running at the start and those started later; /proc/PID/root paths and -p's
absolute paths name the file in that namespace; a copy no process maps any more
is detached.

The library is a copy of the test library under a name unique to the test run
(libdlns<random>.so), so a system-wide profile probes nothing of anyone else's.
The drivers load it with LD_PRELOAD, so their dlt_add calls bind to it, and they
load it before they say "ready": every call they make comes after the mapping.
Containers are real podman containers (runc) of an image assembled offline from
host files. Runner and helpers: itest.py."""
import contextlib
import os
import re
import json
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import itest
from itest import *  # noqa: F401,F403 (the shared helpers and environment)
from containers import (PODMAN_RUN, cgroup2_mount, driver_files, image_from_files, remove_cgroup_everywhere,
                        require_podman)

# A sanitized driver (the ASan build) refuses a preloaded library ahead of its runtime unless told.
PRELOAD_UNDER_ASAN = "verify_asan_link_order=0"

# A copy appears in the kernel's mmap return, is looked up in /proc/PID/maps and attached: the promise is 1 s.
DISCOVERY_S = 1.0

# The programs of bpf/discover.bpf.c that hook mappings, per DLPROF_DISCOVERY_HOOK value (the perf records need none).
HOOK_PROGS = {"tracepoints": {"discover_map_pages", "discover_fault"}, "fentry": {"discover_mmap"}, "perf": set()}


@contextlib.contextmanager
def discovery_hook(hook):
    """Discovery starts its choice of hook at hook (user/probe/copy_discovery.c): the fallbacks run here too."""
    old = os.environ.get("DLPROF_DISCOVERY_HOOK")
    os.environ["DLPROF_DISCOVERY_HOOK"] = hook
    try:
        yield
    finally:
        if old is None:
            del os.environ["DLPROF_DISCOVERY_HOOK"]
        else:
            os.environ["DLPROF_DISCOVERY_HOOK"] = old


@contextlib.contextmanager
def no_image_stores():
    """The image stores left unwalked (user/probe/copy_discovery.c): a container's copy is then
    found by the discovery hook at its mapping, which is what these tests try."""
    old = os.environ.get("DLPROF_IMAGE_STORES")
    os.environ["DLPROF_IMAGE_STORES"] = "off"
    try:
        yield
    finally:
        if old is None:
            del os.environ["DLPROF_IMAGE_STORES"]
        else:
            os.environ["DLPROF_IMAGE_STORES"] = old


def mapping_hook_of(pid):
    """Which hook the profiler pid's discovery uses, by the programs it holds ("perf": none of them)."""
    names = set()
    for prog_id in prog_ids_of(pid):
        out = subprocess.run(["bpftool", "-j", "prog", "show", "id", str(prog_id)], capture_output=True, text=True)
        if out.returncode == 0:
            names.add(json.loads(out.stdout).get("name", ""))
    held = names & set().union(*HOOK_PROGS.values())
    hook = [h for h, progs in HOOK_PROGS.items() if progs == held]
    check(hook, f"the profiler holds {held} of the discovery's mapping programs: no hook's set")
    return hook[0]


@contextlib.contextmanager
def lib_world():
    """The uniquely named library on the host (a directory of its own) and an image holding its own copy."""
    name = f"libdlns{secrets.token_hex(4)}.so"
    with tempfile.TemporaryDirectory() as tmp:
        host_dir = os.path.join(tmp, "host")
        os.makedirs(host_dir)
        shutil.copy(LIB, os.path.join(host_dir, name))
        files = driver_files() + [(LIB, "app/" + os.path.basename(LIB)), (LIB, "app/" + name)]
        with image_from_files("ns", files) as tag:
            yield name, host_dir, tag


def host_driver(host_dir, name, calls):
    env = dict(os.environ, LD_PRELOAD=os.path.join(host_dir, name), ASAN_OPTIONS=PRELOAD_UNDER_ASAN)
    d = subprocess.Popen([DRIVER, "--wait", "count", str(calls)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True, env=env)
    line = d.stdout.readline()
    check(line.startswith("ready "), f"host driver did not start: {line!r}")
    return d


def container_driver(tag, name, calls, extra=()):
    """A container whose driver calls its own copy; returns (process, the driver's host pid)."""
    c = subprocess.Popen(PODMAN_RUN + list(extra) + ["-e", "LD_LIBRARY_PATH=/app", "-e", f"LD_PRELOAD=/app/{name}",
                                       "-e", f"ASAN_OPTIONS={PRELOAD_UNDER_ASAN}", tag,
                                       "/app/dltest_driver", "--wait", "count", str(calls)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = c.stdout.readline()
    check(line.startswith("ready "), f"the container's driver did not start: {line!r}")
    return c, host_pid_of_container_driver(name)


def host_pid_of_container_driver(name):
    """The driver's pid as the host sees it: the process that maps /app/NAME."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            if f"/app/{name}" in open(f"/proc/{pid}/maps").read():
                return int(pid)
    raise AssertionError(f"no process maps /app/{name}")


def finish_container(c):
    if c.poll() is not None:
        return
    with contextlib.suppress(BrokenPipeError, OSError):
        c.stdin.write("bye\n")
        c.stdin.flush()
    try:
        c.wait(timeout=60)
    except subprocess.TimeoutExpired:
        c.kill()
        c.wait()


class Profiler:
    """The profiler in the background, its stderr read line by line on a thread (the copies' notes)."""

    def __init__(self, args, env=None):
        self.p = subprocess.Popen(base_args(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env=env)
        self.lines = []
        self.cond = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.wait_for("profiling", 60)

    def _read(self):
        for line in self.p.stderr:
            with self.cond:
                self.lines.append((line, time.monotonic()))
                self.cond.notify_all()
        with self.cond:
            self.lines.append((None, time.monotonic()))
            self.cond.notify_all()

    def wait_for(self, needle, timeout):
        """The first stderr line holding needle, and when it was read."""
        return self.wait_for_nth(needle, 1, timeout)

    def wait_for_nth(self, needle, n, timeout, starts=("",)):
        """The n-th stderr line holding needle after one of starts (the profiler's prefix aside),
        and when it was read."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                hits = [(l, t) for l, t in self.lines if l and needle in l and
                        l.removeprefix("dlprof-bpf: ").startswith(starts)]
                if len(hits) >= n:
                    return hits[n - 1]
                left = deadline - time.monotonic()
                if left <= 0 or (self.lines and self.lines[-1][0] is None):
                    break
                self.cond.wait(left)
            seen = "".join(l for l, _ in self.lines if l)
        raise AssertionError(f"profiler never said {needle!r} {n} times: {seen!r}")

    def stop(self):
        self.p.send_signal(signal.SIGINT)
        out = self.p.stdout.read()
        self.p.wait(timeout=60)
        self.reader.join(timeout=10)
        err = "".join(l for l, _ in self.lines if l)
        check(self.p.returncode == 0, f"profiler exit {self.p.returncode}: {err}")
        return json.loads(out)


def profiler_env(host_dir):
    # The name resolves on the host through the profiler's own LD_LIBRARY_PATH, as for any program.
    return dict(os.environ, LD_LIBRARY_PATH=host_dir)


def test_own_copy_in_container_and_host():
    """A container with its own copy (another inode) and a host process, one
    profile by name: both counted exactly, the copy named with its namespace."""
    require_podman()
    with lib_world() as (name, host_dir, tag):
        c, cpid = container_driver(tag, name, 30000)
        h = host_driver(host_dir, name, 20000)
        try:
            prof = Profiler(["--lib", name, "--func", "dlt_add"], env=profiler_env(host_dir))
            line, _ = prof.wait_for(f"copy /app/{name}", 5)
            check(f"namespace of pid" in line, f"the copy's note names no namespace: {line!r}")
            drive(c)
            drive(h)
            doc = prof.stop()
        finally:
            finish_container(c)
            finish(h)
    check(calls_of(doc, "dlt_add") == 50000, f"host + own copy: {calls_of(doc, 'dlt_add')} calls, want 50000")
    copies = {c["path"]: c for c in doc.get("copies", [])}
    mine = copies.get(f"/app/{name}")
    check(len(copies) == 2 and mine, f"the summary's copies: {copies}")
    check(mine["origin"] == "start" and mine["namespace_pid"] > 0 and mine["functions"] == 1,
          f"the container's copy: {mine}")
    host = [c for p, c in copies.items() if p != f"/app/{name}"][0]
    check(host["origin"] == "primary" and (host["dev"], host["inode"]) != (mine["dev"], mine["inode"]),
          f"the host's file and the container's copy are one inode: {copies}")


def test_containers_of_one_image_share_a_copy():
    """Containers of one image see one layer file through overlays of their own
    (another device each in their maps): one copy, attached once, each call
    counted once. The third container's faults find the file reported already
    (no event of its own): when the first two exit, the copy stays held by
    it, and turns idle (attached, its file remains) when it exits too."""
    require_podman()
    with lib_world() as (name, host_dir, tag):
        a, _ = container_driver(tag, name, 30000)
        prof = Profiler(["--lib", name, "--func", "dlt_add"], env=profiler_env(host_dir))
        b = c = None
        try:
            b, _ = container_driver(tag, name, 10000)
            c, _ = container_driver(tag, name, 5000)
            drive(a)
            drive(b)
            finish_container(a)
            finish_container(b)
            time.sleep(DISCOVERY_S)
            check(not any(l and ("detached copy" in l or "idle copy" in l) for l, _ in prof.lines),
                  f"let go while a container still maps it: {prof.lines}")
            drive(c)
            finish_container(c)
            prof.wait_for(f"idle copy /app/{name}", 10)
            doc = prof.stop()
        finally:
            for x in (a, b, c):
                if x:
                    finish_container(x)
    check(calls_of(doc, "dlt_add") == 45000, f"three containers, one image: {calls_of(doc, 'dlt_add')} calls, want 45000")
    copies = [x for x in doc.get("copies", []) if x["path"] == f"/app/{name}"]
    check(len(copies) == 1, f"the image's copy is not one copy: {doc.get('copies')}")


def test_containers_of_one_image_one_after_another():
    """Pods restart, Deployments scale, CronJobs start a container a minute: containers of
    one image, one after another, then two at once, each started after the previous ones
    exited. The image's copy turns idle with each last container (attached: its layer
    file remains) and is held again by the next, every call of every container counted
    (copies_test.py has them call from their first instruction)."""
    require_podman()
    with lib_world() as (name, host_dir, tag):
        prof = Profiler(["--lib", name, "--func", "dlt_add"], env=profiler_env(host_dir))
        running = []

        def attached(n):
            """The n-th note that a container maps the probed copy (discovered, then in use again)."""
            prof.wait_for_nth(f"copy /app/{name} ", n, 10, ("discovered", "copy /app/"))

        try:
            for n, calls in enumerate((3000, 4000), 1):
                c, _ = container_driver(tag, name, calls)
                running.append(c)
                attached(n)
                drive(c)
                finish_container(c)
                prof.wait_for_nth(f"idle copy /app/{name}", n, 10)
            a, _ = container_driver(tag, name, 5000)
            running.append(a)
            attached(3)
            b, _ = container_driver(tag, name, 6000)
            running.append(b)
            drive(a)
            drive(b)
            finish_container(a)
            finish_container(b)
            doc = prof.stop()
        finally:
            for x in running:
                finish_container(x)
    # Copies only: the probes' cost may be warned of too, on a slow machine (dlt_add is single-stepped).
    warnings = [l for l, _ in prof.lines if l and "warning" in l and "copy" in l]
    check(not warnings, f"copies left unprobed: {warnings}")
    check(calls_of(doc, "dlt_add") == 18000, f"four containers of one image: {calls_of(doc, 'dlt_add')} calls, want 18000")
    mine = [x for x in doc.get("copies", []) if x["path"] == f"/app/{name}"]
    check(len(mine) == 1 and mine[0]["attach_failures"] == 0, f"the summary's copies: {doc.get('copies')}")


@modes("session")
def test_agent_containers_of_one_image_one_after_another():
    """The agent on a node where containers of one image (their own copy of the library) come
    one after another, then two at once: a series per container with each one's exact count,
    within the agent's refresh, and no copy left unprobed (dlprof_agent_copy_attach_failures_total)."""
    from agent_test import Agent, calls_per_container, samples  # the agent's runner, beside this file's containers
    require_podman()

    def series(text):
        return calls_per_container(text, "dlt_add")

    with lib_world() as (name, host_dir, tag), \
            Agent(["--lib", name, "--func", "dlt_add", "--max-overhead", "off", "--series-grace", "300"],
                  env=profiler_env(host_dir)) as a:
        a.wait_ready()
        want, running = {}, []
        try:
            for calls in (3000, 4000, (5000, 6000)):
                batch = calls if isinstance(calls, tuple) else (calls,)
                cidfiles = [os.path.join(host_dir, f"cid-{secrets.token_hex(4)}") for _ in batch]
                started = [container_driver(tag, name, n, ["--cidfile", f]) for n, f in zip(batch, cidfiles)]
                running += [c for c, _ in started]
                notes = a.text().count(f"copy /app/{name} ")
                deadline = time.time() + 10
                while a.text().count(f"copy /app/{name} ") == notes and "attached" not in a.text()[-300:] \
                        and time.time() < deadline:
                    time.sleep(0.05)
                time.sleep(DISCOVERY_S)
                for (c, _), n, f in zip(started, batch, cidfiles):
                    want[open(f).read().strip()] = n
                    drive(c)
                for c, _ in started:
                    finish_container(c)
            deadline = time.time() + 15
            while series(a.metrics()) != want and time.time() < deadline:
                time.sleep(0.2)
            text = a.metrics()
        finally:
            for c in running:
                finish_container(c)
        check(series(text) == want, f"series per container {series(text)}, want {want}: {a.text()[-1500:]}")
        check(sum(samples(text, "dlprof_agent_copy_attach_failures_total").values()) == 0,
              f"copies left unprobed: {a.text()[-1500:]}")
        check(a.stop() == 0, f"exit {a.p.returncode}")


def test_container_started_later_then_detached():
    """A container started after the profiler (its image's stores not walked): its copy is
    discovered from the mapping within DISCOVERY_S, all its calls count; once it exits the
    copy turns idle (its layer file remains), and once its image is removed (the file gone)
    it is detached."""
    require_podman()
    with no_image_stores(), lib_world() as (name, host_dir, tag):
        prof = Profiler(["--lib", name, "--func", "dlt_add"], env=profiler_env(host_dir))
        c = None
        try:
            t0 = time.monotonic()
            c, cpid = container_driver(tag, name, 30000)
            t_ready = time.monotonic()
            line, t_seen = prof.wait_for(f"discovered copy /app/{name}", 10)
            # The copy is mapped before the driver says ready; the note comes once the probes are in.
            check(t_seen - t_ready < DISCOVERY_S,
                  f"copy attached {t_seen - t_ready:.3f} s after the driver was ready (container start {t_ready - t0:.1f} s)")
            drive(c)
            finish_container(c)
            t_exit = time.monotonic()
            line, t_idle = prof.wait_for(f"idle copy /app/{name}", 10)
            check(t_idle - t_exit < DISCOVERY_S, f"idle {t_idle - t_exit:.3f} s after the container exited")
            subprocess.run(["podman", "rmi", "-f", tag], check=True, capture_output=True)
            t_rmi = time.monotonic()
            line, t_gone = prof.wait_for(f"detached copy /app/{name}", 10)
            check("its file is gone" in line and t_gone - t_rmi < 2 * DISCOVERY_S + 1,
                  f"detached {t_gone - t_rmi:.3f} s after the image was removed: {line!r}")
            doc = prof.stop()
        finally:
            if c:
                finish_container(c)
    check(calls_of(doc, "dlt_add") == 30000, f"later container: {calls_of(doc, 'dlt_add')} calls, want 30000")
    mine = [c for c in doc.get("copies", []) if c["path"] == f"/app/{name}"]
    check(len(mine) == 1 and mine[0]["origin"] == "discovered" and mine[0]["detached"],
          f"the summary's copies: {doc.get('copies')}")
    # From the kernel's first sight of the file (its first page fault) to the probes in.
    check(0 < mine[0]["discovery_ms"] < DISCOVERY_S * 1e3, f"discovered after {mine[0]['discovery_ms']} ms")


def copy_at_another_path(hook=None):
    """A host process started after the profiler maps a copy of the library at another
    path (another inode): discovered, its calls counted exactly, idle when it exits,
    detached when the file is removed. Returns the hook discovery used."""
    name = f"libdlns{secrets.token_hex(4)}.so"
    with tempfile.TemporaryDirectory() as tmp, (discovery_hook(hook) if hook else contextlib.nullcontext()):
        host_dir, other = os.path.join(tmp, "host"), os.path.join(tmp, "other")
        for d in (host_dir, other):
            os.makedirs(d)
            shutil.copy(LIB, os.path.join(d, name))
        prof = Profiler(["--lib", name, "--func", "dlt_add"], env=profiler_env(host_dir))
        h = None
        try:
            used = mapping_hook_of(prof.p.pid)
            h = host_driver(other, name, 30000)
            t_ready = time.monotonic()
            _, t_seen = prof.wait_for(f"discovered copy {other}/{name}", 10)
            check(t_seen - t_ready < DISCOVERY_S, f"copy attached {t_seen - t_ready:.3f} s after the driver was ready")
            drive(h)
            finish(h)
            h = None
            prof.wait_for(f"idle copy {other}/{name}", 10)
            os.unlink(os.path.join(other, name))
            line, _ = prof.wait_for(f"detached copy {other}/{name}", 10)
            check("its file is gone" in line, f"detached for another reason: {line!r}")
            doc = prof.stop()
        finally:
            if h:
                h.kill()
                h.wait()
            if prof.p.poll() is None:
                prof.p.kill()
    check(calls_of(doc, "dlt_add") == 30000, f"a copy at another path: {calls_of(doc, 'dlt_add')} calls, want 30000")
    mine = [c for c in doc.get("copies", []) if c["path"] == f"{other}/{name}"]
    check(len(mine) == 1 and mine[0]["origin"] == "discovered" and mine[0]["detached"],
          f"the summary's copies: {doc.get('copies')}")
    check(0 < mine[0]["discovery_ms"] < DISCOVERY_S * 1e3, f"discovered after {mine[0]['discovery_ms']} ms")
    check(doc.get("discovery_lost") == 0, f"discovery events lost: {doc.get('discovery_lost')}")
    print(f"discovery's hook: {used}; discovered {mine[0]['discovery_ms']:.1f} ms after the mapping")
    return used


def test_copy_at_another_path_found_later():
    """No container needed: a copy of the library at another path, mapped by a process
    started after the profiler, with the best hook this kernel has."""
    copy_at_another_path()


@modes("session")
def test_copy_at_another_path_found_by_fentry():
    """The same with the fault tracepoints set aside: fentry on uprobe_mmap where the kernel
    has BPF trampolines (6.1 has no fault tracepoints), else the perf records."""
    used = copy_at_another_path("fentry")
    check(used in ("fentry", "perf"), f"DLPROF_DISCOVERY_HOOK=fentry used {used}")


@modes("session")
def test_copy_at_another_path_found_by_perf_records():
    """The same with no BPF program on mappings: the kernel's perf mmap records."""
    used = copy_at_another_path("perf")
    check(used == "perf", f"DLPROF_DISCOVERY_HOOK=perf used {used}")


@modes("session")
def test_container_started_later_found_by_fentry():
    """A container started later, with the fault tracepoints set aside: under an overlay the
    mapping names the layer's file, as the faults do."""
    with discovery_hook("fentry"):
        test_container_started_later_then_detached()


@modes("session")
def test_container_started_later_found_by_perf_records():
    """A container started later, found through the perf mmap records: their device and
    inode are the layer's file, as the faults' are."""
    with discovery_hook("perf"):
        test_container_started_later_then_detached()


@modes("session", "multi")
def test_cgroup_target_finds_only_its_copies():
    """--cgroup: a container started later in the target cgroup has its copy
    discovered and counted; a host process with a copy of its own is outside:
    its copy is not attached at all (it would pay the uprobe for nothing)."""
    require_podman()
    rel = f"/dlprof-ns-{os.getpid()}"
    parent = cgroup2_mount() + rel
    os.makedirs(parent)
    c = h = None
    try:
        with lib_world() as (name, host_dir, tag), tempfile.TemporaryDirectory() as other:
            shutil.copy(LIB, os.path.join(other, name))
            h = host_driver(other, name, 20000)
            prof = Profiler(["--lib", name, "--func", "dlt_add", "--cgroup", parent], env=profiler_env(host_dir))
            # podman makes the container's cgroup below ours (--cgroup-parent takes a cgroup path).
            c, _ = container_driver(tag, name, 30000, extra=["--cgroup-parent", rel])
            prof.wait_for(f"discovered copy /app/{name}", 10)
            drive(c)
            drive(h)
            doc = prof.stop()
    finally:
        if c:
            finish_container(c)
        if h:
            h.kill()
            h.wait()
        remove_cgroup_everywhere(rel)
    check(calls_of(doc, "dlt_add") == 30000, f"--cgroup, later container: {calls_of(doc, 'dlt_add')} calls, want 30000")
    paths = [x["path"] for x in doc.get("copies", [])]
    check(not any(p.startswith(other) for p in paths), f"the untargeted process's copy was attached: {paths}")


@modes("session")
def test_cgroup_target_found_by_perf_records():
    """--cgroup with the perf mmap records: the profiler, not a BPF program, tells the
    target's mappings from the others'."""
    with discovery_hook("perf"):
        test_cgroup_target_finds_only_its_copies()


def test_proc_root_path_is_the_containers_file():
    """--lib /proc/PID/root/app/NAME is the container's copy, not the host's file of
    the same name: the container's calls count, the host process's do not."""
    require_podman()
    with lib_world() as (name, host_dir, tag):
        c, cpid = container_driver(tag, name, 30000)
        h = host_driver(host_dir, name, 20000)
        try:
            prof = Profiler(["--lib", f"/proc/{cpid}/root/app/{name}", "--func", "dlt_add"])
            drive(c)
            drive(h)
            doc = prof.stop()
        finally:
            finish_container(c)
            finish(h)
    check(calls_of(doc, "dlt_add") == 30000, f"/proc/PID/root path: {calls_of(doc, 'dlt_add')} calls, want 30000")


def test_pid_absolute_path_in_its_namespace():
    """-p PID --lib /app/NAME: the path as the container sees it."""
    require_podman()
    with lib_world() as (name, host_dir, tag):
        c, cpid = container_driver(tag, name, 30000)
        try:
            prof = start_profiler(["--lib", f"/app/{name}", "--func", "dlt_add", "-p", str(cpid)])
            drive(c)
            doc = stop_profiler(prof)
        finally:
            finish_container(c)
    check(calls_of(doc, "dlt_add") == 30000, f"-p with /app path: {calls_of(doc, 'dlt_add')} calls, want 30000")


@modes("session")
def test_pid_unmapped_file_warns():
    """A file the target does not map is still probed (it may dlopen it), with one warning."""
    d = start_waiting_driver(["count", "100"])
    try:
        prof = subprocess.Popen(base_args(["--lib", LATE_LIB, "-p", str(d.pid)]), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        seen = []
        while True:
            line = prof.stderr.readline()
            seen.append(line)
            if not line or "profiling" in line:
                break
        drive(d)
        stop_profiler(prof)
    finally:
        finish(d)
    warn = [l for l in seen if "does not map" in l]
    check(len(warn) == 1 and os.path.basename(LATE_LIB) in warn[0], f"no warning for the unmapped file: {seen!r}")


if __name__ == "__main__":
    sys.exit(itest.run(globals()))
