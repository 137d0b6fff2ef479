#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""dlprof-bpf agent: the real BPF programs on the test library, real
processes calling it, /metrics scraped over HTTP and compared with the
workload's own counts; promtool on a real scrape; signals; --max-series;
the budget; a podman container set up like a Kubernetes pod.
Runner and helpers: itest.py."""
import contextlib
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid

import itest
from itest import *  # noqa: F401,F403 (the shared helpers and environment)
from promserver import prometheus, promql, require_prometheus


LOGFMT = re.compile(r'^ts=\S+ event=[a-z_]+( [a-z_]+=("([^"\\]|\\.)*"|\S*))*$')


class Agent:
    """The agent in the background on 127.0.0.1:<free port>; its log kept."""

    def __init__(self, args, env=None, port=None):
        self.port = port or free_port()
        cmd = [DLPROF, "agent", "--listen", f"127.0.0.1:{self.port}", "--refresh", "0.2"]
        if ATTACH:
            cmd += ["--attach", ATTACH]
        # Appending, and read through a description of its own (text()): nothing the test does
        # moves where the agent's next line goes.
        self.log = tempfile.TemporaryFile(mode="a+")
        self.p = subprocess.Popen(cmd + list(args), stderr=self.log, env=env)

    def get(self, path):
        """(status, body); status 0 while nothing listens."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()
        except OSError:
            return 0, ""

    def wait_status(self, path, want, timeout):
        """Polls path until it answers want; the statuses seen on the way."""
        deadline = time.time() + timeout
        seen = set()
        while time.time() < deadline:
            status, _ = self.get(path)
            seen.add(status)
            if status == want:
                return seen
            check(self.p.poll() is None, f"agent exited {self.p.returncode}: {self.text()}")
            time.sleep(0.02)
        raise AssertionError(f"{path} never said {want} (saw {seen}): {self.text()}")

    def wait_ready(self, want=200, timeout=60):
        """/readyz: 200 once the calls of the functions in the links are counted exactly."""
        return self.wait_status("/readyz", want, timeout)

    def text(self):
        # A file description of our own: the agent's, shared with self.log, moves as it writes.
        with open(f"/proc/self/fd/{self.log.fileno()}") as f:
            return f.read()

    def metrics(self):
        status, body = self.get("/metrics")
        check(status == 200, f"/metrics answered {status}")
        return body

    def stop(self, sig=signal.SIGTERM):
        self.p.send_signal(sig)
        self.p.wait(timeout=60)
        # The log's contract: every line logfmt, the engine's warnings too.
        bad = [l for l in self.text().splitlines() if not LOGFMT.match(l)]
        check(not bad, f"log lines that are not logfmt: {bad[:5]}")
        return self.p.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


def samples(text, name):
    """{labels string: value} of one metric name."""
    out = {}
    for m in re.finditer(rf"^{re.escape(name)}(\{{[^}}]*\}})? (\S+)$", text, re.M):
        out[m.group(1) or ""] = float(m.group(2))
    return out


def calls_per_container(text, function):
    """{container id: calls} of a function's series that carry a container label."""
    out = {}
    for lbl, v in samples(text, "dlprof_calls_total").items():
        if f'function="{function}"' in lbl and 'container="' in lbl:
            cid = lbl.split('container="')[1].split('"')[0]
            out[cid] = out.get(cid, 0) + v
    return out


def calls(text, function, sampled=False):
    total = 0.0
    for labels, v in samples(text, "dlprof_calls_total").items():
        if f'function="{function}"' in labels and ('sampled="true"' in labels) == sampled:
            total += v
    return total


def wait_value(agent, fn, want, timeout=10):
    """The metrics until fn(text) == want (the agent reads every --refresh)."""
    deadline = time.time() + timeout
    text = ""
    while time.time() < deadline:
        text = agent.metrics()
        if fn(text) == want:
            return text
        time.sleep(0.1)
    raise AssertionError(f"wanted {want}, got {fn(text)}")


def run_driver(args):
    p = subprocess.run([DRIVER] + args, capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"driver failed: {p.stderr}")
    return p


@modes("session", "multi", "classic")
def test_agent_exact_counts_and_histogram():
    """dlprof_calls_total equals the workload's count; the histogram's count is the timed calls."""
    with Agent(["--lib", LIB, "--max-overhead", "off"]) as a:
        a.wait_ready()
        run_driver(["count", "54321"])
        text = wait_value(a, lambda t: calls(t, "dlt_add"), 54321)
        buckets = [(float("inf") if le == "+Inf" else float(le), v) for lbl, v in
                   samples(text, "dlprof_call_duration_seconds_bucket").items()
                   if 'function="dlt_add"' in lbl for le in re.findall(r'le="([^"]+)"', lbl)]
        buckets.sort()
        check(len(buckets) == 14, f"{len(buckets)} buckets, want 13 bounds and +Inf")
        check(all(b[1] <= c[1] for b, c in zip(buckets, buckets[1:])), f"buckets not cumulative: {buckets}")
        count = [v for lbl, v in samples(text, "dlprof_call_duration_seconds_count").items() if 'function="dlt_add"' in lbl]
        check(count == [54321] and buckets[-1][1] == 54321, f"histogram count {count}, +Inf {buckets[-1]}")
        # Which durations these are, as the CLI's summary of the same probes says it.
        check(samples(text, "dlprof_agent_copy_discovery_lost_total").get("") == 0, "discovery events lost, or no metric")
        info = list(samples(text, "dlprof_agent_info"))
        rc, doc, err = run_profiled([DRIVER, "count", "10"], ["--func", "dlt_add"])
        check(rc == 0 and len(info) == 1 and f'latency="{doc["latency"]}"' in info[0],
              f"agent {info}, CLI latency {doc and doc['latency']}: {err}")
        check(a.stop() == 0, f"SIGTERM: exit {a.p.returncode}: {a.text()}")
        check("event=attach" in a.text() and "event=flush" in a.text() and "event=detach" in a.text(),
              f"log lines missing: {a.text()}")


