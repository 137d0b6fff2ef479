#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""dlprof-bpf agent, series per container and pod: real podman containers
(some set up like Kubernetes pods) and a host process call the test
library; each series' dlprof_calls_total equals that workload's own count;
--namespace/--pod select pods, those started later too; a removed
container's series go after --series-grace. Runner and helpers: itest.py."""
import contextlib
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import uuid

import itest
from itest import *  # noqa: F401,F403 (the shared helpers and environment)
from agent_test import Agent, calls, samples, wait_value
from containers import PODMAN_RUN, driver_image, remove_cgroup_everywhere, require_podman


class Workload:
    """A --wait driver in a podman container; pod: (uid, hostname, namespace) sets it up like a pod's."""

    def __init__(self, image, tmp, count, pod=None, pod_files=True):
        self.cidfile = os.path.join(tmp, f"cid-{uuid.uuid4().hex[:8]}")
        args = ["--cidfile", self.cidfile, "--cgroup-manager", "cgroupfs"]
        self.parent = None
        if pod:
            uid, hostname, namespace = pod
            nsfile = os.path.join(tmp, f"ns-{uid}")
            with open(nsfile, "w") as f:
                f.write(namespace + "\n")
            self.parent = f"/kubepods/besteffort/pod{uid}"
            args += ["--cgroup-parent", self.parent]
            if pod_files:
                args += ["--hostname", hostname,
                         "-v", f"{nsfile}:/var/run/secrets/kubernetes.io/serviceaccount/namespace:ro"]
        self.p = subprocess.Popen(PODMAN_RUN + args + [
            "-v", f"{LIB}:/app/{os.path.basename(LIB)}:ro", "-e", "LD_LIBRARY_PATH=/app", image,
            "/app/dltest_driver", "--wait", "count", str(count)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.p.stdout.readline()
        check(line.startswith("ready "), f"the container's driver did not start: {line!r}")
        self.cid = open(self.cidfile).read().strip()

    def stop(self):
        if self.p.poll() is None:
            finish(self.p)


def series_of(text, function="dlt_add"):
    """{container id or "": calls} and the label strings, of one function's exact series."""
    out, labels = {}, {}
    for lbl, v in samples(text, "dlprof_calls_total").items():
        if f'function="{function}"' not in lbl or 'sampled="true"' in lbl:
            continue
        cid = lbl.split('container="')[1].split('"')[0] if 'container="' in lbl else ""
        out[cid] = out.get(cid, 0) + v
        labels[cid] = lbl
    return out, labels


def container_id(pid):
    """The 64-hex id of the container that pid runs in, from its cgroup path."""
    with open(f"/proc/{pid}/cgroup") as f:
        m = re.search(r"[0-9a-f]{64}", f.read())
    check(m, f"process {pid} is in no container's cgroup")
    return m.group(0)


def wait_series(agent, want, timeout=20):
    deadline = time.time() + timeout
    got = {}
    while time.time() < deadline:
        got, labels = series_of(agent.metrics())
        if got == want:
            return labels
        time.sleep(0.2)
    raise AssertionError(f"series {got}, want {want}: {agent.text()[-2000:]}")


def metric(text, name):
    return sum(samples(text, name).values())


@contextlib.contextmanager
def workloads():
    """Started workloads stopped, and the pods' cgroup parents removed, whatever happens."""
    started = []
    try:
        yield started
    finally:
        for w in started:
            w.stop()
        for w in started:
            if w.parent:
                remove_cgroup_everywhere(w.parent)
        remove_cgroup_everywhere("/kubepods/besteffort")
        remove_cgroup_everywhere("/kubepods")


@modes("session")
def test_agent_series_per_container_exact():
    """Two containers (one like a pod) and a host process: one series each, exact; the pod's has
    pod and namespace labels, the host's none; once a container is removed its series go
    after --series-grace (counted), the kernel's entries for it are freed, the others stay."""
    require_podman()
    uid = str(uuid.uuid4())
    with driver_image() as image, tempfile.TemporaryDirectory() as tmp, workloads() as ws:
        ws.append(Workload(image, tmp, 30000, pod=(uid, "web-7d9c8b6f5-x2x4z", "shop")))
        ws.append(Workload(image, tmp, 20000))
        host = start_waiting_driver(["count", "10000"])
        try:
            with Agent(["--lib", LIB, "--func", "dlt_add", "--max-overhead", "off", "--series-grace", "1"]) as a:
                a.wait_ready()
                for w in ws:
                    drive(w.p)
                drive(host)
                pod, plain = ws
                labels = wait_series(a, {pod.cid: 30000, plain.cid: 20000, "": 10000})
                check('pod="web-7d9c8b6f5-x2x4z"' in labels[pod.cid] and 'namespace="shop"' in labels[pod.cid],
                      f"pod labels: {labels[pod.cid]}")
                check("pod=" not in labels[plain.cid] and "namespace=" not in labels[plain.cid],
                      f"a container outside a pod has no pod labels: {labels[plain.cid]}")
                check("container=" not in labels[""], f"host labels: {labels['']}")
                check(metric(a.metrics(), "dlprof_agent_containers") == 3, "three groups")
                # Removed: after the grace, their series go; the host's stays.
                for w in ws:
                    w.stop()
                wait_series(a, {"": 10000}, timeout=30)
                text = a.metrics()
                check(metric(text, "dlprof_agent_series_retired_total") == 2, "retired count")
                check(metric(text, "dlprof_agent_containers") == 1, "groups left")
                # One (function, cgroup) entry per container in the kernel's map: both freed.
                freed = sum(int(n) for n in re.findall(r"event=collect .*kernel_entries_freed=(\d+)", a.text()))
                check(freed == 2, f"kernel entries freed {freed}, want 2: {a.text()[-2000:]}")
                check(a.stop() == 0, f"exit {a.p.returncode}")
        finally:
            finish(host)


@modes("session")
def test_agent_budget_covers_container_copy():
    """A container with its own copy of the library (another inode), idle when the agent starts:
    the cold start leaves it unlinked, the first plan links dlt_add in it too (its calls counted
    exactly), and once it runs hot there the budget takes dlt_add out of the copy's links as
    well: the probes' time drops to a sliver of a CPU, and the sampling windows, which cover
    the copy, see its calls (the host's file has no caller here) in a sampled series with the
    container's label."""
    require_podman()
    from namespace_test import container_driver, finish_container, lib_world, profiler_env
    with lib_world() as (name, host_dir, tag):
        c, driver_pid = container_driver(tag, name, 4000000000)
        try:
            with Agent(["--lib", name, "--func", "dlt_add", "--max-overhead", "0.05"],
                       env=profiler_env(host_dir)) as a:
                a.wait_ready()
                check(re.search(rf"copy /app/{re.escape(name)}.*: 0 functions", a.text()),
                      f"the copy was linked before the cold start's plan: {a.text()}")
                c.stdin.write("go\n")
                c.stdin.flush()
                # The exact series past its first scrape too (a new series is shown at 0 there).
                text = wait_value(a, lambda t: samples(t, "dlprof_agent_functions").get('{state="sampled"}') == 1 and
                                  calls(t, "dlt_add") > 0, True, timeout=30)
                check(calls(text, "dlt_add") > 0, f"the copy's calls before the move were not counted: {a.text()}")
                # The programs' time over 3 s once dlt_add is sampled: windows only.
                t0, p0 = time.time(), metric(text, "dlprof_agent_probe_seconds_total")
                time.sleep(3)
                text = a.metrics()
                share = (metric(text, "dlprof_agent_probe_seconds_total") - p0) / (time.time() - t0)
                print(f"probe programs after the move: {share * 100:.3f}% of a CPU; "
                      f"sampled calls {calls(text, 'dlt_add', sampled=True):.0f}")
                check(share < 0.02, f"the copy is still probed full time: programs at {share:.1%} of a CPU")
                text = wait_value(a, lambda t: calls(t, "dlt_add", sampled=True) > 0, True, timeout=30)
                # Sampled series are per container too: the container's, none of the host's.
                sampled = [lbl for lbl in samples(text, "dlprof_calls_total")
                           if 'function="dlt_add"' in lbl and 'sampled="true"' in lbl]
                want = f'container="{container_id(driver_pid)}"'
                check(sampled and all(want in lbl for lbl in sampled),
                      f"sampled series {sampled}, want each with {want}")
                check(a.stop() == 0, f"exit {a.p.returncode}")
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(driver_pid, signal.SIGKILL)
            finish_container(c)


@modes("session")
def test_agent_pod_selector():
    """--namespace and --pod: only the matching pods' series, a matching pod started after
    the agent too; other pods, plain containers and the host are left out."""
    require_podman()
    with driver_image() as image, tempfile.TemporaryDirectory() as tmp, workloads() as ws:
        ws.append(Workload(image, tmp, 30000, pod=(str(uuid.uuid4()), "web-1", "shop")))
        ws.append(Workload(image, tmp, 20000, pod=(str(uuid.uuid4()), "web-2", "other")))
        ws.append(Workload(image, tmp, 15000, pod=(str(uuid.uuid4()), "db-1", "shop")))
        host = start_waiting_driver(["count", "10000"])
        try:
            env = dict(os.environ, DLPROF_AGENT_POD="web-*")
            with Agent(["--lib", LIB, "--func", "dlt_add", "--max-overhead", "off", "--namespace", "sh*"],
                       env=env) as a:
                a.wait_ready()
                for w in ws:
                    drive(w.p)
                drive(host)
                wait_series(a, {ws[0].cid: 30000})
                # A pod that starts later, in the selection.
                ws.append(Workload(image, tmp, 12345, pod=(str(uuid.uuid4()), "web-3", "shop")))
                drive(ws[-1].p)
                wait_series(a, {ws[0].cid: 30000, ws[-1].cid: 12345})
                check(a.stop() == 0, f"exit {a.p.returncode}")
        finally:
            finish(host)


@contextlib.contextmanager
def fake_kubelet(tmp, pods, token):
    """A local HTTPS server answering GET /pods as a kubelet does (a PodList), to the bearer
    token only; its self-signed certificate's file. No real kubelet exists on this machine."""
    import http.server
    import json
    import ssl
    import threading
    cert, key = os.path.join(tmp, "kubelet.crt"), os.path.join(tmp, "kubelet.key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", cert],
                   check=True, capture_output=True)
    body = json.dumps({"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": [
        {"metadata": {"name": name, "namespace": ns, "uid": uid}, "spec": {"nodeName": "node-1"},
         "status": {"phase": "Running"}} for uid, name, ns in pods]}).encode()
    asked = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            ok = self.path == "/pods" and self.headers.get("Authorization") == f"Bearer {token}"
            asked.append((self.path, ok))
            self.send_response(200 if ok else 401)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body if ok else b"Unauthorized")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}", cert, asked
    finally:
        server.shutdown()


