#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Churn soak of the agent (issue 12, point 5): processes and podman
containers start and stop for a bounded time while the agent probes the
test library system-wide.

    sudo bench/agent_soak.py [--build build] [--minutes 10] [--grace 5] [--warmup S] [--exports]

  steady     host processes, one after another, each `count 2000` calls of
             dlt_add: at the end the host's dlt_add series must equal their
             sum exactly;
  churn      short host processes calling another function (dlt_ifunc_add),
             and podman containers (some set up like pods) calling dlt_add,
             started and stopped all the time: each container's series comes
             and goes (dropped --grace seconds after its cgroup);
  measured   the agent's RSS every 5 s (flat within 2 MiB after the warm-up:
             the first fifth of the run, at least 30 s), its BPF maps and links
             (fds of /proc/PID/fdinfo: none leaked), the kernel group map's
             entries (bpftool: bounded), the series and containers it keeps.

With --exports the agent also serves a protobuf scrape (native histograms)
before each text one and pushes OTLP every second to a local receiver
(tests/integration/otlpserver.py): the exporters' memory under the churn.

Exits 1 when a check fails. Prints a table and one JSON line.
"""
import argparse
import contextlib
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))

RSS_SLACK = 2 << 20


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1)) * 1024


def bpf_fds(pid):
    """(maps, links, programs) among the process's fds."""
    maps = links = progs = 0
    for fd in os.listdir(f"/proc/{pid}/fdinfo"):
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                t = f.read()
        except OSError:
            continue
        maps += "map_id:" in t
        links += "link_id:" in t
        progs += "prog_id:" in t and "link_id:" not in t
    return maps, links, progs


