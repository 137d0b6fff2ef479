#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""What every integration test script shares: the environment meson passes,
the profiler and driver helpers, and the runner.

A script defines test_* functions and ends with `sys.exit(itest.run(globals()))`:

    SCRIPT --list MODE   the tests to register for attach mode MODE
    SCRIPT TEST_NAME     run one test (exit 0 pass, 1 fail, 77 skip)

Environment: DLPROF (the binary), DLTEST_DRIVER, DLTEST_LIB, DLTEST_LATE_LIB,
DLTEST_UNPROBEABLE_LIB, DLPROF_ATTACH (optional attach mode passed as --attach).
"""
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

DLPROF = os.environ.get("DLPROF", "")
DRIVER = os.environ.get("DLTEST_DRIVER", "")
LIB = os.environ.get("DLTEST_LIB", "")
UNPROBEABLE_LIB = os.environ.get("DLTEST_UNPROBEABLE_LIB", "")
LATE_LIB = os.environ.get("DLTEST_LATE_LIB", "")
ATTACH = os.environ.get("DLPROF_ATTACH", "")

SKIP = 77


class Skip(Exception):
    pass


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def require_bpf():
    """Skip only where the machine truly cannot run BPF."""
    if os.geteuid() != 0:
        raise Skip("not root: loading BPF programs needs root or CAP_BPF+CAP_PERFMON")
    if not os.path.exists("/sys/kernel/btf/vmlinux"):
        raise Skip("kernel without BTF (/sys/kernel/btf/vmlinux missing)")


def base_args(extra=()):
    args = [DLPROF, "--json"]
    if ATTACH:
        args += ["--attach", ATTACH]
    return args + list(extra)


def run_profiled(cmd, extra=(), timeout=120, env=None):
    """Launch cmd under the profiler; returns (rc, json doc or None, stderr)."""
    p = subprocess.run(base_args(["--lib", LIB] + list(extra)) + ["--"] + cmd,
                       capture_output=True, text=True, timeout=timeout, env=env)
    doc = None
    if p.stdout.strip():
        doc = json.loads(p.stdout)
    return p.returncode, doc, p.stderr


def func(doc, name):
    for f in doc["functions"]:
        if f["name"] == name:
            return f
    return None


def calls_of(doc, name):
    f = func(doc, name)
    return f["calls"] if f else 0


def start_waiting_driver(args):
    d = subprocess.Popen([DRIVER, "--wait"] + args, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    line = d.stdout.readline()
    check(line.startswith("ready "), f"driver did not start: {line!r}")
    return d


def start_profiler_on(pid, libs, extra=()):
    args = list(extra)
    for lib in libs:
        args += ["--lib", lib]
    return start_profiler(args + ["-p", str(pid)])


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, timeout=5):
    """(status, body); status 0 when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")
    except (urllib.error.URLError, ConnectionError, socket.timeout):
        return 0, ""


def pinned_to(cpu):
    """A preexec_fn that keeps a child on one CPU (None: anywhere)."""
    return None if cpu is None else lambda: os.sched_setaffinity(0, {cpu})


def drop_to_nobody():
    """A preexec_fn: the child runs as nobody, with no capabilities at all."""
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)


@contextlib.contextmanager
def reachable_copies(*paths):
    """Copies of paths in a folder an unprivileged user can reach: the checkout may sit in one
    only root can enter (mktemp -d, /root)."""
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)
        copies = [os.path.join(tmp, os.path.basename(p)) for p in paths]
        for src, dst in zip(paths, copies):
            shutil.copy(src, dst)
        yield copies


def start_profiler(extra, cpu=None, json_doc=True, command=()):
    """The profiler in the background (-p or every process), once it says it attached;
    on one CPU if cpu is given; without --json when json_doc is false (--format refuses it);
    command: a subcommand and its arguments before the options (["record", "-o", path])."""
    args = base_args(extra) if json_doc else [DLPROF] + (["--attach", ATTACH] if ATTACH else []) + list(extra)
    args[1:1] = list(command)
    prof = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=pinned_to(cpu))
    seen = []
    while True:
        line = prof.stderr.readline()
        seen.append(line)
        if not line or "profiling" in line:
            break
    check("profiling" in line, f"profiler did not attach: {''.join(seen)!r}")
    prof.startup = "".join(seen)  # what it said up to "profiling" (the attach's progress lines too)
    return prof