@modes("session", "classic")
def test_agent_scrape_sees_calls_of_now():
    """A scrape serves the counts of its own moment, not the last refresh's (here a minute apart):
    an increase() over a scrape interval is then off by nothing at its ends."""
    with Agent(["--lib", LIB, "--func", "dlt_add", "--max-overhead", "off", "--refresh", "60"]) as a:
        a.wait_ready()
        # The series made and past its first scrape (which shows a new series at 0).
        run_driver(["count", "1"])
        before = calls(wait_value(a, lambda t: calls(t, "dlt_add"), 1), "dlt_add")
        run_driver(["count", "12345"])
        t0 = time.time()
        now = calls(a.metrics(), "dlt_add")
        took = time.time() - t0
        check(now - before == 12345, f"the scrape right after 12345 calls shows {now - before:.0f}")
        check(took < 1, f"the scrape took {took:.2f} s")
        check(a.stop() == 0, f"exit {a.p.returncode}")


def prometheus_up(url, port, timeout=30):
    """Once Prometheus has scraped the agent on port."""
    deadline = time.time() + timeout
    while [v for _, v in promql(url, f'up{{instance="127.0.0.1:{port}"}}')] != [1.0]:
        check(time.time() < deadline, f"Prometheus does not reach the agent: {promql(url, 'up')}")
        time.sleep(0.2)


@modes("session")
def test_agent_prometheus_rates_a_short_life():
    """A process that lives between two scrapes (its calls all made there) is seen by the real
    Prometheus: its new series is exposed at 0 to the first scrape that sees it and with its
    count from the next, so increase() over a range holding both is its count and
    histogram_quantile() over it a duration, not NaN (a series born holding its count rises
    by nothing in Prometheus' eyes)."""
    require_prometheus()
    n = 4321
    query = 'dlprof_calls_total{function="dlt_add"}'
    with Agent(["--lib", LIB, "--func", "dlt_add", "--max-overhead", "off", "--refresh", "1"]) as a, \
            prometheus(f"127.0.0.1:{a.port}") as url:
        a.wait_ready()
        prometheus_up(url, a.port)
        run_driver(["count", str(n)])
        deadline = time.time() + 30
        while [v for _, v in promql(url, query)] != [n]:
            check(time.time() < deadline, f"Prometheus never saw {n} calls: {promql(url, query)}")
            time.sleep(0.5)
        (_, values), = promql(url, f"{query}[1m]")
        check(values[0][1] == 0, f"the series' first sample is {values[0][1]:.0f}, not 0: {values}")
        # At its last sample, over a range that holds its first: Prometheus extrapolates nothing
        # (not past the last sample, not below a counter's zero at the start).
        at = values[-1][0]
        (_, got), = promql(url, f"increase({query}[30s])", at=at)
        print(f"increase over 30 s: {got:.1f} for {n} calls ({len(values)} samples over {at - values[0][0]:.1f} s)")
        check(abs(got - n) <= 1e-6 * n, f"increase {got} for {n} calls: {values}")
        buckets = 'sum by (le) (increase(dlprof_call_duration_seconds_bucket{function="dlt_add"}[30s]))'
        (_, median), = promql(url, f"histogram_quantile(0.5, {buckets})", at=at)
        print(f"histogram_quantile(0.5): {median:.3g} s")
        check(0 < median < 1e-3, f"median call {median} s")
        check(a.stop() == 0, f"exit {a.p.returncode}")


def promtool_check(text):
    promtool = shutil.which("promtool")
    if not promtool:
        raise Skip("promtool missing: scripts/deps installs Debian's prometheus package")
    p = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True)
    check(p.returncode == 0 and not p.stdout.strip() and not p.stderr.strip(),
          f"promtool: rc {p.returncode} {p.stdout} {p.stderr}")


@modes("session")
def test_agent_promtool_clean():
    """promtool check metrics finds nothing to say on a real scrape (exact series here; the
    budget test checks one with sampled series)."""
    # Off: 1,000 calls in a burst cost 7 ms of probes where a probe pair costs 7 us, above 1% of a CPU.
    with Agent(["--lib", LIB, "--max-overhead", "off"]) as a:
        a.wait_ready()
        run_driver(["count", "1000"])
        text = wait_value(a, lambda t: calls(t, "dlt_add"), 1000)
        promtool_check(text)
        status, _ = a.get("/nothing")
        check(status == 404, f"/nothing answered {status}")
        a.stop()


