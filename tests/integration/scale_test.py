#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Every exported function of a big library, attached and detached whole.

Classic mode makes two perf events per function and the kernel releases
each after a grace period, one at a time (probe/detacher.h): on libcrypto
the detach takes minutes. These tests check that it completes and counts
exactly, not how fast (bench/attach.py measures that); they are in the
`scale` suite, which `meson test` runs only when asked (--suite scale).
"""
import ctypes.util
import re
import signal
import subprocess
import sys

import itest
from itest import check, modes

LIBCRYPTO = "libcrypto.so.3"

# A process that maps libcrypto and, on a line from the test, calls three of its
# exported functions a known number of times (each returns a constant and calls
# nothing, so nothing else is counted).
DRIVER = """
import ctypes, sys
c = ctypes.CDLL(sys.argv[1])
print("ready", flush=True)
sys.stdin.readline()
for n, f in ((3000, c.OpenSSL_version_num), (2000, c.OPENSSL_version_major), (1000, c.OPENSSL_version_minor)):
    for _ in range(n):
        f()
print("done", flush=True)
sys.stdin.readline()
"""
EXPECTED = {"OpenSSL_version_num": 3000, "OPENSSL_version_major": 2000, "OPENSSL_version_minor": 1000}

# The kernel's work, not ours: ~0.1 s per classic probe on the slowest kernel seen.
DETACH_TIMEOUT_S = 3300


def exported_functions(path):
    out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True)
    check(out.returncode == 0, f"nm {path}: {out.stderr}")
    return {l.split()[2] for l in out.stdout.splitlines() if len(l.split()) == 3 and l.split()[1] in "Tt"}


def start_driver():
    if not ctypes.util.find_library("crypto"):
        raise itest.Skip(f"{LIBCRYPTO} is not installed")
    d = subprocess.Popen([sys.executable, "-c", DRIVER, LIBCRYPTO], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    check(d.stdout.readline().strip() == "ready", "driver did not start")
    return d


def said(err, what):
    """The final progress line of what ('attaching' or 'detaching'): (done, total) or None."""
    m = re.findall(rf"^dlprof-bpf: {what} ([0-9,]+)/([0-9,]+) \w+$", err, re.M)
    return tuple(int(x.replace(",", "")) for x in m[-1]) if m else None


@modes("classic", "multi")
def test_libcrypto_all():
    d = start_driver()
    try:
        prof = itest.start_profiler(["--lib", LIBCRYPTO, "-p", str(d.pid), "-e", "none"])
        d.stdin.write("go\n")
        d.stdin.flush()
        check(d.stdout.readline().strip() == "done", "driver did not finish")
        prof.send_signal(signal.SIGINT)
        out, err = prof.communicate(timeout=DETACH_TIMEOUT_S)
        err = prof.startup + err
        check(prof.returncode == 0, f"profiler exit {prof.returncode}: {err}")
        doc = itest.json.loads(out)
    finally:
        itest.finish(d)
    # The figures docs/kernels.md compares across kernels (as ratios: a guest's speed is not the kernel's).
    print(f"figures: attach_ms {doc['attach_ms']:.0f} detach_ms {doc['detach_ms']:.0f} "
          f"functions {doc['functions_attached']} mode {doc.get('attach_mode')}", flush=True)
    exported = len(exported_functions(find_path()))
    attached, skipped = doc["functions_attached"], doc["functions_skipped"]
    check(attached > 0.9 * exported and attached + skipped <= exported,
          f"{attached} attached, {skipped} skipped of {exported} exported functions")
    check(doc["detach_finished"] is True, f"detach not finished: {doc['detach_ms']} ms")
    for name, n in EXPECTED.items():
        check(itest.calls_of(doc, name) == n, f"{name}: {itest.calls_of(doc, name)} calls, not {n}")
    # Progress lines, past a second, on stderr (stdout held the JSON alone: it parsed), ending complete.
    if doc["attach_ms"] > 1500:
        a = said(err, "attaching")
        check(a and a[0] == a[1] and a[1] >= attached, f"attach progress did not end complete: {err!r}")
    if doc["detach_ms"] > 1500:
        done = said(err, "detaching")
        check(done and done[0] == done[1], f"detach progress did not end complete: {err!r}")


def find_path():
    """The file the dynamic loader maps for libcrypto, as this process sees it."""
    ctypes.CDLL(LIBCRYPTO)
    for line in open("/proc/self/maps"):
        if line.rstrip().endswith("/" + LIBCRYPTO):
            return line.split()[-1]
    raise AssertionError(f"{LIBCRYPTO} not mapped after loading it")


if __name__ == "__main__":
    sys.exit(itest.run(globals()))