@modes("session")
def test_agent_kubelet_pod_names():
    """A pod's container without the pod's files (no hostname, no service account): its pod
    and namespace come from the kubelet's /pods (a local fake kubelet over HTTPS with a
    bearer token), found by the pod UID of its cgroup path; --namespace selects on them."""
    require_podman()
    uid = str(uuid.uuid4())
    with driver_image() as image, tempfile.TemporaryDirectory() as tmp, workloads() as ws, \
            fake_kubelet(tmp, [(uid, "api-5f6d7c8b9-abcde", "payments")], "s3cr3t") as (url, cert, asked):
        token = os.path.join(tmp, "token")
        with open(token, "w") as f:
            f.write("s3cr3t\n")
        ws.append(Workload(image, tmp, 25000, pod=(uid, "unused", "unused"), pod_files=False))
        ws.append(Workload(image, tmp, 5000, pod=(str(uuid.uuid4()), "other", "elsewhere")))
        with Agent(["--lib", LIB, "--func", "dlt_add", "--max-overhead", "off", "--namespace", "payments",
                    "--kubelet-url", url, "--kubelet-token", token, "--kubelet-ca", cert]) as a:
            a.wait_ready()
            for w in ws:
                drive(w.p)
            labels = wait_series(a, {ws[0].cid: 25000})
            check('pod="api-5f6d7c8b9-abcde"' in labels[ws[0].cid] and 'namespace="payments"' in labels[ws[0].cid],
                  f"labels {labels}")
            check(asked and all(ok for _, ok in asked), f"kubelet requests {asked}")
            check("event=kubelet pods=1" in a.text(), f"log: {a.text()[-1500:]}")
            check(a.stop() == 0, f"exit {a.p.returncode}")
        # A wrong token: a one-line error in the log, counted, no crash.
        with open(token, "w") as f:
            f.write("wrong\n")
        with Agent(["--lib", LIB, "--func", "dlt_add", "--max-overhead", "off",
                    "--kubelet-url", url, "--kubelet-token", token, "--kubelet-ca", cert]) as a:
            a.wait_ready()
            ws.append(Workload(image, tmp, 1000, pod=(str(uuid.uuid4()), "unused", "unused"), pod_files=False))
            drive(ws[-1].p)
            deadline = time.time() + 15
            while time.time() < deadline and "what=kubelet" not in a.text():
                time.sleep(0.2)
            check("answered 401" in a.text(), f"log: {a.text()[-1500:]}")
            check(metric(a.metrics(), "dlprof_agent_kubelet_errors_total") >= 1, "errors counted")
            check(a.stop() == 0, f"exit {a.p.returncode}")


if __name__ == "__main__":
    sys.exit(itest.run(globals()))