@modes("session", "multi")
def test_agent_sighup_reload_and_healthz():
    """/readyz is 503 while nothing is attached, /healthz stays 200 (the agent serves and tries
    again): a reload (SIGHUP) whose library is gone detaches and says so, the next one attaches
    again; counters continue across reloads."""
    with tempfile.TemporaryDirectory() as tmp:
        lib = os.path.join(tmp, "libdltest.so")
        shutil.copy(LIB, lib)
        # No budget: a burst of 1,000 calls may cost more than 1% of a CPU, and this is not its test.
        with Agent(["--lib", lib, "--max-overhead", "off"]) as a:
            seen = a.wait_ready()
            check(seen <= {0, 503, 200}, f"/readyz answered {seen}")
            check(a.get("/healthz") == (200, "ok\n"), f"/healthz of a ready agent: {a.get('/healthz')}")
            run_driver(["dlopen", lib, "1000"])
            wait_value(a, lambda t: calls(t, "dlt_add"), 1000)
            os.rename(lib, lib + ".away")
            a.p.send_signal(signal.SIGHUP)
            a.wait_ready(503)
            status, body = a.get("/healthz")
            check(status == 200 and "not ready: nothing attached" in body, f"/healthz: {status} {body!r}")
            check(a.get("/readyz")[1].startswith("not ready: nothing attached"), f"/readyz: {a.get('/readyz')}")
            check("event=reload" in a.text() and ("what=target" in a.text() or "what=attach" in a.text()),
                  f"no reload error logged: {a.text()}")
            os.rename(lib + ".away", lib)
            a.p.send_signal(signal.SIGHUP)
            a.wait_ready(200)
            run_driver(["dlopen", lib, "500"])
            text = wait_value(a, lambda t: calls(t, "dlt_add"), 1500)
            check(samples(text, "dlprof_agent_reloads_total") == {"": 2}, "reloads not counted")
            check(a.stop() == 0, f"exit {a.p.returncode}")


@modes("multi", "classic")
def test_agent_restart_after_sigkill_healthy_at_once():
    """An agent killed (SIGKILL, as the OOM killer or a node drain does) leaves no program or
    link behind, and the one started in its place is alive (/healthz 200) within 2 s of its
    port listening, still in its cold start (default budget); /readyz follows once the first
    plan is in, and the calls from then on are exact."""
    # 1 ms per call keeps the function inside the default budget: linked, exact.
    args = ["--lib", LIB, "--func", "dlt_sleep_ms"]
    with Agent(args) as old:
        old.wait_ready()
        ours = prog_ids_of(old.p.pid)
        check(ours, "the agent holds no BPF program fd")
        old.p.kill()
        old.p.wait()
        port = old.port
    deadline = time.time() + 10
    while (ours & live_prog_ids()) and time.time() < deadline:
        time.sleep(0.1)
    check(not (ours & live_prog_ids()), f"programs {ours} still referenced after SIGKILL")
    links = link_prog_ids()
    check(links is None or not (ours & links), f"links of {ours} still present after SIGKILL")
    with Agent(args, port=port) as a:
        deadline = time.time() + 30
        while a.get("/healthz")[0] == 0:
            check(a.p.poll() is None and time.time() < deadline, f"never listened: {a.text()}")
            time.sleep(0.005)
        listening = time.monotonic()
        alive_s, states = None, set()
        while True:
            (health, _), (ready, _) = a.get("/healthz"), a.get("/readyz")
            states.add((health, ready))
            if health == 200 and alive_s is None:
                alive_s = time.monotonic() - listening
            if ready == 200:
                break
            check(a.p.poll() is None and time.monotonic() - listening < 60, f"never ready: {a.text()}")
            time.sleep(0.005)
        check(alive_s is not None and alive_s <= 2, f"/healthz 200 after {alive_s} s of listening: {a.text()}")
        # Alive before ready: the cold start (at least its first window's wait) is not a failure.
        check((200, 503) in states, f"/healthz and /readyz answered only {states}")
        print(f"/healthz 200 {alive_s:.3f} s after the port listened; seen {sorted(states)}")
        run_driver(["sleep", "1", "200"])
        wait_value(a, lambda t: calls(t, "dlt_sleep_ms"), 200)
        check(a.stop() == 0, f"exit {a.p.returncode}")


@modes("session")
def test_agent_max_series_folds():
    """--max-series 3: two function series and __other__; folding counted, no call lost."""
    with Agent(["--lib", LIB, "--max-series", "3", "--max-overhead", "off"]) as a:
        a.wait_ready()
        run_driver(["count", "7000"])
        text = wait_value(a, lambda t: sum(samples(t, "dlprof_calls_total").values()) >= 7000 and
                          samples(t, "dlprof_agent_series_folded_total").get("", 0) >= 1, True)
        series = samples(text, "dlprof_calls_total")
        check(len(series) == 3 and any('function="__other__"' in s for s in series), f"series: {series}")
        check(calls(text, "dlt_add") == 7000, f"the busiest series was folded: {series}")
        a.stop()


