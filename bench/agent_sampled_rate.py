#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""A sampled function's series against the calls the program really made.

    sudo bench/agent_sampled_rate.py [--build build] [--work 1000,16000]
                                     [--paced 1000,5000,20000,50000]
                                     [--cpu-us 25] [--intervals 4]
                                     [--interval-s 30] [--attach MODE]

For each --work (steps of the caller's own work between two calls of
dlt_test_je, whose probe the kernel emulates; a step is a multiply-add in
a register, about 1.2 ns on an x86-64 VM, so 1000 steps take about as
long as a probed call), the test library's steady workload (dltest_driver steady) runs
under the agent at its default budget, so that dlt_test_je is sampled. After
the cold start and a first window, the agent is scraped every
--interval-s seconds; each interval's increase of its calls (the
exact and the sampled="true" series together) is set against the
workload's own count over the same interval. The calls per second the
agent's windows saw (its -v log), against the workload's own pace (its
count, read every ms), show what the probes cost it while they are in.

Prints one line per interval and per --work a summary, then one JSON line.
"""
import argparse
import bisect
import json
import os
import re
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(port, path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, ""
    except OSError:
        return 0, ""


def calls(text, function):
    """A function's calls, exact and sampled series together."""
    return sum(float(v) for lbl, v in re.findall(r'^dlprof_calls_total\{([^}]*)\} (\S+)$', text, re.M)
               if f'function="{function}"' in lbl)


def sampled_calls(text, function):
    """A function's sampled="true" series' calls (0 before they are served)."""
    return sum(float(v) for lbl, v in re.findall(r'^dlprof_calls_total\{([^}]*)\} (\S+)$', text, re.M)
               if f'function="{function}"' in lbl and 'sampled="true"' in lbl)


def sampled(text):
    m = re.search(r'^dlprof_agent_functions\{state="sampled"\} (\S+)$', text, re.M)
    return float(m.group(1)) if m else 0


class Counter:
    """The workload's own count (8 bytes in a file it maps), sampled every ms with the time."""

    def __init__(self, path):
        self.path, self.log, self.stop = path, [], False
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def read(self):
        with open(self.path, "rb") as f:
            data = f.read(8)
        return struct.unpack("Q", data)[0] if len(data) == 8 else 0

    def run(self):
        while not self.stop:
            self.log.append((time.time(), self.read()))
            time.sleep(0.001)

    def at(self, t):
        """The count at wall time t, interpolated; None outside the samples."""
        log = self.log[:]
        k = bisect.bisect_left(log, (t, -1))
        if k == 0 or k >= len(log):
            return None
        (t0, c0), (t1, c1) = log[k - 1], log[k]
        return c0 + (c1 - c0) * (t - t0) / (t1 - t0) if t1 > t0 else c0


def windows(log_text, counter):
    """The agent's sampling windows (it logs them with -v): the calls per second each saw, those
    times the factor it scaled them by (the probes' own cost taken out), and the calls the
    workload counted itself over the window's span (None where unknown)."""
    out = []
    for line in log_text.splitlines():
        m = re.search(r"event=window functions=\d+ ms=([\d.]+) calls=(\d+) unprobed_factor=([\d.]+)", line)
        if not m or float(m.group(1)) <= 0 or "calibration=true" in line:
            continue
        ms, final = float(m.group(1)), float(m.group(2))
        # The calls counted by the end of its span, where the log has them: classic probes count on
        # until closed, and the agent's factor takes those out.
        at_free = re.search(r"calls_at_free=(\d+)", line)
        seen_calls = float(at_free.group(1)) if at_free else final
        seen = seen_calls / ms * 1e3
        own = None
        f = re.search(r"from_unix=([\d.]+)", line)
        if f:
            a, b = counter.at(float(f.group(1))), counter.at(float(f.group(1)) + ms / 1e3)
            own = b - a if a is not None and b is not None else None
        out.append({"ms": ms, "calls": seen_calls, "seen": seen, "scaled": final / ms * 1e3 * float(m.group(3)),
                    "workload_calls": own})
    return out


def pace(counter):
    """The workload's own calls per second, over each second of the run."""
    out, t0 = [], counter.log[1][0] if len(counter.log) > 1 else 0
    while counter.log and t0 + 1 < counter.log[-1][0]:
        out.append(counter.at(t0 + 1) - counter.at(t0))
        t0 += 1
    return out


