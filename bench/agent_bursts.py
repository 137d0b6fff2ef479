#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The agent's series for callers that no steady window sees whole: many
short-lived processes, and one burst.

    sudo bench/agent_bursts.py [--build build] [--procs 2000] [--calls 100]
                               [--parallel 4] [--burst 100008] [--budget 1]
                               [--attach MODE]

short lives: --procs processes (--parallel at a time), each making --calls
calls of dlt_test_je (a probe the kernel emulates) on one thread and
exiting. burst: one process making --burst calls as fast as it can, once
the agent is ready. Each runs under its own agent at --budget percent
(the default budget unless told), the function's series (exact and
sampled="true" together) read once the workload is over, two scrapes
apart (a new series is served at 0 first), against the calls made; with
the sampled series' relative error and the agent's unsteady calls, which
are what it says of how far the series may be off. --budget off is the
exact baseline.

Prints one line per case, then one JSON line.
"""
import argparse
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        return r.read().decode()


def samples(text, name):
    return {lbl: float(v) for lbl, v in re.findall(rf'^{name}(\{{[^}}]*\}})? (\S+)$', text, re.M)}


def calls(text, function):
    return sum(v for lbl, v in samples(text, "dlprof_calls_total").items() if f'function="{function}"' in lbl)


def wait_ready(port, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.1)
    sys.exit("agent_bursts: the agent never became ready")


def run_case(args, name, run_workload, made):
    lib = os.path.join(args.build, "tests/progs/libdltest.so")
    port = free_port()
    cmd = [os.path.join(args.build, "user/dlprof-bpf"), "agent", "--listen", f"127.0.0.1:{port}",
           "--lib", lib, "--func", "dlt_test_je", "--max-overhead", args.budget]
    if args.attach:
        cmd += ["--attach", args.attach]
    agent = subprocess.Popen(cmd, stderr=subprocess.DEVNULL)
    try:
        wait_ready(port)
        t0 = time.time()
        run_workload()
        took = time.time() - t0
        # Past the next refresh and a scrape that serves new series at 0, then the one that counts.
        time.sleep(1.5)
        scrape(port)
        time.sleep(1.0)
        text = scrape(port)
    finally:
        agent.terminate()
        agent.wait()
    shown = calls(text, "dlt_test_je")
    errors = [v for lbl, v in samples(text, "dlprof_sampled_relative_error").items() if "dlt_test_je" in lbl]
    unsteady = samples(text, "dlprof_agent_sampled_unsteady_calls_total").get("", 0.0)
    sampled = samples(text, "dlprof_agent_functions").get('{state="sampled"}', 0.0)
    row = {"case": name, "made": made, "shown": shown, "error_pct": round((shown / made - 1) * 100, 1),
           "relative_error": errors[0] if errors else None, "unsteady_calls": unsteady,
           "sampled": bool(sampled), "workload_s": round(took, 2)}
    rel = f"{errors[0]:.1%}" if errors else "none"
    print(f"{name}: made {made:,}, shown {shown:,.0f} ({row['error_pct']:+.1f}%), "
          f"{'sampled' if sampled else 'linked'}, relative error {rel}, unsteady calls {unsteady:,.0f}, "
          f"workload {took:.1f} s")
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--procs", type=int, default=2000)
    ap.add_argument("--calls", type=int, default=100)
    ap.add_argument("--parallel", type=int, default=4)
    ap.add_argument("--burst", type=int, default=100008)
    ap.add_argument("--budget", default="1")
    ap.add_argument("--attach", default="")
    args = ap.parse_args()
    driver = os.path.join(args.build, "tests/progs/dltest_driver")
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(args.build, "tests/progs"))

    def short_lives():
        running, started = [], 0
        while started < args.procs or running:
            while len(running) < args.parallel and started < args.procs:
                running.append(subprocess.Popen([driver, "shortthreads", "1", str(args.calls)], env=env))
                started += 1
            running.pop(0).wait()

    def burst():
        subprocess.run([driver, "shortthreads", "1", str(args.burst)], env=env, check=True)

    rows = [run_case(args, f"{args.procs} processes of {args.calls} calls", short_lives, args.procs * args.calls),
            run_case(args, f"a burst of {args.burst} calls", burst, args.burst)]
    print(json.dumps({"bench": "agent_bursts", "budget": args.budget, "rows": rows}))


if __name__ == "__main__":
    main()
