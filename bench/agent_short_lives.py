#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Where a stream of short-lived processes' sampled series goes wrong: the
agent's windows set against what the processes did while each was open.

    sudo bench/agent_short_lives.py [--build build] [--baseline OLD_BUILD]
                                    [--rounds 1] [--procs 23000]
                                    [--calls 100] [--parallel 4]

--procs processes (--parallel at a time), each making --calls calls of
dlt_test_je and exiting, under one agent at its default budget with -v.
Each process's start and exit are timed here (its calls are spread over
its life), and each sampling window's span and count come from the
agent's window lines. Prints:
  - the series against the calls made, as agent_bursts.py does;
  - counting: the windows' calls against the calls made in their spans
    (a ratio near 1: the windows count what happened);
  - the workload's own pace: calls made per second inside the windows,
    just before them and over the run, processes started per second
    inside the windows and over the run (what the agent's stream factor
    reads from the kernel's count of mappings), and the windows' mean
    unprobed factor (what the agent takes the probes to have cost);
  - the processes' median life, started inside windows and just before;
  - what the windows' calls per process started in them, times every
    process started, would give (the kernel counts the library's mappings
    all the time, not only in windows).
With --baseline, each round runs the baseline build then --build, one
after the other (the machine's load moves; compare within a round). Then
one JSON line.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agent_bursts  # noqa: E402 (the agent's start and scrapes, shared)


def windows_of(log):
    """(start on the wall clock, span s, calls, unprobed factor) of each sampling window with calls."""
    out = []
    with open(log) as f:
        for line in f:
            if "event=window" not in line or "calibration=true" in line or "scan=" in line:
                continue
            d = dict(re.findall(r"(\w+)=(\S+)", line))
            if float(d["calls"]) > 0:
                out.append((float(d["from_unix"]), float(d["ms"]) / 1e3, float(d["calls"]),
                            float(d["unprobed_factor"])))
    return out


def made_in(lives, calls, x0, x1):
    """The calls made in [x0, x1], each life's spread evenly over it."""
    made = 0.0
    for a, b in lives:
        if b > x0 and a < x1:
            made += calls * (min(b, x1) - max(a, x0)) / (b - a)
    return made


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else float("nan")


def run(build, procs, calls, parallel):
    """One stream under one agent of build: its row."""
    driver = os.path.join(build, "tests/progs/dltest_driver")
    lib = os.path.join(build, "tests/progs/libdltest.so")
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(build, "tests/progs"))
    port = agent_bursts.free_port()
    log = f"/tmp/agent_short_lives.{os.getpid()}.log"
    agent = subprocess.Popen([os.path.join(build, "user/dlprof-bpf"), "agent", "--listen",
                              f"127.0.0.1:{port}", "--lib", lib, "--func", "dlt_test_je", "-v"],
                             stderr=open(log, "w"))
    lives, running, started = [], {}, 0
    try:
        agent_bursts.wait_ready(port)
        t0 = time.time()
        while started < procs or running:
            while len(running) < parallel and started < procs:
                p = subprocess.Popen([driver, "shortthreads", "1", str(calls)], env=env)
                running[p.pid] = (p, time.time())
                started += 1
            pid, _ = os.wait()
            p, start = running.pop(pid)
            p.returncode = 0
            lives.append((start, time.time()))
        took = time.time() - t0
        time.sleep(1.5)
        agent_bursts.scrape(port)
        time.sleep(1.0)
        text = agent_bursts.scrape(port)
    finally:
        agent.terminate()
        agent.wait()
    made = procs * calls
    shown = agent_bursts.calls(text, "dlt_test_je")
    errors = [v for lbl, v in agent_bursts.samples(text, "dlprof_sampled_relative_error").items()
              if "dlt_test_je" in lbl]
    ws = windows_of(log)
    os.unlink(log)
    if not ws:
        sys.exit("agent_short_lives: no sampling window saw a call (was the function sampled?)")
    span = sum(w[1] for w in ws)
    counted = sum(w[2] for w in ws)
    made_win = sum(made_in(lives, calls, w[0], w[0] + w[1]) for w in ws)
    made_before = sum(made_in(lives, calls, w[0] - 0.15, w[0] - 0.05) for w in ws)
    k = sum(w[2] * w[3] for w in ws) / counted
    started_in = sum(1 for a, _ in lives if any(w[0] <= a < w[0] + w[1] for w in ws))
    life_in = [b - a for a, b in lives if any(w[0] <= a < w[0] + w[1] for w in ws)]
    life_before = [b - a for a, b in lives if any(w[0] - 0.15 <= a < w[0] - 0.05 for w in ws)]
    return {
        "build": build, "made": made, "shown": shown, "error_pct": round((shown / made - 1) * 100, 1),
        "relative_error": errors[0] if errors else None, "workload_s": round(took, 2), "windows": len(ws),
        "counted_over_made_in_windows": round(counted / made_win, 3),
        "made_per_s_in_windows": round(made_win / span), "made_per_s_before": round(made_before / (0.1 * len(ws))),
        "made_per_s_overall": round(made / took), "unprobed_factor": round(k, 3),
        "started_per_s_in_windows": round(started_in / span), "started_per_s_overall": round(procs / took),
        "life_ms_in_windows": round(median(life_in) * 1e3, 2), "life_ms_before": round(median(life_before) * 1e3, 2),
        "estimate_over_truth": round(made_win / span * k / (made / took), 3),
        "by_starts_over_truth": round(counted / started_in * procs / made, 3) if started_in else None,
    }


def show(row, procs, calls):
    rel = f"{row['relative_error']:.1%}" if row["relative_error"] is not None else "none"
    print(f"{row['build']}: {procs} processes of {calls} calls in {row['workload_s']:.1f} s: made {row['made']:,}, "
          f"shown {row['shown']:,.0f} ({row['error_pct']:+.1f}%), relative error {rel}")
    print(f"  counting: {row['windows']} windows counted {row['counted_over_made_in_windows']:.3f} of the calls "
          "made in their spans")
    print(f"  pace: {row['made_per_s_in_windows']:,} calls/s made in windows, {row['made_per_s_before']:,} "
          f"50-150 ms before them, {row['made_per_s_overall']:,} over the run; processes started "
          f"{row['started_per_s_in_windows']:,}/s in windows, {row['started_per_s_overall']:,}/s over the run; "
          f"unprobed factor {row['unprobed_factor']:.3f} (windows' rate x factor over the run's: "
          f"{row['estimate_over_truth']:.3f})")
    if row["by_starts_over_truth"] is not None:
        print(f"  by starts: the windows' calls per process started in them, times the processes started over "
              f"the run: {row['by_starts_over_truth']:.3f} of the truth")
    print(f"  lives: median {row['life_ms_in_windows']} ms started in windows, {row['life_ms_before']} ms "
          "50-150 ms before them")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--baseline", help="another build directory, run alternately with --build")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--procs", type=int, default=23000)
    ap.add_argument("--calls", type=int, default=100)
    ap.add_argument("--parallel", type=int, default=4)
    args = ap.parse_args()
    rows = []
    for _ in range(args.rounds):
        for build in ([args.baseline] if args.baseline else []) + [args.build]:
            rows.append(run(build, args.procs, args.calls, args.parallel))
            show(rows[-1], args.procs, args.calls)
    print(json.dumps({"bench": "agent_short_lives", "rows": rows}))


if __name__ == "__main__":
    main()
