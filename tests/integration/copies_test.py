#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Which copies (inodes) of a library hold probes, and when: a restarted container's
copy stays attached while its file remains (the kernel writes the breakpoints into each
new mapping before the process runs), so every container of an image is counted from
its first call; an idle copy is detached once its file is gone. The library is the test
library under a name unique to the run (namespace_test.lib_world), in an image of its
own. Runner and helpers: itest.py."""
import json
import os
import secrets
import subprocess
import sys
import time

import itest
from itest import *  # noqa: F401,F403 (the shared helpers and environment)
import shutil
import tempfile

from containers import PODMAN_RUN, driver_files, image_from_files, require_podman
from namespace_test import (PRELOAD_UNDER_ASAN, Profiler, container_driver, finish_container, host_driver,
                            lib_world, no_image_stores, profiler_env)


def run_container(tag, lib, calls, name, extra=()):
    """A container whose driver calls its copy of lib calls times from its first instruction on
    (no wait for anything), then exits; returns the finished process."""
    return subprocess.run(PODMAN_RUN + list(extra) + ["--name", name, "-e", "LD_LIBRARY_PATH=/app", "-e", f"LD_PRELOAD=/app/{lib}",
                                        "-e", f"ASAN_OPTIONS={PRELOAD_UNDER_ASAN}", tag,
                                        "/app/dltest_driver", "count", str(calls)],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)


def start_container(tag, lib, calls, name, extra=()):
    return subprocess.Popen(PODMAN_RUN + list(extra) + ["--name", name, "-e", "LD_LIBRARY_PATH=/app", "-e", f"LD_PRELOAD=/app/{lib}",
                                          "-e", f"ASAN_OPTIONS={PRELOAD_UNDER_ASAN}", tag,
                                          "/app/dltest_driver", "count", str(calls)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def by_container(doc, func_name):
    return {r["container"]: r["calls"] for r in doc["functions"] if r["name"] == func_name}


@modes("session", "multi")
def test_restarted_containers_counted_from_first_call():
    """Five --rm containers of one image, one after another, then two at once, each calling
    from its first instruction (nothing waits for the profiler): with the image stores left
    unwalked, the first container's copy is discovered (its driver waits for that), later
    ones find it still attached, idle between them; --by container counts each exactly,
    named as podman named it."""
    require_podman()
    run = secrets.token_hex(3)
    with no_image_stores(), lib_world() as (lib, host_dir, tag):
        prof = Profiler(["--lib", lib, "--func", "dlt_add", "--by", "container"], env=profiler_env(host_dir))
        want = {}
        try:
            first, _ = container_driver(tag, lib, 1000, ["--name", f"dlprof-r0-{run}"])
            prof.wait_for(f"discovered copy /app/{lib}", 10)
            drive(first)
            finish_container(first)
            want[f"dlprof-r0-{run}"] = 1000
            prof.wait_for(f"idle copy /app/{lib}", 10)
            for i in range(1, 5):
                name = f"dlprof-r{i}-{run}"
                r = run_container(tag, lib, 1000 + i, name)
                check(r.returncode == 0, f"container {name}: exit {r.returncode}: {r.stderr}")
                want[name] = 1000 + i
            pair = {f"dlprof-p{i}-{run}": 2000 + i for i in range(2)}
            started = [start_container(tag, lib, n, name) for name, n in pair.items()]
            for p in started:
                p.wait(timeout=120)
                check(p.returncode == 0, f"container exit {p.returncode}: {p.stderr.read()}")
            want.update(pair)
            doc = prof.stop()
        finally:
            if prof.p.poll() is None:
                prof.p.kill()
    got = by_container(doc, "dlt_add")
    check(got == want, f"calls per container {got}, want {want}")
    mine = [c for c in doc.get("copies", []) if c["path"] == f"/app/{lib}"]
    check(len(mine) == 1 and mine[0]["attach_failures"] == 0 and not mine[0]["detached"] and mine[0]["idle"],
          f"the image's copy: {doc.get('copies')}")
    check(doc.get("idle_copies") == 1, f"idle copies: {doc.get('idle_copies')}")
    notes = [l for l, _ in prof.lines if l and "copy /app/" in l]
    check(not any("re-attached" in l or "detached copy" in l for l in notes), f"the copy left and came back: {notes}")


@modes("session")
def test_lost_exit_still_turns_idle():
    """A container's copy whose holder's exit event never comes (DLPROF_LOSE_EXITS=1 loses them
    all): the sweep finds the holder gone and the copy turns idle within seconds, then counts the
    next container of the image from its first call."""
    require_podman()
    run = secrets.token_hex(3)
    with no_image_stores(), lib_world() as (lib, host_dir, tag):
        prof = Profiler(["--lib", lib, "--func", "dlt_add", "--by", "container"],
                        env=dict(profiler_env(host_dir), DLPROF_LOSE_EXITS="1"))
        try:
            first, _ = container_driver(tag, lib, 1000, ["--name", f"dlprof-l0-{run}"])
            prof.wait_for(f"discovered copy /app/{lib}", 10)
            drive(first)
            finish_container(first)
            prof.wait_for(f"idle copy /app/{lib}", 15)
            r = run_container(tag, lib, 1001, f"dlprof-l1-{run}")
            check(r.returncode == 0, f"container: exit {r.returncode}: {r.stderr}")
            doc = prof.stop()
        finally:
            if prof.p.poll() is None:
                prof.p.kill()
    got = by_container(doc, "dlt_add")
    want = {f"dlprof-l0-{run}": 1000, f"dlprof-l1-{run}": 1001}
    check(got == want, f"calls per container {got}, want {want}")


@modes("session", "multi")
def test_exec_job_counted_from_first_call():
    """An image imported while the profiler runs: its layer's copy of the library is found
    in the image store and attached before any container maps it. A container that does
    not load the library, then a `podman exec` job in it that calls 777 times in its first
    milliseconds: 777 exactly, the copy's origin "image"."""
    require_podman()
    lib = f"libdlns{secrets.token_hex(4)}.so"
    cname = f"dlprof-exec-{secrets.token_hex(3)}"
    with tempfile.TemporaryDirectory() as tmp:
        host_dir = os.path.join(tmp, "host")
        os.makedirs(host_dir)
        shutil.copy(LIB, os.path.join(host_dir, lib))
        prof = Profiler(["--lib", lib, "--func", "dlt_add", "--by", "container"], env=profiler_env(host_dir))
        c = None
        try:
            files = driver_files() + [(LIB, "app/" + os.path.basename(LIB)), (LIB, "app/" + lib)]
            with image_from_files("exec", files) as tag:
                line, _ = prof.wait_for(f"attached image copy /app/{lib}", 30)
                # The container's own process does not load the library: the exec job is its first mapper.
                c = subprocess.Popen(PODMAN_RUN + ["--name", cname, "-e", "LD_LIBRARY_PATH=/app", tag,
                                                   "/app/dltest_driver", "--wait", "count", "0"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
                line = c.stdout.readline()
                check(line.startswith("ready "), f"the container's driver did not start: {line!r}")
                r = subprocess.run(["podman", "exec", "-e", "LD_LIBRARY_PATH=/app", "-e", f"LD_PRELOAD=/app/{lib}",
                                    "-e", f"ASAN_OPTIONS={PRELOAD_UNDER_ASAN}", cname, "/app/dltest_driver",
                                    "count", "777"], capture_output=True, text=True, timeout=120)
                check(r.returncode == 0, f"podman exec: exit {r.returncode}: {r.stderr}")
                drive(c)
                finish_container(c)
                doc = prof.stop()
        finally:
            if c:
                finish_container(c)
            if prof.p.poll() is None:
                prof.p.kill()
    got = by_container(doc, "dlt_add")
    check(got == {cname: 777}, f"calls per container {got}, want {{{cname!r}: 777}}")
    mine = [x for x in doc.get("copies", []) if x["path"] == f"/app/{lib}"]
    check(len(mine) == 1 and mine[0]["origin"] == "image" and mine[0]["attach_failures"] == 0,
          f"the image's copy: {doc.get('copies')}")


@modes("session")
def test_library_only_in_an_image():
    """A library no host directory and no running process has, only an image: named
    system-wide, its layer's file is the primary, and a container started after calls it
    from its first instruction: exact."""
    require_podman()
    lib = f"libdlns{secrets.token_hex(4)}.so"
    name = f"dlprof-only-{secrets.token_hex(3)}"
    files = driver_files() + [(LIB, "app/" + os.path.basename(LIB)), (LIB, "app/" + lib)]
    with image_from_files("only", files) as tag:
        prof = Profiler(["--lib", lib, "--func", "dlt_add", "--by", "container"])
        try:
            r = run_container(tag, lib, 1234, name)
            check(r.returncode == 0, f"container {name}: exit {r.returncode}: {r.stderr}")
            doc = prof.stop()
        finally:
            if prof.p.poll() is None:
                prof.p.kill()
    got = by_container(doc, "dlt_add")
    check(got == {name: 1234}, f"calls per container {got}, want {{{name!r}: 1234}}")
    check(lib in json.dumps(doc["functions"][0]),
          f"the row's library: {doc['functions'][0]}")


@modes("session")
def test_agent_restarted_containers_counted_from_first_call():
    """The agent, with an image on the node: its copy is attached from the image store at the
    start, so five --rm containers one after another and two at once, each calling from its
    first instruction, each get a series with their exact count; the copy ends idle
    (dlprof_agent_idle_copies 1)."""
    from agent_test import Agent, calls_per_container, samples  # the agent's runner
    require_podman()

    def series(text):
        return calls_per_container(text, "dlt_add")

    run = secrets.token_hex(3)
    with lib_world() as (lib, host_dir, tag), \
            Agent(["--lib", lib, "--func", "dlt_add", "--max-overhead", "off", "--series-grace", "300"],
                  env=profiler_env(host_dir)) as ag:
        ag.wait_ready()
        want = {}
        for i in range(5):
            cidfile = os.path.join(host_dir, f"cid-{i}")
            r = run_container(tag, lib, 1000 + i, f"dlprof-ar{i}-{run}", ["--cidfile", cidfile])
            check(r.returncode == 0, f"container {i}: exit {r.returncode}: {r.stderr}")
            want[open(cidfile).read().strip()] = 1000 + i
        cidfiles = [os.path.join(host_dir, f"cid-p{i}") for i in range(2)]
        started = [start_container(tag, lib, 2000 + i, f"dlprof-ap{i}-{run}", ["--cidfile", f])
                   for i, f in enumerate(cidfiles)]
        for i, p in enumerate(started):
            p.wait(timeout=120)
            check(p.returncode == 0, f"container exit {p.returncode}: {p.stderr.read()}")
            want[open(cidfiles[i]).read().strip()] = 2000 + i
        deadline = time.time() + 15
        while series(ag.metrics()) != want and time.time() < deadline:
            time.sleep(0.2)
        text = ag.metrics()
        check(series(text) == want, f"series per container {series(text)}, want {want}: {ag.text()[-1500:]}")
        deadline = time.time() + 10
        while sum(samples(ag.metrics(), "dlprof_agent_idle_copies").values()) != 1 and time.time() < deadline:
            time.sleep(0.2)
        idle = sum(samples(ag.metrics(), "dlprof_agent_idle_copies").values())
        check(idle == 1, f"idle copies {idle}: {ag.text()[-1500:]}")
        check(ag.stop() == 0, f"exit {ag.p.returncode}")


def replace_file(path, src=None, text=None):
    """As a package upgrade does: the new file written beside the old, renamed over it (a new inode)."""
    tmp = path + ".dpkg-new"
    if src:
        shutil.copy(src, tmp)
    else:
        with open(tmp, "w") as f:
            f.write(text)
    before = os.stat(path).st_ino
    os.rename(tmp, path)
    check(os.stat(path).st_ino != before, "the replacement kept the inode")


@modes("session", "multi")
def test_path_replaced_under_cli():
    """--lib /dir/NAME system-wide, then cp + mv of a new build over the path: a process
    that mapped the old file and one started after the replacement, 2,000 + 4,000 calls,
    all counted; one line says the file was replaced."""
    with tempfile.TemporaryDirectory() as d:
        name = f"libdlpf{secrets.token_hex(4)}.so"
        path = os.path.join(d, name)
        shutil.copy(LIB, path)
        prof = Profiler(["--lib", path, "--func", "dlt_add"])
        a = b = None
        try:
            a = host_driver(d, name, 2000)
            replace_file(path, src=LIB)
            prof.wait_for(f"{path} was replaced", 10)
            b = host_driver(d, name, 4000)
            drive(a)
            drive(b)
            finish(a)
            finish(b)
            a = b = None
            doc = prof.stop()
        finally:
            for x in (a, b):
                if x:
                    x.kill()
                    x.wait()
            if prof.p.poll() is None:
                prof.p.kill()
    check(calls_of(doc, "dlt_add") == 6000, f"old + new file: {calls_of(doc, 'dlt_add')} calls, want 6000")
    said = [l for l, _ in prof.lines if l and "replaced" in l]
    check(len(said) == 1, f"the replacement said in {len(said)} lines: {said}")
    origins = sorted(c["origin"] for c in doc.get("copies", []))
    check(origins == ["primary", "replaced"], f"the summary's copies: {doc.get('copies')}")


@modes("session")
def test_path_replaced_under_agent():
    """The agent on --lib /dir/NAME: cp + mv of a new build is followed (a log line), the
    old and the new file's calls counted exactly (1,000 + 2,000); then a file that is not a
    library is moved over the path: /readyz says 503 and dlprof_agent_library_follow_failures 1."""
    from agent_test import Agent, samples  # the agent's runner
    with tempfile.TemporaryDirectory() as d:
        name = f"libdlpf{secrets.token_hex(4)}.so"
        path = os.path.join(d, name)
        shutil.copy(LIB, path)
        with Agent(["--lib", path, "--func", "dlt_add", "--max-overhead", "off"]) as ag:
            ag.wait_ready()
            a = host_driver(d, name, 1000)
            replace_file(path, src=LIB)
            deadline = time.time() + 10
            while "was replaced" not in ag.text() and time.time() < deadline:
                time.sleep(0.05)
            check("was replaced" in ag.text(), f"no log line of the replacement: {ag.text()[-1500:]}")
            b = host_driver(d, name, 2000)
            for x in (a, b):
                drive(x)
                finish(x)

            def calls():
                return sum(v for lbl, v in samples(ag.metrics(), "dlprof_calls_total").items()
                           if 'function="dlt_add"' in lbl)
            deadline = time.time() + 15
            while calls() != 3000 and time.time() < deadline:
                time.sleep(0.2)
            check(calls() == 3000, f"series {calls()}, want 3000: {ag.text()[-1500:]}")
            replace_file(path, text="not a library\n")
            ag.wait_status("/readyz", 503, 15)
            fails = samples(ag.metrics(), "dlprof_agent_library_follow_failures")
            check(list(fails.values()) == [1], f"follow failures {fails}")
            check(ag.stop() == 0, f"exit {ag.p.returncode}")


if __name__ == "__main__":
    sys.exit(itest.run(globals()))