def stop_profiler(prof, timeout=60):
    prof.send_signal(signal.SIGINT)
    out, err = prof.communicate(timeout=timeout)
    check(prof.returncode == 0,
          f"profiler exit {prof.returncode}: {err}")
    return json.loads(out)


def drive(d):
    """Let a --wait driver work, wait until it is done; it exits on close()."""
    d.stdin.write("go\n")
    d.stdin.flush()
    check(d.stdout.readline().strip() == "done", "driver did not finish")


def finish(d):
    d.stdin.write("bye\n")
    d.stdin.flush()
    d.wait(timeout=30)



def profile_running_driver(driver_args, libs, before_attach=None):
    """Start a waiting driver, attach with -p, let it work, stop: the JSON document."""
    d = start_waiting_driver(driver_args)
    try:
        if before_attach:
            before_attach(d)
        prof = start_profiler_on(d.pid, libs)
        drive(d)
        return stop_profiler(prof)
    finally:
        finish(d)


def prog_ids_of(pid):
    """BPF programs the process pid holds, from its fdinfo."""
    ids = set()
    fddir = f"/proc/{pid}/fdinfo"
    for fd in os.listdir(fddir):
        try:
            info = open(os.path.join(fddir, fd)).read()
        except OSError:
            continue
        for line in info.splitlines():
            if line.startswith("prog_id:"):
                ids.add(int(line.split()[1]))
    return ids

def live_prog_ids():
    ids = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            ids |= prog_ids_of(pid)
        except OSError:
            pass
    return ids

def link_prog_ids():
    """Program ids that some BPF link still holds, from bpftool."""
    out = subprocess.run(["bpftool", "-j", "link", "show"], capture_output=True, text=True)
    if out.returncode != 0:
        return None
    return {l.get("prog_id") for l in json.loads(out.stdout or "[]")}

def expect_error(args, needle, env=None, preexec=None):
    p = subprocess.run(args, capture_output=True, text=True, timeout=60, env=env, preexec_fn=preexec)
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    check(p.returncode != 0, f"{args}: exit 0")
    check(len(lines) == 1, f"{args}: expected one line, got {p.stderr!r}")
    check(needle in lines[0], f"{args}: {needle!r} not in {lines[0]!r}")
    check("Traceback" not in p.stderr and p.returncode < 128, f"{args}: crashed ({p.returncode})")

def record(tmpdir, cmd, extra=(), timeout=120):
    out = os.path.join(tmpdir, "trace.d")
    args = [DLPROF, "record", "-o", out, "--json", "--lib", LIB, "--func", "dlt_*"]
    if ATTACH:
        args += ["--attach", ATTACH]
    p = subprocess.run(args + list(extra) + ["--"] + cmd, capture_output=True, text=True, timeout=timeout)
    check(p.returncode == 0, f"record rc {p.returncode}: {p.stderr}")
    return out, json.loads(p.stdout)

def dump_csv(path):
    p = subprocess.run([DLPROF, "dump", path, "--csv"], capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"dump rc {p.returncode}: {p.stderr}")
    lines = p.stdout.splitlines()
    header = lines[0].split(",")
    return header, [dict(zip(header, l.split(","))) for l in lines[1:]], p.stderr

def oracle(stderr, name):
    """What the driver measured itself around its probed calls ("dltest: NAME N"):
    thread_cpu_ns, page_faults, context_switches, involuntary_switches, wall_ns_p50, calls."""
    for line in stderr.splitlines():
        if line.startswith(f"dltest: {name} "):
            return int(line.split()[2])
    raise AssertionError(f"driver reported no {name}: {stderr!r}")

def thread_cpu_ns(stderr):
    return oracle(stderr, "thread_cpu_ns")