def group_map_entries(pid):
    """Entries of the agent's group_stats map (bpftool), or -1."""
    try:
        maps = json.loads(subprocess.run(["bpftool", "-j", "map", "show"], capture_output=True, text=True).stdout)
        ids = {m["id"] for m in maps if m.get("name") == "group_stats"}
        mine = set()
        for fd in os.listdir(f"/proc/{pid}/fdinfo"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/fdinfo/{fd}") as f:
                m = re.search(r"map_id:\s+(\d+)", f.read())
                if m and int(m.group(1)) in ids:
                    mine.add(int(m.group(1)))
        n = 0
        for i in mine:
            out = subprocess.run(["bpftool", "-j", "map", "dump", "id", str(i)], capture_output=True, text=True).stdout
            n += len(json.loads(out or "[]"))
        return n
    except (OSError, ValueError):
        return -1


def scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        return r.read().decode()


def scrape_proto(port):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/metrics", headers={
        "Accept": "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.read()


def value(text, name, *must):
    total = 0.0
    for m in re.finditer(rf"^{re.escape(name)}(\{{[^}}]*\}})? (\S+)$", text, re.M):
        labels = m.group(1) or ""
        if all(x in labels for x in must) and not any(x in labels for x in ("container=", 'sampled="true"')
                                                      if x not in must):
            total += float(m.group(2))
    return total


def host_series(text, function):
    """The host's exact series of function (no container label)."""
    total = 0.0
    for m in re.finditer(r'^dlprof_calls_total(\{[^}]*\}) (\S+)$', text, re.M):
        lbl = m.group(1)
        if f'function="{function}"' in lbl and "container=" not in lbl and 'sampled="true"' not in lbl:
            total += float(m.group(2))
    return total


class Churn:
    """Threads that start and stop workloads until stop(); what they did, counted."""

    def __init__(self, driver, lib, image, stop_at):
        self.driver, self.lib, self.image, self.stop_at = driver, lib, image, stop_at
        self.steady_calls = 0
        self.procs = 0
        self.containers = 0
        self.errors = []
        self.threads = [threading.Thread(target=f, daemon=True) for f in (self.steady, self.host_churn)]
        if image:
            self.threads.append(threading.Thread(target=self.container_churn, daemon=True))

    def run(self, args):
        p = subprocess.run([self.driver] + args, capture_output=True, text=True, timeout=120)
        if p.returncode:
            self.errors.append(f"driver {args}: {p.returncode} {p.stderr[-200:]}")
        return p.returncode == 0

    def steady(self):
        while time.time() < self.stop_at:
            if self.run(["count", "2000"]):
                self.steady_calls += 2000
            time.sleep(0.5)

    def host_churn(self):
        while time.time() < self.stop_at:
            if self.run(["ifunc", str(random.randint(10, 500))]):
                self.procs += 1
            time.sleep(random.uniform(0.05, 0.3))

    def container_churn(self):
        from containers import PODMAN_RUN, remove_cgroup_everywhere
        while time.time() < self.stop_at:
            args = ["--cgroup-manager", "cgroupfs"]
            parent = None
            if self.containers % 2 == 0:
                parent = f"/kubepods/besteffort/pod{uuid.uuid4()}"
                args += ["--cgroup-parent", parent, "--hostname", f"soak-{self.containers}"]
            p = subprocess.run(PODMAN_RUN + args + [
                "-v", f"{self.lib}:/app/{os.path.basename(self.lib)}:ro", "-e", "LD_LIBRARY_PATH=/app", self.image,
                "/app/dltest_driver", "count", str(random.randint(100, 3000))],
                stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
            if p.returncode:
                self.errors.append(f"container: {p.returncode} {p.stderr[-300:]}")
            else:
                self.containers += 1
            if parent:
                remove_cgroup_everywhere(parent)

    def start(self):
        for t in self.threads:
            t.start()

    def join(self):
        for t in self.threads:
            t.join()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--grace", type=float, default=5.0, help="--series-grace of the agent")
    ap.add_argument("--warmup", type=float, default=None,
                    help="seconds before RSS must stay flat (default: a fifth of the run, at least 30)")
    ap.add_argument("--no-containers", action="store_true", help="host processes only (no podman)")
    ap.add_argument("--exports", action="store_true",
                    help="protobuf scrapes (native histograms) and OTLP pushes every second to a local receiver too")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    lib = os.path.join(build, "tests/progs/libdltest.so")
    driver = os.path.join(build, "tests/progs/dltest_driver")
    os.environ.setdefault("DLTEST_DRIVER", driver)
    os.environ.setdefault("DLTEST_LIB", lib)
    os.environ.setdefault("DLPROF", os.path.join(build, "user/dlprof-bpf"))
    with tempfile.TemporaryDirectory() as tmp:
        # A copy: a rebuild during the soak does not touch the running agent's binary.
        agent_bin = os.path.join(tmp, "dlprof-bpf")
        shutil.copy(os.path.join(build, "user/dlprof-bpf"), agent_bin)
        port = free_port()
        log = open(os.path.join(tmp, "agent.log"), "w+")
        extra, a.rx = [], None
        if a.exports:
            from otlpserver import Receiver, require_protobuf
            require_protobuf()
            a.rx = Receiver().start()
            extra = ["--otlp-endpoint", f"http://127.0.0.1:{a.rx.port}", "--otlp-interval", "1"]
        agent = subprocess.Popen([agent_bin, "agent", "--lib", lib, "--listen", f"127.0.0.1:{port}", "--refresh", "0.5",
                                  "--max-overhead", "off", "--series-grace", str(a.grace)] + extra, stderr=log)
        try:
            return soak(a, agent, port, driver, lib, log)
        finally:
            if a.rx:
                a.rx.stop()
            if agent.poll() is None:
                agent.kill()
                agent.wait()
            subprocess.run(["sh", "-c", "rmdir /sys/fs/cgroup/unified/kubepods/besteffort /sys/fs/cgroup/unified/kubepods "
                            "/sys/fs/cgroup/kubepods/besteffort /sys/fs/cgroup/kubepods"], capture_output=True)


def wait_healthy(port, agent):
    """Until ready: /readyz (a build from before it said readiness on /healthz)."""
    path = "/readyz"
    for _ in range(600):
        with contextlib.suppress(OSError):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as r:
                    if r.status == 200:
                        return
            except urllib.error.HTTPError as e:
                if e.code == 404:
                    path = "/healthz"
        if agent.poll() is not None:
            raise SystemExit(f"the agent exited {agent.returncode}")
        time.sleep(0.1)
    raise SystemExit("the agent never became healthy")


def soak(a, agent, port, driver, lib, log):
    wait_healthy(port, agent)
    image_cm = contextlib.nullcontext(None)
    if not a.no_containers and shutil.which("podman") and shutil.which("runc"):
        from containers import driver_image
        image_cm = driver_image()
    with image_cm as image:
        start = time.time()
        end = start + a.minutes * 60
        warm = start + (a.warmup if a.warmup is not None else max(30.0, (end - start) / 5))
        churn = Churn(driver, lib, image, end)
        churn.start()
        samples = []
        while time.time() < end:
            t = time.time()
            if a.exports:
                scrape_proto(port)
            text = scrape(port)
            samples.append({"t": round(t - start, 1), "rss": rss(agent.pid), "fds": bpf_fds(agent.pid),
                            "groups": group_map_entries(agent.pid),
                            "containers": value(text, "dlprof_agent_containers"),
                            "series": value(text, "dlprof_agent_series")})
            time.sleep(max(0.0, 5 - (time.time() - t)))
        churn.join()
        # The last containers' series go after the grace; the steady count settles at the next read.
        time.sleep(a.grace + 2)
        text = scrape(port)
        final = {"rss": rss(agent.pid), "fds": bpf_fds(agent.pid), "groups": group_map_entries(agent.pid),
                 "containers": value(text, "dlprof_agent_containers"), "series": value(text, "dlprof_agent_series")}
        steady_seen = host_series(text, "dlt_add")
        retired = value(text, "dlprof_agent_series_retired_total")
    agent.terminate()
    rc = agent.wait(timeout=60)
    after = [s for s in samples if s["t"] >= warm - start] or samples[-1:]
    rss_after = [s["rss"] for s in after] + [final["rss"]]
    fds_after = {s["fds"] for s in after} | {final["fds"]}
    checks = {
        "steady count exact": steady_seen == churn.steady_calls,
        "rss flat within 2 MiB after warm-up": max(rss_after) - min(rss_after) <= RSS_SLACK,
        "no leaked maps or links": len(fds_after) == 1,
        "removed containers collected": final["containers"] <= 1 + 2,
        "agent exit 0 on SIGTERM": rc == 0,
        "workloads ran": not churn.errors,
    }
    if a.rx:
        checks["OTLP pushes received"] = a.rx.count() > 0
    res = {"minutes": a.minutes, "processes": churn.procs + churn.steady_calls // 2000, "containers": churn.containers,
           "steady_calls": churn.steady_calls, "steady_seen": steady_seen, "series_retired": retired,
           "rss_warm_min_mib": round(min(rss_after) / 2**20, 2), "rss_warm_max_mib": round(max(rss_after) / 2**20, 2),
           "rss_first_mib": round(samples[0]["rss"] / 2**20, 2) if samples else None,
           "bpf_fds_maps_links_progs": sorted(fds_after), "group_map_entries_max": max(s["groups"] for s in samples + [final]),
           "group_map_entries_end": final["groups"], "containers_end": final["containers"],
           "errors": churn.errors[:5], "otlp_pushes": a.rx.count() if a.rx else None, "checks": checks}
    print(f"{'minutes':28} {a.minutes}")
    print(f"{'processes / containers':28} {res['processes']} / {res['containers']}")
    print(f"{'steady calls (seen)':28} {churn.steady_calls} ({steady_seen:.0f})")
    print(f"{'RSS after warm-up (MiB)':28} {res['rss_warm_min_mib']} .. {res['rss_warm_max_mib']} (first {res['rss_first_mib']})")
    print(f"{'BPF fds (maps, links, progs)':28} {res['bpf_fds_maps_links_progs']}")
    print(f"{'group map entries max/end':28} {res['group_map_entries_max']} / {res['group_map_entries_end']}")
    print(f"{'series retired':28} {retired:.0f}")
    for k, v in checks.items():
        print(f"  {'ok  ' if v else 'FAIL'} {k}")
    if churn.errors:
        print("workload errors:", *churn.errors[:5], sep="\n  ")
    if not all(checks.values()):
        log.seek(0)
        print("agent log (tail):", log.read()[-3000:], sep="\n")
    print(json.dumps(res))
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
