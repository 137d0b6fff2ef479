# SPDX-License-Identifier: GPL-2.0-only
"""Debian's Prometheus server for the tests: an instance of our own (its
configuration and storage in a temporary folder, a free port) scraping one
target, and PromQL through its HTTP API. Used by the agent's tests and the
packaging end to end (prometheus_e2e_test.py)."""
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.parse

from itest import Skip, check, free_port, http_get


def require_prometheus():
    if not shutil.which("prometheus"):
        raise Skip("prometheus missing: scripts/deps installs Debian's prometheus package")


@contextlib.contextmanager
def prometheus(target, interval="1s", extra_args=()):
    """Prometheus scraping target every interval, once it says it is ready: its URL.
    extra_args: more of its flags (--enable-feature=native-histograms)."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="dlprof-prom.") as tmp:
        config = os.path.join(tmp, "prometheus.yml")
        with open(config, "w") as f:
            json.dump({"global": {"scrape_interval": interval, "scrape_timeout": interval,
                                  "evaluation_interval": interval},
                       "scrape_configs": [{"job_name": "dlprof", "static_configs": [{"targets": [target]}]}]}, f)
        log = open(os.path.join(tmp, "log"), "w+")
        prom = subprocess.Popen(["prometheus", f"--config.file={config}", f"--storage.tsdb.path={tmp}/data",
                                 f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn", *extra_args],
                                stdout=log, stderr=subprocess.STDOUT)
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 60
            while http_get(f"{url}/-/ready")[0] != 200:
                log.seek(0)
                check(prom.poll() is None and time.monotonic() < deadline, f"prometheus did not start: {log.read()[-2000:]}")
                time.sleep(0.2)
            yield url
        finally:
            prom.terminate()
            try:
                prom.wait(timeout=30)
            except subprocess.TimeoutExpired:
                prom.kill()
                prom.wait()
            log.close()


def promql(url, query, at=None):
    """The query's result through /api/v1/query (at: its evaluation time, Unix seconds):
    [(labels, value)] for an instant vector, [(labels, [(t, value)...])] for a range."""
    args = {"query": query}
    if at is not None:
        args["time"] = f"{at:.3f}"
    status, body = http_get(f"{url}/api/v1/query?" + urllib.parse.urlencode(args))
    check(status == 200, f"/api/v1/query {query}: {status} {body[:500]}")
    doc = json.loads(body)
    check(doc["status"] == "success", f"{query}: {doc}")
    if doc["data"]["resultType"] == "matrix":
        return [(r["metric"], [(float(t), float(v)) for t, v in r["values"]]) for r in doc["data"]["result"]]
    return [(r["metric"], float(r["value"][1])) for r in doc["data"]["result"]]


def wait_for_value(url, query, want, timeout=30):
    """Poll until the query returns exactly want; the last answer otherwise."""
    deadline = time.monotonic() + timeout
    got = None
    while time.monotonic() < deadline:
        res = promql(url, query)
        got = res[0][1] if len(res) == 1 else res
        if got == want:
            return got
        time.sleep(0.5)
    return got
