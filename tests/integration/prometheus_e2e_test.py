#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""End to end with real parts: the agent runs in a podman container from the
offline image (packaging/container/build-offline.sh), started the way the
DaemonSet starts it (host PIDs, the four capabilities, read-only root, its
environment; podman arguments derived from packaging/k8s/daemonset.yaml) on
the host's network; Debian's Prometheus server, our own instance on a free
port with a 1 s scrape interval, scrapes it on 127.0.0.1; the test workload
runs on the host, and a PromQL query through Prometheus' HTTP API must
return exactly the workload's call count. Runner and helpers: itest.py (this
file), promserver.py (the Prometheus server) and tests/packaging/pkgtest.py
(package, image, DaemonSet)."""
import contextlib
import os
import shutil
import subprocess
import sys
import time

import itest
from itest import *  # noqa: F401,F403 (the shared helpers and environment)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "packaging"))
import pkgtest  # noqa: E402
from promserver import prometheus, promql, wait_for_value  # noqa: E402

# The workload sleeps 1 ms in each call: ~1,000 calls/s stay well inside the agent's
# default overhead budget, so the function is probed, not sampled, and its count is exact.
FUNC = "dlt_sleep_ms"
QUERY = f'sum(dlprof_calls_total{{function="{FUNC}"}})'
SAMPLED = f'dlprof_calls_total{{function="{FUNC}",sampled="true"}}'


def container_logs(name):
    p = subprocess.run(["podman", "logs", name], capture_output=True, text=True)
    return (p.stdout + p.stderr)[-3000:]


@contextlib.contextmanager
def agent_container(port):
    """The agent in a container from the offline image, as the DaemonSet runs it; the test
    library's folder is mounted at the same path so that the agent probes the very file
    the host's workload maps."""
    name = f"dlprof-e2e-{os.getpid()}"
    libdir = os.path.dirname(os.path.realpath(LIB))
    args = pkgtest.PODMAN_RUN + ["-d", "--name", name, "--network", "host", "-v", f"{libdir}:{libdir}:ro"]
    args += pkgtest.podman_args_like_daemonset({"DLPROF_AGENT_LIBS": os.path.realpath(LIB),
                                                "DLPROF_AGENT_LISTEN": f"127.0.0.1:{port}"})
    pod_args = pkgtest.agent_container()[1]["args"]
    p = subprocess.run(args + [pkgtest.image()] + pod_args + ["--func", FUNC], capture_output=True, text=True)
    check(p.returncode == 0, f"podman run: {p.stderr}")
    try:
        deadline = time.monotonic() + 60
        status = 0
        while time.monotonic() < deadline:
            status, _ = pkgtest.http_get(f"http://127.0.0.1:{port}/readyz")
            if status == 200:
                break
            check(status in (0, 503), f"/readyz answered {status}")
            running = subprocess.run(["podman", "inspect", "-f", "{{.State.Running}}", name],
                                     capture_output=True, text=True).stdout.strip()
            check(running == "true", f"the agent's container exited: {container_logs(name)}")
            time.sleep(0.2)
        check(status == 200, f"/readyz never answered 200 in 60 s: {container_logs(name)}")
        yield name
        # SIGTERM flushes and exits 0.
        subprocess.run(["podman", "stop", "-t", "20", name], capture_output=True, text=True)
        code = subprocess.run(["podman", "inspect", "-f", "{{.State.ExitCode}}", name],
                              capture_output=True, text=True).stdout.strip()
        check(code == "0", f"the agent exited {code} on SIGTERM: {container_logs(name)}")
    finally:
        subprocess.run(["podman", "rm", "-f", "-t", "0", name], capture_output=True)


def run_workload(calls):
    """The driver's calls of FUNC, as it counted them itself."""
    p = subprocess.run([DRIVER, "sleep", "1", str(calls)], capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"workload exit {p.returncode}: {p.stderr}")
    return oracle(p.stderr, "calls")


@modes("session")
def test_prometheus_scrape_exact_count():
    pkgtest.require_agent(DLPROF)
    for tool in ("podman", "runc", "prometheus", "promtool"):
        check(shutil.which(tool), f"{tool} is not installed: run scripts/deps")
    port = pkgtest.free_port()
    with agent_container(port), prometheus(f"127.0.0.1:{port}") as url:
        check(wait_for_value(url, 'up{job="dlprof"}', 1.0) == 1.0, "Prometheus does not reach the agent")
        want = run_workload(1500)
        got = wait_for_value(url, QUERY, float(want))
        check(got == want, f"PromQL {QUERY}: {got}, the workload made {want} calls")
        want += run_workload(1000)
        got = wait_for_value(url, QUERY, float(want))
        check(got == want, f"PromQL {QUERY} after a second run: {got}, the workload made {want} calls")
        series = promql(url, f'dlprof_calls_total{{function="{FUNC}"}}')
        check(all(os.path.basename(LIB) in s["lib"] for s, _ in series), f"lib labels: {series}")
        check(not promql(url, SAMPLED), f"{FUNC} was sampled, its count is an estimate: {promql(url, SAMPLED)}")
        status, text = pkgtest.http_get(f"http://127.0.0.1:{port}/metrics")
        check(status == 200, f"/metrics answered {status}")
        lint = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
        check(lint.returncode == 0 and not lint.stdout.strip() and not lint.stderr.strip(),
              f"promtool check metrics: {lint.stdout}{lint.stderr}")


if __name__ == "__main__":
    sys.exit(itest.run(globals()))