def check_counter_oracle(f, event, stderr, name):
    """The profiler's total for event is exactly the driver's own count: page
    faults, context switches and migrations are read from the thread's own
    task_struct, which is what getrusage(RUSAGE_THREAD) reads too."""
    got, want = f["counters"][event], oracle(stderr, name)
    check(oracle(stderr, "calls") == f["timed"], f"the driver measured {oracle(stderr, 'calls')} calls, {f['timed']} timed")
    check(want >= f["timed"], f"{name}: the workload measured only {want} in {f['timed']} calls, nothing to compare")
    # A preemption can land in the probes' own trap path (on the way back to the caller, after the
    # return program read the count): inside the driver's bracket, outside the call. Only
    # involuntary switches can; the call's own (voluntary) ones are exact.
    slack = oracle(stderr, "involuntary_switches") if name == "context_switches" else 0
    check(want - slack <= got <= want, f"{event}: profiled {got}, the thread itself counted {want}"
          + (f" ({slack} of them preemptions)" if slack else ""))

def counter_per_call(f, event):
    return f["counters"][event] / f["timed"]

def has_pmu():
    p = subprocess.run([DLPROF, "-e", "list"], capture_output=True, text=True)
    return any(l.split()[:3] == ["cycles", "hardware", "supported"] for l in p.stdout.splitlines())


MODES = ("session", "multi", "classic")


def modes(*which):
    """Register a test only for these attach modes (default: all of them)."""
    def mark(fn):
        fn.modes = which
        return fn
    return mark


# The kernel feature (dlprof-bpf --version -v) each attach mode needs.
MODE_FEATURE = {"session": "uprobe-session", "multi": "uprobe-multi"}
_features = None


def kernel_features():
    """{feature: bool} as the profiler probed this kernel; kept for the boot (a file per boot id)."""
    global _features
    if _features is None:
        with open("/proc/sys/kernel/random/boot_id") as f:
            cache = os.path.join(tempfile.gettempdir(), f"dlprof-features-{f.read().strip()}.json")
        try:
            with open(cache) as f:
                _features = json.load(f)
        except (OSError, ValueError):
            p = subprocess.run([DLPROF, "--version", "-v"], capture_output=True, text=True, timeout=120)
            _features = {w[0]: w[1] == "yes" for w in (l.split() for l in p.stdout.splitlines())
                         if len(w) >= 2 and w[1] in ("yes", "no")}
            if p.returncode == 0 and _features:
                with open(cache + ".tmp", "w") as f:
                    json.dump(_features, f)
                os.replace(cache + ".tmp", cache)
    return _features


def mode_supported(mode):
    feature = MODE_FEATURE.get(mode)
    return not feature or kernel_features().get(feature, True)


def choose_mode(fn, scope):
    """A test in an attach mode the kernel lacks (older kernels, tests/kernels): skipped where
    the test also runs in a mode the kernel has; else its first mode's registration runs it in
    the kernel's best mode (what it checks is not the mode's own), and the others skip."""
    global ATTACH
    if not ATTACH or mode_supported(ATTACH):
        return
    modes = getattr(fn, "modes", MODES)
    if any(mode_supported(m) for m in modes) or ATTACH != modes[0]:
        raise Skip(f"this kernel has no {MODE_FEATURE[ATTACH]} link: attach mode {ATTACH} cannot run here")
    ATTACH = scope["ATTACH"] = ""


def run(scope, prepare=lambda fn: require_bpf()):
    """prepare(test) runs first: it raises Skip where the machine cannot run the test."""
    tests = {name[5:]: fn for name, fn in scope.items() if name.startswith("test_")}
    if sys.argv[1:2] == ["--list"]:
        mode = sys.argv[2] if len(sys.argv) > 2 else None
        print("\n".join(n for n, fn in tests.items() if mode is None or mode in getattr(fn, "modes", MODES)))
        return 0
    if len(sys.argv) != 2 or sys.argv[1] not in tests:
        print(f"usage: {sys.argv[0]} {'|'.join(tests)}", file=sys.stderr)
        return 2
    try:
        prepare(tests[sys.argv[1]])
        if os.geteuid() == 0:
            choose_mode(tests[sys.argv[1]], scope)
        tests[sys.argv[1]]()
    except Skip as e:
        print(f"SKIP: {e}")
        return SKIP
    except AssertionError as e:
        print(f"FAIL: {e}")
        return 1
    print("PASS")
    return 0