@modes("session")
def test_agent_budget_samples_hot_function():
    """A budget far below what a hot loop costs: dlt_add leaves the links, is sampled in
    windows, and its series says sampled="true"; the log names the budget action."""
    with Agent(["--lib", LIB, "--func", "dlt_add", "--max-overhead", "0.05"]) as a:
        a.wait_ready()
        d = start_waiting_driver(["count", "2000000"])
        try:
            drive(d)
        finally:
            finish(d)
        # The exact series past its first scrape too (a new series is shown at 0 there).
        text = wait_value(a, lambda t: samples(t, "dlprof_agent_functions").get('{state="sampled"}') == 1 and
                          calls(t, "dlt_add") > 0, True, timeout=20)
        check("event=budget" in a.text(), f"no budget line: {a.text()}")
        check(any('sampled="true"' in s for s in samples(text, "dlprof_calls_total")), "no sampled series")
        check(calls(text, "dlt_add") > 0, "the exact series lost its calls")
        promtool_check(text)
        # Healthy only after the cold start: dlt_add, idle then, was measured cheap and linked.
        check("cold_start=true" in a.text(), f"no cold start logged: {a.text()}")
        a.stop()


def steady_count(path):
    """The steady driver's own count of its calls (8 bytes it keeps up to date)."""
    with open(path, "rb") as f:
        data = f.read(8)
    return struct.unpack("Q", data)[0] if len(data) == 8 else 0


def sampling_windows(log, t0=float("-inf"), t1=float("inf")):
    """The sampling windows' lines of the -v log, those begun between t0 and t1 (Unix seconds);
    scans and cold-start batches left out."""
    return [l for l in re.findall(r"^.* event=window .*$", log, re.M)
            if "scan=" not in l and "calibration=" not in l and
            t0 <= float(dict(re.findall(r"(\w+)=(\S+)", l))["from_unix"]) <= t1]


def window_rates(log, t0, t1):
    """The rates (calls a second, corrected for the probes) that the sampling windows begun
    between t0 and t1 (Unix seconds) measured."""
    rates = []
    for line in sampling_windows(log, t0, t1):
        f = dict(re.findall(r"(\w+)=(\S+)", line))
        if float(f["ms"]) > 0:
            rates.append(float(f["calls"]) * float(f["unprobed_factor"]) / float(f["ms"]) * 1e3)
    return rates


def sampling_error(rates):
    """The standard error, relative, of a total extrapolated from these windows' rates to the
    time around them: their spread over the root of their number."""
    mean = sum(rates) / len(rates)
    sd = (sum((r - mean) ** 2 for r in rates) / (len(rates) - 1)) ** 0.5
    return sd / mean / len(rates) ** 0.5


# How far the calibrated cost of a probed call may miss what it costs the callers (as an error in
# the estimate): past it the model is broken, not merely uncalibrated.
MAX_MISCALIBRATION = 0.35


def window_stats(lines):
    """What the windows saw: calls a second (all their calls over all their time), the factors
    they were scaled by, the cost of a probed call they took (ns), the callers' CPU share
    inside the windows (their probes' taken out) as the agent last summed it, and the
    windows' time (s)."""
    f = [dict(re.findall(r"(\w+)=(\S+)", line)) for line in lines]
    ms = sum(float(w["ms"]) for w in f)
    rate = sum(float(w["calls"]) for w in f) / ms * 1e3
    return (rate, [float(w["unprobed_factor"]) for w in f], float(f[-1]["call_ns"]),
            float(f[-1]["callers_cpu_in"]), ms / 1e3)


def uncalibrated(in_net, in_rate, out_rate, out_share, call_ns):
    """How far the model comes out for a caller that runs flat out, from what the agent cannot
    measure: what a probed call really costs such a caller, against the cost it takes. More (a trap
    costs more once the caller's caches are cold, and its own code runs slower after it): low. Less
    (the cost taken is the larger of the calibration and the windows' kernel time, which other
    programs lift): high. The caller's own count outside the windows gives its work a call; its CPU
    share inside them (what the agent read, the probes as taken added back), over their rate, the
    work and the real cost together."""
    work_s = out_share / out_rate
    in_share = in_net + in_rate * call_ns * 1e-9
    true_s = in_share / in_rate - work_s
    if true_s <= 0 or in_net <= 0:
        return 0.0
    return abs(1 - (in_share - in_rate * true_s) / in_net)


# Windows an interval must hold for the spread of their rates to say what the estimate's error is.
MIN_WINDOWS = 20


