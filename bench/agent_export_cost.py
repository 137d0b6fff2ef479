#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""What the exports cost the agent: its CPU (utime + stime from /proc/PID/stat)
over a steady window and its resident memory at the end, with no export
beyond the text scrape, with OTLP pushes every second to a receiver
(tests/integration/otlpserver.py), and with protobuf scrapes every second;
--baseline BINARY adds another build's agent with text scrapes. Configurations
take turns in each round; medians. A workload calls the test library's
functions throughout (several series). Needs root and a build (build/)."""
import argparse
import os
import statistics
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
os.environ.setdefault("DLTEST_DRIVER", os.path.join(HERE, "..", "build", "tests", "progs", "dltest_driver"))
os.environ.setdefault("DLTEST_LIB", os.path.join(HERE, "..", "build", "tests", "progs", "libdltest.so"))
from itest import DRIVER, LIB, free_port  # noqa: E402
from otlpserver import Receiver, require_protobuf  # noqa: E402

TEXT = "text/plain;version=0.0.4"
PROTO = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited"
TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TICK


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def scrape(port, accept):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/metrics", headers={"Accept": accept})
    with urllib.request.urlopen(req, timeout=5) as r:
        return len(r.read())


def run(binary, extra, accept, seconds):
    port = free_port()
    agent = subprocess.Popen([binary, "agent", "--lib", LIB, "--max-overhead", "off", "--listen",
                              f"127.0.0.1:{port}"] + extra, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.time() > deadline:
                raise SystemExit("the agent never got ready")
            time.sleep(0.1)
        time.sleep(3)
        c0, t0, size = cpu_s(agent.pid), time.time(), 0
        while time.time() - t0 < seconds:
            size = scrape(port, accept)
            time.sleep(1)
        used = (cpu_s(agent.pid) - c0) / (time.time() - t0)
        return used, rss_kib(agent.pid), size
    finally:
        agent.terminate()
        agent.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--binary", default=os.path.join(HERE, "..", "build", "user", "dlprof-bpf"))
    ap.add_argument("--baseline", help="another build's dlprof-bpf, text scrapes")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=30)
    a = ap.parse_args()
    require_protobuf()
    rx = Receiver().start()
    configs = {"text scrapes": (a.binary, [], TEXT),
               "text + OTLP push 1 s": (a.binary, ["--otlp-endpoint", f"http://127.0.0.1:{rx.port}",
                                                   "--otlp-interval", "1"], TEXT),
               "protobuf scrapes": (a.binary, [], PROTO)}
    if a.baseline:
        configs["baseline, text scrapes"] = (a.baseline, [], TEXT)
    work = subprocess.Popen(["sh", "-c", f"while :; do {DRIVER} asm 200; {DRIVER} count 2000; {DRIVER} nap 1 20; done"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    res = {k: [] for k in configs}
    try:
        for r in range(a.rounds):
            for name, (binary, extra, accept) in configs.items():
                res[name].append(run(binary, extra, accept, a.seconds))
                print(f"round {r + 1} {name}: {res[name][-1][0] * 100:.3f}% CPU, {res[name][-1][1]} KiB, "
                      f"{res[name][-1][2]} bytes a scrape", flush=True)
    finally:
        work.kill()
        rx.stop()
    print(f"pushes received: {rx.count()}, last {len(rx.last()[1].SerializeToString()) if rx.count() else 0} bytes")
    for name, v in res.items():
        print(f"{name:24s} CPU {statistics.median(x[0] for x in v) * 100:.3f}% of one CPU, "
              f"RSS {statistics.median(x[1] for x in v) / 1024:.1f} MiB, scrape {statistics.median(x[2] for x in v):.0f} bytes")


if __name__ == "__main__":
    main()
