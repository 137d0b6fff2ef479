#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The agent's first run and the run after, two builds side by side: each round
runs openssl unprobed, then starts the agent of one build on all of
libcrypto.so.3 (its default budget), waits for /readyz 200 and a second,
runs `openssl speed -seconds 2 -bytes 64 sha256` twice and stops the agent;
the builds take turns, in alternating order.

    sudo bench/agent_first_run.py --baseline OLD_BUILD [--build build] [--rounds 4]

Prints per build the throughputs and openssl's kernel time (s) of its first
and second runs, and the unprobed runs': the kernel time is the probes'
traps and the breakpoints written into openssl's pages, which the VM's
changing speed barely moves (docs/agent.md, "What it costs").
"""
import os
import re
import resource
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agent_budget import free_port, libcrypto, speed_cmd, start_agent, two_builds  # noqa: E402


def run(seconds=2):
    """(MB/s of wall time, openssl's kernel time in s)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(speed_cmd(seconds), capture_output=True, text=True, check=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    digests = int(re.search(r"^\+R:(\d+):", p.stdout + p.stderr, re.M).group(1))
    return digests * 64 / seconds / 1e6, r1.ru_stime - r0.ru_stime


def main():
    _, builds, turns = two_builds(__doc__, 4)
    lib = libcrypto()
    res = {"unprobed": [], "build first": [], "build second": [], "baseline first": [], "baseline second": []}
    for turn in turns:
        for name in turn:
            res["unprobed"].append(run())
            ag = start_agent(builds[name], lib, free_port(), None)
            time.sleep(1)
            try:
                res[f"{name} first"].append(run())
                res[f"{name} second"].append(run())
            finally:
                ag.terminate()
                ag.communicate(timeout=120)
    for k, v in res.items():
        print(f"{k:16s} MB/s {[round(x[0]) for x in v]}  kernel s {[round(x[1], 3) for x in v]}  "
              f"median kernel s {statistics.median(x[1] for x in v):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
