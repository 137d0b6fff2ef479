#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The agent's overhead budget on the issue's case: `openssl speed -bytes 64
sha256` with every export of libcrypto.so.3 probed system-wide.

    sudo bench/agent_budget.py [--build build] [--seconds 2] [--runs 5]
                               [--max-overhead PCT] [--top 10] [--long 240]

In one invocation:
  truth      the CLI probes every libcrypto export full time on one run of
             openssl speed: calls per digest of each function;
  baseline   openssl speed unprobed (before and after the agent), bytes/s;
  hot start  openssl already running (a run of --seconds + 2) when the
             agent starts: the agent's cold start (every function sampled
             until measured) against an unprobed run of the same length;
  agent      the agent on all of libcrypto under its budget (the default
             unless --max-overhead): one first run right after /readyz
             (cold: every function idle at the start was linked), then
             --runs runs, bytes/s; throughput loss;
  rates      one --long seconds run under the agent: the call rates its
             metrics show (exact and sampled series together, between
             scrapes taken as sampling windows close inside the run) for the
             --top hottest functions, against: a reference taken right
             after each window, the CLI probing every export of the same
             openssl process for 4 s (what a full-time probe counts at that
             moment: runs minutes apart had moved by up to 34% with the
             load of a shared VM), the ratio to the hottest function against
             calls per digest (load cancels out), and calls per digest x the
             digests per second of this run (what the program really did:
             probes in a window slow the calls they count, see
             docs/agent.md).

Prints a table and one JSON line (bench/README.md).
"""
import argparse
import json
import os
import re
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

def speed_cmd(seconds):
    return ["openssl", "speed", "-mr", "-seconds", str(seconds), "-bytes", "64", "sha256"]


def libcrypto():
    out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    m = re.search(r"libcrypto\.so\.3 .*=> (\S+)", out)
    if not m:
        sys.exit("libcrypto.so.3 not found (apt-get install libssl3)")
    return m.group(1)


def parse_speed(out, seconds):
    """(digests, bytes per second of wall time) from openssl speed -mr. Its own +F figure
    divides by the process's user time: the time the kernel spends in the probes' traps
    is system time and would not show there. The run lasts -seconds of wall time (alarm)."""
    r = re.search(r"^\+R:(\d+):sha256:", out, re.M)
    if not r:
        sys.exit(f"cannot read openssl speed's output: {out!r}")
    return int(r.group(1)), int(r.group(1)) * 64 / seconds


def children_cpu_s():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime, ru.ru_stime


def speed(seconds, prefix=()):
    """(digests, bytes/s of wall time, bytes per CPU second of openssl, kernel share of
    openssl's CPU). The third does not move with the other load of a shared VM: the
    probes' traps are openssl's own (system) CPU time, other processes' are not. The
    fourth does not move with the VM's speed either (both halves are the same run's):
    the probes' traps, the breakpoints written into its pages, are its system time,
    its digests its user time."""
    u0, s0 = children_cpu_s()
    p = subprocess.run(list(prefix) + speed_cmd(seconds), capture_output=True, text=True, check=True)
    digests, bps = parse_speed(p.stdout + p.stderr, seconds)
    u1, s1 = children_cpu_s()
    return digests, bps, digests * 64 / (u1 - u0 + s1 - s0), (s1 - s0) / (u1 - u0 + s1 - s0)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        return r.read().decode()


def calls_by_function(text):
    """Every series of dlprof_calls_total summed per function (exact + sampled)."""
    calls = {}
    for line in text.splitlines():
        m = re.match(r'dlprof_calls_total\{([^}]*)\} (\S+)$', line)
        if not m:
            continue
        fn = re.search(r'function="([^"]*)"', m.group(1)).group(1)
        calls[fn] = calls.get(fn, 0.0) + float(m.group(2))
    return calls


def metric(text, name):
    m = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


def probed_run(dlprof, lib, seconds):
    """Every export probed full time by the CLI with the default events, as the agent probes:
    (calls of each function, digests, bytes/s)."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "truth.json")
        p = subprocess.run([dlprof, "--lib", lib, "--json", "-o", out, "--"] + speed_cmd(seconds),
                           capture_output=True, text=True, check=True)
        digests, bps = parse_speed(p.stdout + p.stderr, seconds)
        with open(out) as f:
            doc = json.load(f)
    return {fn["name"]: fn["calls"] for fn in doc["functions"] if fn["calls"]}, digests, bps


def truth(dlprof, lib, seconds):
    """Calls per digest of each function, from two probed runs (seconds and 2 x seconds):
    the difference leaves out what openssl calls once, at start and exit. And the bytes/s
    of the longer run."""
    c1, d1, _ = probed_run(dlprof, lib, seconds)
    c2, d2, bps = probed_run(dlprof, lib, 2 * seconds)
    per_digest = {fn: (c2[fn] - c1.get(fn, 0)) / (d2 - d1) for fn in c2 if c2[fn] > c1.get(fn, 0)}
    return per_digest, bps


REFERENCE_S = 4


def reference_rates(dlprof, lib, pid):
    """The CLI probing every export of process pid for REFERENCE_S, with the default events as the
    agent probes: calls per second of each function in each 1 s interval but the first (its span
    begins at the end of attaching, its calls during it). A list, one dict per interval."""
    p = subprocess.run([dlprof, "--lib", lib, "-p", str(pid), "-d", str(REFERENCE_S), "-i", "1", "--json"],
                       capture_output=True, text=True)
    rates = []
    for line in p.stdout.splitlines():
        d = json.loads(line)
        if d.get("interval", 0) >= 2 and d["interval_s"] >= 0.5:
            rates.append({f["name"]: f["interval"]["calls"] / d["interval_s"] for f in d["functions"]})
    return rates


def rates_during(dlprof, lib, port, seconds):
    """openssl speed for seconds under the agent. Each sampling window's close brings the sampled
    series up to date at its rate; right after it the CLI takes a reference on the same process
    (kept unless a window opened meanwhile). Returns the agent's and the references' rates of each
    function over the windows that have one (time-weighted), how many, the references' spread per
    function and the run's digests/s. (Its CPU is not the agent's cost: the references probe every
    export full time.)"""
    run = subprocess.Popen(speed_cmd(seconds), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    t_start = time.time()
    snaps = []
    last_windows = None
    while run.poll() is None:
        text = scrape(port)
        w = metric(text, "dlprof_agent_sampling_windows_total")
        if last_windows is not None and w != last_windows:
            snaps.append((time.time(), calls_by_function(text), None))
            if time.time() < t_start + seconds - REFERENCE_S - 2:
                ref = reference_rates(dlprof, lib, run.pid)
                w2 = metric(scrape(port), "dlprof_agent_sampling_windows_total")
                if ref and w2 == w:
                    snaps[-1] = snaps[-1][:2] + (ref,)
                w = w2
        last_windows = w
        time.sleep(0.1)
    digests, bps = parse_speed(run.stdout.read(), seconds)
    run.wait()
    # The first window closed in the run still extrapolates back before it: its increment is left out.
    inside = [sn for sn in snaps if sn[0] > t_start + 0.5]
    pairs = [(a, b) for a, b in zip(inside, inside[1:]) if b[2]]
    if len(pairs) < 2:
        sys.exit(f"fewer than 2 sampling windows with a reference in the {seconds} s run: run longer (--long)")
    span = sum(b[0] - a[0] for a, b in pairs)
    agent, ref, spread = {}, {}, {}
    for fn in pairs[-1][1][1]:
        agent[fn] = sum(b[1].get(fn, 0.0) - a[1].get(fn, 0.0) for a, b in pairs) / span
        per_window = [statistics.mean(r.get(fn, 0.0) for r in b[2]) for a, b in pairs]
        ref[fn] = sum(x * (b[0] - a[0]) for x, (a, b) in zip(per_window, pairs)) / span
        spread[fn] = (max(per_window) - min(per_window)) / ref[fn] if ref[fn] else 0.0
    return agent, ref, len(pairs), spread, digests / seconds


def hot_start(dlprof, lib, port, max_overhead, seconds):
    """openssl speed for seconds, already running when the agent starts (its cold start then measures
    every function while openssl runs): (openssl's speed() tuple, the agent, still running)."""
    res = []
    runner = threading.Thread(target=lambda: res.append(speed(seconds)))
    runner.start()
    time.sleep(0.3)
    agent = start_agent(dlprof, lib, port, max_overhead)
    runner.join()
    return res[0], agent


def two_builds(doc, rounds, extra=()):
    """The A/B benches' options, and extra (name, default) integer ones: (args, the two builds'
    binaries by name, the order of each round's turns)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--baseline", required=True, help="the other build's directory")
    ap.add_argument("--rounds", type=int, default=rounds)
    for name, default in extra:
        ap.add_argument(name, type=int, default=default)
    a = ap.parse_args()
    builds = {"build": os.path.join(a.build, "user", "dlprof-bpf"),
              "baseline": os.path.join(a.baseline, "user", "dlprof-bpf")}
    turns = [("build", "baseline") if r % 2 == 0 else ("baseline", "build") for r in range(a.rounds)]
    return a, builds, turns


def start_agent(dlprof, lib, port, max_overhead):
    args = [dlprof, "agent", "--lib", lib, "--listen", f"127.0.0.1:{port}"]
    if max_overhead:
        args += ["--max-overhead", max_overhead]
    agent = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    # Ready: /readyz; a build from before it (--baseline) said readiness on /healthz.
    path = "/readyz"
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as r:
                if r.status == 200:
                    return agent
        except urllib.error.HTTPError as e:
            if e.code == 404:
                path = "/healthz"
        except OSError:
            pass
        if agent.poll() is not None:
            sys.exit(f"agent exited: {agent.stderr.read()}")
        time.sleep(0.2)
    sys.exit("agent did not attach in 120 s")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--seconds", type=int, default=2)
    ap.add_argument("--runs", type=int, default=5)
    # Windows come every 20-50 s once the hot functions are sampled at a 1% budget: at least 3 in the run.
    ap.add_argument("--long", type=int, default=240)
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--max-overhead", default=None, help="the agent's budget (default: its own default)")
    a = ap.parse_args()
    dlprof = os.path.join(a.build, "user", "dlprof-bpf")
    lib = libcrypto()
    port = free_port()

    per_digest, truth_bps = truth(dlprof, lib, a.seconds)
    hottest = sorted(per_digest, key=per_digest.get, reverse=True)[:a.top]
    base_runs = [speed(a.seconds) for _ in range(a.runs)]

    hot_len = a.seconds + 2
    hot_base = speed(hot_len)
    hot, agent = hot_start(dlprof, lib, port, a.max_overhead, hot_len)
    try:
        cold_run = speed(a.seconds)
        under_runs = [speed(a.seconds) for _ in range(a.runs)]
        rates, ref_rate, nr_refs, ref_spread, digests_per_s = rates_during(dlprof, lib, port, a.long)
        after = scrape(port)
    finally:
        agent.terminate()
        _, log = agent.communicate(timeout=120)
    base_runs += [speed(a.seconds) for _ in range(a.runs)]
    base = [r[1] for r in base_runs]
    under = [r[1] for r in under_runs]
    cold = cold_run[1]
    base_cpu = statistics.median(r[2] for r in base_runs)
    base_ks = statistics.median(r[3] for r in base_runs)
    under_cpu = statistics.median(r[2] for r in under_runs)

    rows = []
    ref = hottest[0]
    for fn in hottest:
        real = per_digest[fn] * digests_per_s
        got = rates.get(fn, 0.0)
        want = ref_rate.get(fn, 0.0)
        rows.append({"function": fn, "calls_per_digest": round(per_digest[fn], 3),
                     "agent_rate": round(got), "reference_rate": round(want), "real_rate": round(real),
                     "error_vs_reference": round(got / want - 1, 4) if want else None,
                     "reference_spread": round(ref_spread.get(fn, 0.0), 4),
                     # calls of fn per call of the hottest, against calls per digest: the load cancels out
                     "ratio_error": round((got / rates[ref]) / (per_digest[fn] / per_digest[ref]) - 1, 4)
                     if rates.get(ref) else None,
                     "error_vs_real": round(got / real - 1, 4)})
    named = sorted(rates, key=rates.get, reverse=True)[:a.top]
    b, u = statistics.median(base), statistics.median(under)
    res = {
        "baseline_bytes_per_s": round(b), "probed_full_bytes_per_s": round(truth_bps),
        "agent_cold_bytes_per_s": round(cold), "agent_bytes_per_s": round(u),
        "throughput_loss": round(1 - u / b, 4), "cold_loss": round(1 - cold / b, 4),
        "baseline_bytes_per_cpu_s": round(base_cpu), "agent_bytes_per_cpu_s": round(under_cpu),
        "cpu_throughput_loss": round(1 - under_cpu / base_cpu, 4),
        "cold_cpu_loss": round(1 - cold_run[2] / base_cpu, 4),
        "hot_start_loss": round(1 - hot[1] / hot_base[1], 4),
        "hot_start_cpu_loss": round(1 - hot[2] / hot_base[2], 4),
        # What the probes took of openssl's own CPU, less what the kernel takes unprobed: the VM's speed cancels out.
        "kernel_share_unprobed": round(base_ks, 4),
        "probe_share_cold": round(cold_run[3] - base_ks, 4),
        "probe_share_agent": round(statistics.median(r[3] for r in under_runs) - base_ks, 4),
        "probe_share_hot_start": round(hot[3] - hot_base[3], 4),
        "base_spread": round((max(base) - min(base)) / b, 4),
        "budget_ratio": metric(after, "dlprof_agent_budget_ratio"),
        "sampled_functions": metric(after, 'dlprof_agent_functions{state="sampled"}'),
        "agent_cpu_s": metric(after, "dlprof_agent_cpu_seconds_total"),
        "windows": metric(after, "dlprof_agent_sampling_windows_total"),
        "relink_gap_s": metric(after, "dlprof_agent_relink_gap_seconds_total"),
        "top": rows,
        "top_named_by_agent": len(set(named) & set(hottest)),
        "reference_windows": nr_refs,
        "max_abs_error_vs_reference": max(abs(r["error_vs_reference"]) if r["error_vs_reference"] is not None
                                          else 1.0 for r in rows),
        "max_abs_ratio_error": max(abs(r["ratio_error"]) for r in rows if r["ratio_error"] is not None),
        "max_abs_error_vs_real": max(abs(r["error_vs_real"]) for r in rows),
    }
    print(f"openssl speed -bytes 64 sha256, {a.seconds} s runs, medians of {a.runs}:")
    print(f"  unprobed {b / 1e6:8.1f} MB/s   all exports full time {truth_bps / 1e6:6.1f} MB/s")
    print(f"  agent    {u / 1e6:8.1f} MB/s   loss {res['throughput_loss']:.1%}   (first run, cold: "
          f"{cold / 1e6:.1f} MB/s, loss {res['cold_loss']:.1%})")
    print(f"  per CPU second of openssl (the load of other processes cancels out): unprobed "
          f"{base_cpu / 1e6:.1f} MB, agent {under_cpu / 1e6:.1f} MB, loss {res['cpu_throughput_loss']:.1%} "
          f"(cold run: {res['cold_cpu_loss']:.1%}); unprobed wall runs spread {res['base_spread']:.0%}")
    print(f"  hot start (openssl running when the agent starts, {hot_len} s): loss {res['hot_start_loss']:.1%} "
          f"(per CPU s: {res['hot_start_cpu_loss']:.1%})")
    print(f"  openssl's CPU in the probes (its kernel time less the unprobed {base_ks:.2%}): first run "
          f"{res['probe_share_cold']:.2%}, the runs after {res['probe_share_agent']:.2%}, hot start "
          f"{res['probe_share_hot_start']:.2%}")
    print(f"hottest {a.top} functions, calls/s during a {a.long} s run ({nr_refs} windows with a reference "
          f"right after); the agent's top {a.top} holds {res['top_named_by_agent']} of them:")
    print(f"  {'function':32s} {'agent':>9s} {'reference':>10s} {'(spread)':>8s} {'error':>7s} {'ratio err':>9s} "
          f"{'real':>12s} {'error':>7s}")
    for r in rows:
        err = f"{r['error_vs_reference']:+7.1%}" if r["error_vs_reference"] is not None else f"{'-':>7s}"
        ratio = f"{r['ratio_error']:+9.1%}" if r["ratio_error"] is not None else f"{'-':>9s}"
        print(f"  {r['function']:32s} {r['agent_rate']:>9,} {r['reference_rate']:>10,} {r['reference_spread']:>8.1%} "
              f"{err} {ratio} {r['real_rate']:>12,} {r['error_vs_real']:+7.1%}")
    print("agent log:\n" + "".join("  " + line + "\n" for line in log.splitlines()[-8:]))
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
