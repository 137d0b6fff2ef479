#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The agent's hot start, two builds side by side: `openssl speed -seconds 4
-bytes 64 sha256` is already running when the agent (all of libcrypto.so.3,
its default budget) starts; the agent's cold start measures every function
a batch at a time while openssl runs. Each round runs openssl unprobed, then
once under each build's hot start, in alternating order.

    sudo bench/agent_hot_start.py --baseline OLD_BUILD [--build build] [--rounds 3]

Prints per build the probes' share of openssl's CPU (its kernel time over
its CPU time, less the unprobed run's of the same round: the VM's speed
cancels out, docs/agent.md, "What it costs") and its MB/s.
"""
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agent_budget import free_port, hot_start, libcrypto, speed, two_builds  # noqa: E402

SECONDS = 4


def main():
    _, builds, turns = two_builds(__doc__, 3)
    lib = libcrypto()
    share = {"build": [], "baseline": []}
    mbs = {"build": [], "baseline": [], "unprobed": []}
    for turn in turns:
        _, base_bps, _, base_ks = speed(SECONDS)
        mbs["unprobed"].append(base_bps / 1e6)
        for name in turn:
            (_, bps, _, ks), agent = hot_start(builds[name], lib, free_port(), None, SECONDS)
            agent.terminate()
            agent.communicate(timeout=120)
            share[name].append(ks - base_ks)
            mbs[name].append(bps / 1e6)
    for name in ("build", "baseline"):
        print(f"{name:9s} probes' share of openssl's CPU {[f'{x:.2%}' for x in share[name]]} "
              f"median {statistics.median(share[name]):.2%}  MB/s {[round(x) for x in mbs[name]]}")
    print(f"unprobed  MB/s {[round(x) for x in mbs['unprobed']]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