def cpu_seconds(pid):
    """A process's CPU time so far (user and system)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@modes("session", "multi")
def test_agent_budget_sampled_counts_match_workload():
    """At the default budget a steadily called function is sampled; its series (exact and
    sampled="true" together) over a scrape interval come close to the calls the workload counted
    itself, though the probes slow the workload while a window holds them: within 5% and the
    sampling error that the windows' spread leaves (the workload's rate moves between windows
    when other programs run beside it, and the series extrapolate each window's rate). The
    model holds for a caller that has its CPU: one that shares it loses more of it while a window
    is open (the agent's and the kernel's work for the window) and comes out low, by up to the
    share of a CPU it lacked (docs/agent.md), which the bound then adds (measured at 89% of a CPU:
    -10.2% and -5.6%; at 68%: -19.3%)."""
    with tempfile.TemporaryDirectory() as tmp, Agent(["--lib", LIB, "--func", "dlt_test_je", "-v"]) as a:
        a.wait_ready()
        count = os.path.join(tmp, "count")
        # 25 us of the caller's own work a call (the driver times its steps on this machine): probed, its
        # calls cost the target several times the default budget, so it is sampled.
        d = subprocess.Popen([DRIVER, "steady-us", "25", count])
        try:
            wait_value(a, lambda t: samples(t, "dlprof_agent_functions").get('{state="sampled"}') == 1 and
                       calls(t, "dlt_test_je", sampled=True) > 0, True, timeout=30)
            time.sleep(2)
            # A scrape waits for the agent's exposition of its moment: the workload's count halfway.
            w0, cpu0 = time.time(), cpu_seconds(d.pid)
            c0, t0, c0b = steady_count(count), a.metrics(), steady_count(count)
            time.sleep(40)
            # Windows come less often while the machine is busy (their attach takes longer): enough of them.
            while len(window_rates(a.text(), w0, time.time())) < MIN_WINDOWS and time.time() < w0 + 120:
                time.sleep(5)
            c1, t1, c1b = steady_count(count), a.metrics(), steady_count(count)
            w1, cpu1 = time.time(), cpu_seconds(d.pid)
            c0, c1 = (c0 + c0b) / 2, (c1 + c1b) / 2
        finally:
            d.kill()
            d.wait()
        made = c1 - c0
        shown = sum(calls(t1, "dlt_test_je", s) - calls(t0, "dlt_test_je", s) for s in (False, True))
        rates = window_rates(a.text(), w0, w1)
        check(len(rates) >= MIN_WINDOWS, f"{len(rates)} windows in {w1 - w0:.0f} s: {a.text()[-3000:]}")
        se = sampling_error(rates)
        share = min(1.0, (cpu1 - cpu0) / (w1 - w0))
        # What a probed call really cost this caller against the calibrated cost the agent takes off
        # (a busy machine moves it): the windows begun in the interval, as agent_pace_test reads them.
        rate, _, call_ns, in_net, _ = window_stats(sampling_windows(a.text(), w0, w1))
        unseen = uncalibrated(in_net, rate, made / (w1 - w0), share, call_ns)
        check(unseen <= MAX_MISCALIBRATION, f"the calibrated cost is {unseen:.1%} off: {a.text()[-3000:]}")
        # #26: within 5% over a scrape interval for a steady caller; a caller that shares its CPU is
        # not steady, and 3 standard errors of the windows' spread are added to the bound, with the
        # share of a CPU it lacked, by which it comes out low, and the calibrated cost's error, which
        # the agent's own error does not hold yet.
        bound = 0.05 + 3 * se + (1 - share) + unseen
        print(f"{w1 - w0:.0f} s: the workload made {made:,.0f} calls, the series show {shown:,.0f} "
              f"({(shown / made - 1) * 100:+.1f}%); {len(rates)} windows, sampling error {se * 100:.1f}%, "
              f"cost beyond the calibration {unseen:.1%}, bound {bound * 100:.1f}%; "
              f"the workload had {share:.0%} of a CPU")
        check(made > 0 and abs(shown / made - 1) <= bound,
              f"series {shown:.0f} against {made} calls, bound {bound:.1%}: {a.text()[-3000:]}")
        check(a.stop() == 0, f"exit {a.p.returncode}")


@modes("session", "multi", "classic")
def test_agent_relink_loses_no_call():
    """A hot function leaves the links while a steady one of the same chunk is called: the
    chunk's new link goes in before the old one closes, so the steady function's exact series
    counts every call (none unseen in a gap, none twice), and no relink gap is counted."""
    naps = 400
    with Agent(["--lib", LIB, "--func", "dlt_add", "--func", "dlt_nap", "--max-overhead", "50"]) as a:
        a.wait_ready()
        steady = subprocess.Popen([DRIVER, "nap", "5", str(naps)])
        try:
            time.sleep(0.5)
            run_driver(["count", "50000000"])
            check(steady.wait(timeout=60) == 0, "the steady driver failed")
        finally:
            if steady.poll() is None:
                steady.kill()
                steady.wait()
        text = wait_value(a, lambda t: calls(t, "dlt_nap"), naps)
        relinks = samples(text, "dlprof_agent_relinks_total").get("", 0)
        gap = samples(text, "dlprof_agent_relink_gap_seconds_total").get("", -1)
        print(f"dlt_nap {calls(text, 'dlt_nap'):.0f} of {naps}, relinks {relinks:.0f}, gap {gap} s")
        # The cold start's plan is the first relink (both idle, both linked); dlt_add's move the next.
        check(relinks >= 2 and samples(text, "dlprof_agent_functions").get('{state="sampled"}') == 1,
              f"dlt_add never left the links: {a.text()}")
        check(calls(text, "dlt_nap", sampled=True) == 0, "dlt_nap was sampled: its exact count is not the test")
        check(gap == 0, f"a relink gap of {gap} s counted")
        check(a.stop() == 0, f"exit {a.p.returncode}")


@modes("session")
def test_agent_reacts_to_hot_not_to_burst():
    """Between refreshes (here 5 s apart) only a reaction moves a function: a short burst that
    costs less than a second's budget stays in the links, counted exactly; a hot loop leaves
    them within a fraction of a second, long before the next refresh."""
    with Agent(["--lib", LIB, "--func", "dlt_add", "--max-overhead", "1", "--refresh", "5"]) as a:
        a.wait_ready()
        run_driver(["count", "200"])
        time.sleep(1)
        check(samples(a.metrics(), "dlprof_agent_functions").get('{state="sampled"}') == 0,
              f"a burst of 200 calls was shed: {a.text()}")
        t0 = time.monotonic()
        run_driver(["count", "20000000"])
        took = time.monotonic() - t0
        text = wait_value(a, lambda t: samples(t, "dlprof_agent_functions").get('{state="sampled"}'), 1)
        print(f"20,000,000 calls took {took:.2f} s under the agent")
        check(took < 3, f"the hot loop was probed for {took:.2f} s: no reaction before the refresh")
        # The burst's calls and the hot loop's until it left the links, all in the exact series.
        check(calls(text, "dlt_add") >= 200, f"exact series {calls(text, 'dlt_add')}")
        check(a.stop() == 0, f"exit {a.p.returncode}")


def spawn_mappers(n, seconds=None):
    """n processes that map the test library and call nothing of it (or as many as fit in seconds)."""
    done, deadline = 0, time.monotonic() + (seconds or 1e9)
    while done < n and time.monotonic() < deadline:
        run_driver(["exit", "0"])
        done += 1
    return done


def counts_mappings(env=None):
    """20 processes that map the library: counted as 20 mappings, the install cost timed."""
    with Agent(["--lib", LIB], env=env) as a:
        a.wait_ready()
        m = re.search(r"install_ns=(\d+) lib=libdltest.so functions=(\d+)", a.text())
        check(m and int(m.group(2)) >= 8, f"no install cost timed: {a.text()}")
        before = samples(a.metrics(), "dlprof_agent_library_mappings_total").get("")
        check(before is not None, "no mappings counted")
        spawn_mappers(20)
        text = wait_value(a, lambda t: samples(t, "dlprof_agent_library_mappings_total").get(""), before + 20)
        inst = samples(text, "dlprof_agent_install_cost_seconds").get("", 0)
        print(f"install {inst * 1e9:.0f} ns per function and mapping ({m.group(2)} functions timed), "
              f"20 processes counted as {samples(text, 'dlprof_agent_library_mappings_total')[''] - before:.0f}")
        check(inst > 0, f"install cost {inst}")
        check(a.stop() == 0, f"exit {a.p.returncode}")


@modes("session")
def test_agent_counts_mappings_by_perf_records():
    """The mappings counted by the discovery's last fallback (user/probe/copy_discovery.c),
    the kernel's perf mmap records, where no BPF program hooks mappings."""
    counts_mappings(dict(os.environ, DLPROF_DISCOVERY_HOOK="perf"))