def run_one(args, work, driver_args=None):
    """One workload under the agent: dltest_driver steady WORK, or driver_args (its count's path
    appended); work labels its lines."""
    lib = os.path.join(args.build, "tests/progs/libdltest.so")
    driver = os.path.join(args.build, "tests/progs/dltest_driver")
    port = free_port()
    tmp = tempfile.mkdtemp()
    count_path = os.path.join(tmp, "count")
    log = open(os.path.join(tmp, "agent.log"), "w+")
    agent = subprocess.Popen([os.path.join(args.build, "user/dlprof-bpf"), "agent", "--listen", f"127.0.0.1:{port}",
                              "--lib", lib, "--func", "dlt_test_je", "-v"] +
                             (["--attach", args.attach] if args.attach else []), stderr=log)
    rows = []
    try:
        while get(port, "/healthz")[0] != 200:
            if agent.poll() is not None:
                sys.exit(f"agent exited: {open(log.name).read()}")
            time.sleep(0.05)
        wl = subprocess.Popen([driver] + (driver_args or ["steady", str(work)]) + [count_path])
        while not os.path.exists(count_path):
            time.sleep(0.01)
        counter = Counter(count_path)
        # Sampled, and a first window has given its series a rate.
        deadline = time.time() + 60
        while time.time() < deadline:
            text = get(port, "/metrics")[1]
            # A series is served at zero the first time (docs/agent.md): wait until it shows its calls.
            if sampled(text) >= 1 and sampled_calls(text, "dlt_test_je") > 0:
                break
            time.sleep(0.2)
        time.sleep(args.interval_s / 2)
        prev = None
        for _ in range(args.intervals + 1):
            t = time.time()
            text = get(port, "/metrics")[1]
            cur = (counter.at((t + time.time()) / 2) or counter.read(), calls(text, "dlt_test_je"))
            if prev:
                truth, shown = cur[0] - prev[0], cur[1] - prev[1]
                rows.append((truth, shown))
                print(f"work={work} interval: workload {truth:,.0f} calls, series {shown:,.0f} "
                      f"({(shown / truth - 1) * 100:+.1f}%)", flush=True)
            prev = cur
            time.sleep(args.interval_s)
        counter.stop = True
        wl.kill()
        wl.wait()
    finally:
        agent.terminate()
        agent.wait()
    log.seek(0)
    inside, outside = windows(log.read(), counter), pace(counter)
    for w in inside:
        own = f"{w['workload_calls']:,.0f}" if w["workload_calls"] is not None else "?"
        print(f"work={work} window: {w['ms']:.1f} ms, agent {w['calls']:,.0f} calls, workload {own}; "
              f"{w['seen']:,.0f}/s scaled to {w['scaled']:,.0f}/s", flush=True)
    truth, shown = sum(r[0] for r in rows), sum(r[1] for r in rows)
    summary = {
        "work": work,
        "intervals": len(rows),
        "interval_s": args.interval_s,
        "truth": truth,
        "shown": shown,
        "error_pct": round((shown / truth - 1) * 100, 2) if truth else None,
        "worst_interval_error_pct": round(max((abs(s / t - 1) for t, s in rows if t), default=0) * 100, 2),
        "windows": len(inside),
        "pace_in_window_per_s": round(statistics.median(w["seen"] for w in inside)) if inside else None,
        "pace_in_window_corrected_per_s": round(statistics.median(w["scaled"] for w in inside)) if inside else None,
        "pace_outside_per_s": round(statistics.median(outside)) if outside else None,
    }
    print(f"work={work}: {len(rows)} x {args.interval_s:.0f} s, workload {truth:,.0f}, series {shown:,.0f} "
          f"({summary['error_pct']:+.1f}%, worst interval {summary['worst_interval_error_pct']:.1f}%); "
          f"pace seen in {len(inside)} windows {summary['pace_in_window_per_s']}/s "
          f"(scaled {summary['pace_in_window_corrected_per_s']}/s), "
          f"the workload's own {summary['pace_outside_per_s']}/s", flush=True)
    return summary


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--work", default="1000,16000")
    ap.add_argument("--paced", default="",
                    help="also callers at these calls a second, 10 us of work each, idle in between")
    ap.add_argument("--cpu-us", default="",
                    help="also callers that run flat out, these microseconds of work a call")
    ap.add_argument("--intervals", type=int, default=4)
    ap.add_argument("--interval-s", type=float, default=30)
    ap.add_argument("--attach", help="the agent's attach mode (default: its own choice)")
    args = ap.parse_args()
    if os.geteuid():
        sys.exit("needs root")
    out = [run_one(args, int(w)) for w in args.work.split(",") if w]
    out += [run_one(args, f"paced-{r}", ["paced", r, "10"]) for r in args.paced.split(",") if r]
    out += [run_one(args, f"cpu-{us}us", ["steady-us", us]) for us in args.cpu_us.split(",") if us]
    print(json.dumps({"bench": "agent_sampled_rate", "runs": out}))


if __name__ == "__main__":
    main()
