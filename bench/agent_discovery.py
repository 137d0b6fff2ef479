#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""How soon the agent names a workload's hot functions when the workload
starts after it (a node's usual order), two builds side by side. The agent
(all of libcrypto.so.3, its default budget) is idle and ready; then
`openssl speed -seconds S -bytes 64 sha256` starts. Most of libcrypto's idle
functions are sampled at that point (linked, each would cost every process
that maps the library), so the hot ones must be found by the windows.

    sudo bench/agent_discovery.py --baseline OLD_BUILD [--build build] [--rounds 2] [--seconds 90]

Prints per build and round the seconds after openssl's start at which the
metrics first showed calls of each of the 10 hottest functions (- : not in
the run), and the agent's own CPU over the run and over --idle seconds
before it (its share of one CPU, dlprof_agent_cpu_seconds_total).
"""
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agent_budget import (calls_by_function, free_port, libcrypto, metric, scrape, speed_cmd,  # noqa: E402
                          start_agent, two_builds)

HOTTEST = ["OPENSSL_cleanse", "CRYPTO_malloc", "CRYPTO_zalloc", "CRYPTO_free", "EVP_MD_CTX_set_flags",
           "EVP_MD_free", "ENGINE_finish", "EVP_Digest", "EVP_DigestInit_ex", "EVP_MD_CTX_free"]
IDLE_S = 30


def agent_cpu_s(port):
    return metric(scrape(port), "dlprof_agent_cpu_seconds_total")


def one_run(dlprof, lib, seconds):
    """(seconds to name each of HOTTEST or None, agent's CPU share idle, and during the run)."""
    port = free_port()
    agent = start_agent(dlprof, lib, port, None)
    try:
        c0, t0 = agent_cpu_s(port), time.time()
        time.sleep(IDLE_S)
        idle = (agent_cpu_s(port) - c0) / (time.time() - t0)
        run = subprocess.Popen(speed_cmd(seconds), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        c0, t0, named = agent_cpu_s(port), time.time(), {}
        while run.poll() is None:
            calls = calls_by_function(scrape(port))
            for fn in HOTTEST:
                if fn not in named and calls.get(fn, 0) > 0:
                    named[fn] = time.time() - t0
            time.sleep(0.2)
        busy = (agent_cpu_s(port) - c0) / (time.time() - t0)
    finally:
        agent.terminate()
        agent.communicate(timeout=120)
    return [named.get(fn) for fn in HOTTEST], idle, busy


def main():
    ap_args, builds, turns = two_builds(__doc__, 2, extra=[("--seconds", 90)])
    lib = libcrypto()
    for r, turn in enumerate(turns):
        for name in turn:
            named, idle, busy = one_run(builds[name], lib, ap_args.seconds)
            found = [t for t in named if t is not None]
            print(f"round {r + 1} {name:9s} named {len(found)}/{len(HOTTEST)}"
                  f" (median {statistics.median(found) if found else float('nan'):.0f} s, last "
                  f"{max(found) if found else float('nan'):.0f} s): "
                  + " ".join("-" if t is None else f"{t:.0f}" for t in named)
                  + f"   agent CPU idle {idle:.2%}, during the run {busy:.2%}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