@modes("session")
def test_agent_counts_mappings_by_fentry():
    """The mappings counted through fentry on uprobe_mmap (kernels without the fault
    tracepoints), or the perf records where trampolines are refused."""
    counts_mappings(dict(os.environ, DLPROF_DISCOVERY_HOOK="fentry"))


@modes("session")
def test_agent_counts_mappings_and_budgets_them():
    """Every process that maps a probed library pays for its linked functions' breakpoints at
    the mmap, calls or not: the kernel counts those processes exactly, the cost per function is
    timed at start on the agent's own mapping, and under a budget that processes starting in a
    loop exceed, functions nobody calls leave the links."""
    counts_mappings()
    # 0.5 ms/s: one process start a second (the least the budget assumes) fits with every function linked.
    with Agent(["--lib", LIB, "--max-overhead", "0.05"]) as a:
        a.wait_ready()
        sampled0 = samples(a.metrics(), "dlprof_agent_functions").get('{state="sampled"}', 0)
        check(sampled0 < 23, f"{sampled0} of 23 idle functions sampled at start")
        n = spawn_mappers(10**6, seconds=4)
        text = wait_value(a, lambda t: samples(t, "dlprof_agent_functions").get('{state="sampled"}', 0) > sampled0,
                          True)
        shed = re.findall(r"event=budget sampled=(\d+) .*install_ms_per_s=([\d.]+)", a.text())
        print(f"{n} processes in 4 s: {sampled0:.0f} sampled at start; budget lines (sampled, install ms/s of "
              f"the links left) {shed[-3:]}")
        # Nothing was called: only what the mappings cost can have moved them.
        check(sum(calls(text, f) for f in ("dlt_add", "dlt_nap")) == 0, "the processes called the library")
        check(a.stop() == 0, f"exit {a.p.returncode}")


@modes("session", "classic")
def test_agent_trap_cost_calibrated():
    """The kernel's part of a probed call comes from the calibration at start, per class:
    logged with source=calibrated, exposed per class, a single-stepped probe dearer than an
    emulated one; DLPROF_AGENT_TRAP_NS replaces both with its figure."""
    with Agent(["--lib", LIB, "--func", "dlt_add"]) as a:
        a.wait_ready()
        text = a.metrics()
        m = re.search(r"trap_ns_emulated=(\d+) trap_ns_single_stepped=(\d+) prog_ns=(\d+) source=(\S+)", a.text())
        check(m and m.group(4) == "calibrated", f"no calibrated trap costs logged: {a.text()}")
        trap = samples(text, "dlprof_agent_trap_cost_seconds")
        emulated, stepped = trap.get('{class="emulated"}', 0), trap.get('{class="single_stepped"}', 0)
        print(f"trap emulated {emulated * 1e9:.0f} ns, single-stepped {stepped * 1e9:.0f} ns, "
              f"programs {m.group(3)} ns per call")
        check(abs(emulated * 1e9 - int(m.group(1))) < 1 and abs(stepped * 1e9 - int(m.group(2))) < 1,
              f"metric {trap} differs from the log {m.group(0)}")
        check(0 < emulated < stepped, f"trap costs {trap}")
        check(a.stop() == 0, f"exit {a.p.returncode}")
    with Agent(["--lib", LIB, "--func", "dlt_add"], env=dict(os.environ, DLPROF_AGENT_TRAP_NS="1234")) as a:
        a.wait_ready()
        trap = samples(a.metrics(), "dlprof_agent_trap_cost_seconds")
        check(len(trap) == 2 and all(abs(v * 1e9 - 1234) < 0.01 for v in trap.values())
              and "source=DLPROF_AGENT_TRAP_NS" in a.text(),
              f"override not taken: {trap} {a.text()}")
        check(a.stop() == 0, f"exit {a.p.returncode}")


@modes("session")
def test_agent_cold_start_hot_workload():
    """A workload calling dlt_add hot before the agent starts: with a budget, nothing is probed
    full time at start; the first windows measure dlt_add costly, so it is never linked (no
    relink), its series is sampled; /readyz says 200 only once that plan is made."""
    hot = subprocess.Popen([DRIVER, "count", "4000000000"])
    try:
        time.sleep(0.3)
        with Agent(["--lib", LIB, "--func", "dlt_add", "--max-overhead", "0.05"]) as a:
            a.wait_ready()
            check("cold_start=true" in a.text(), f"no cold start: {a.text()}")
            text = wait_value(a, lambda t: calls(t, "dlt_add", sampled=True) > 0, True, timeout=20)
            check(calls(text, "dlt_add") == 0, "a hot function at start was linked full time")
            check(samples(text, "dlprof_agent_relinks_total") == {"": 0}, f"relinked: {a.text()}")
            check(samples(text, "dlprof_agent_functions").get('{state="sampled"}') == 1, "dlt_add not sampled")
            check(a.stop() == 0, f"exit {a.p.returncode}")
    finally:
        hot.kill()
        hot.wait()


@modes("session")
def test_agent_scans_find_functions_hot_later():
    """The agent starts before the workload, as on a node: most of libcrypto's idle functions stay
    sampled (linked, each would cost every process that maps the library), and those that openssl
    then makes hot are found by scans of their own, not only in the windows of the first hot ones
    found (which come every 15-50 s: a hot function could wait up to 30 minutes for its turn)."""
    hottest = ["OPENSSL_cleanse", "CRYPTO_malloc", "CRYPTO_zalloc", "CRYPTO_free", "EVP_MD_CTX_set_flags",
               "EVP_MD_free", "ENGINE_finish", "EVP_Digest", "EVP_DigestInit_ex", "EVP_MD_CTX_free"]
    # 1,159 functions: the calls per digest of openssl speed sha256, and slices of idle ones to scan.
    # How many stay sampled at the default budget depends on what a mapping costs this machine: a
    # tenth of it leaves most of them sampled on any machine, the precondition of this test.
    with Agent(["--lib", "libcrypto.so.3", "--func", "EVP_*,CRYPTO_*,OPENSSL_*,ENGINE_*", "-v",
                "--max-overhead", "0.1"]) as a:
        a.wait_ready()
        # The plan's states, once a refresh has published them (ready can come a refresh earlier).
        states = lambda t: samples(t, "dlprof_agent_functions")
        text = wait_value(a, lambda t: sum(states(t).values()) > 0, True)
        sampled0 = states(text).get('{state="sampled"}', 0)
        run = subprocess.Popen(["openssl", "speed", "-seconds", "60", "-bytes", "64", "sha256"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        named, t0 = {}, time.time()
        try:
            while time.time() < t0 + 45 and len(named) < len(hottest):
                text = a.metrics()
                for fn in hottest:
                    if fn not in named and calls(text, fn) + calls(text, fn, sampled=True) > 0:
                        named[fn] = round(time.time() - t0, 1)
                time.sleep(0.2)
        finally:
            run.kill()
            run.wait()
        print(f"{sampled0:.0f} idle functions sampled at start; named after (s): {named}")
        check(sampled0 > 128, f"{sampled0} functions sampled at start: no scan to test")
        check(len(named) == len(hottest), f"in 45 s the agent named {sorted(named)}, not {sorted(set(hottest) - set(named))}")
        scans = samples(text, "dlprof_agent_scan_windows_total").get("", 0)
        check(scans > 0 and "scan=true" in a.text(), f"{scans} scans: {a.text()[-2000:]}")
        check(a.stop() == 0, f"exit {a.p.returncode}")


def agent_error(args, env=None):
    p = subprocess.run([DLPROF, "agent"] + args, capture_output=True, text=True, timeout=60, env=env)
    lines = p.stderr.strip().splitlines()
    return p.returncode, lines


@modes("session")
def test_agent_bad_input():
    """Bad flags and environment: one line naming the problem, exit 2; a bad library or
    address: one log line, exit 1; never a crash."""
    port = str(free_port())
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    busy_port = str(busy.getsockname()[1])
    for args, env, rc, words in (
            ([], {}, 2, "no library"),
            (["--lib", LIB, "--max-overhead", "-3"], {}, 2, "--max-overhead"),
            (["--lib", LIB, "--max-series", "many"], {}, 2, "--max-series"),
            (["--lib", LIB, "--listen", ""], {}, 2, "--listen"),
            (["--lib", LIB, "ls"], {}, 2, "no command"),
            (["--lib", LIB, "--duration", "3"], {}, 2, "belongs to"),
            ([], {"DLPROF_AGENT_LIBS": LIB, "DLPROF_AGENT_MAX_SERIES": "1"}, 2, "DLPROF_AGENT_MAX_SERIES"),
            (["--lib", LIB, "--listen", "999.1.1.1:" + port], {}, 1, "listen"),
            (["--lib", "/nonexistent/libnothing.so", "--listen", "127.0.0.1:" + port], {}, 1, "libnothing"),
            (["--lib", LIB, "--exact", "dlt_no_such*", "--listen", "127.0.0.1:" + port], {}, 1, "--exact"),
            (["--lib", LIB, "--listen", "127.0.0.1:" + busy_port], {}, 1, "127.0.0.1:" + busy_port)):
        rc_got, lines = agent_error(args, env={**os.environ, **env})
        check(rc_got == rc, f"{args} {env}: exit {rc_got}, want {rc}: {lines}")
        errors = [ln for ln in lines if "error" in ln or ln.startswith("dlprof-bpf:")]
        check(len(errors) == 1 and words in errors[0], f"{args} {env}: {lines}")
        # Past the command line, the log is logfmt and says nothing else (no library's own lines).
        check(rc == 2 or all(LOGFMT.match(ln) for ln in lines), f"{args}: {lines}")
    busy.close()


@modes("session")
def test_agent_environment_fallbacks():
    """DLPROF_AGENT_LIBS and DLPROF_AGENT_FUNCS stand for --lib and --func; a flag wins."""
    env = {**os.environ, "DLPROF_AGENT_LIBS": LIB, "DLPROF_AGENT_FUNCS": "dlt_nothing_matches*,dlt_add",
           "DLPROF_AGENT_MAX_OVERHEAD": "off"}
    with Agent([], env=env) as a:
        a.wait_ready()
        run_driver(["count", "300"])
        text = wait_value(a, lambda t: calls(t, "dlt_add"), 300)
        check(set(re.findall(r'function="([^"]+)"', "\n".join(samples(text, "dlprof_calls_total")))) == {"dlt_add"},
              "--func from the environment not applied")
        a.stop()


@modes("session")
def test_agent_podman_pod_labels():
    """A podman container set up like a Kubernetes pod (its cgroup under a kubepods pod
    parent, the pod's hostname, a service-account namespace file): --container gives
    its series the container id, pod and namespace labels, and counts only its calls;
    when it stops, the agent logs it, keeps the counts and /readyz says 503."""
    from containers import PODMAN_RUN, driver_image, require_podman
    require_podman()
    uid = str(uuid.uuid4())
    with driver_image() as image, tempfile.TemporaryDirectory() as tmp:
        cidfile = os.path.join(tmp, "cid")
        nsfile = os.path.join(tmp, "namespace")
        with open(nsfile, "w") as f:
            f.write("shop\n")
        inside = subprocess.Popen(PODMAN_RUN + [
            "--cidfile", cidfile, "--cgroup-manager", "cgroupfs",
            "--cgroup-parent", f"/kubepods/besteffort/pod{uid}", "--hostname", "web-7d9c8b6f5-x2x4z",
            "-v", f"{nsfile}:/var/run/secrets/kubernetes.io/serviceaccount/namespace:ro",
            "-v", f"{LIB}:/app/{os.path.basename(LIB)}:ro", "-e", "LD_LIBRARY_PATH=/app", image,
            "/app/dltest_driver", "--wait", "count", "30000"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        outside = start_waiting_driver(["count", "20000"])
        try:
            line = inside.stdout.readline()
            check(line.startswith("ready "), f"the container's driver did not start: {line!r}")
            cid = open(cidfile).read().strip()
            with Agent(["--lib", LIB, "--func", "dlt_add", "--container", cid[:12], "--max-overhead", "off"]) as a:
                a.wait_ready()
                drive(inside)
                drive(outside)
                text = wait_value(a, lambda t: calls(t, "dlt_add"), 30000)
                labels = list(samples(text, "dlprof_calls_total"))
                want = f'container="{cid}"'
                check(len(labels) == 1 and want in labels[0] and 'pod="web-7d9c8b6f5-x2x4z"' in labels[0]
                      and 'namespace="shop"' in labels[0], f"labels: {labels}")
                check(f"pod_uid={uid}" in a.text() and "event=discovery" in a.text(), f"log: {a.text()}")
                # The container stops: its cgroup goes, the agent says so and is not ready until it is back.
                finish(inside)
                a.wait_ready(503, timeout=20)
                check(a.get("/healthz")[0] == 200, "the agent serving the counts it has is not alive")
                check("event=target_gone" in a.text(), f"log: {a.text()}")
                check(calls(a.metrics(), "dlt_add") == 30000, "the counts did not survive the target")
                check(a.stop() == 0, f"exit {a.p.returncode}")
        finally:
            if inside.poll() is None:
                finish(inside)
            finish(outside)
            subprocess.run(["sh", "-c", f"rmdir /sys/fs/cgroup/unified/kubepods/besteffort/pod{uid} "
                            "/sys/fs/cgroup/unified/kubepods/besteffort /sys/fs/cgroup/unified/kubepods"],
                           capture_output=True)


if __name__ == "__main__":
    sys.exit(itest.run(globals()))
