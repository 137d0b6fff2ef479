#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""dlprof-bpf agent's exports to the fleet's own tools: the protobuf
exposition decoded with Prometheus' own metrics.proto, Debian's Prometheus
(native histograms on) scraping it and answering histogram_quantile over
the native histogram, and OTLP/HTTP pushes decoded by a receiver built from
the OpenTelemetry .proto files (otlpserver.py), stopped and started again
mid-run. Runner and helpers: itest.py."""
import importlib.util
import math
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

import itest
from itest import *  # noqa: F401,F403 (the shared helpers and environment)
from agent_test import Agent, calls, samples, wait_value
from promserver import prometheus, promql, require_prometheus
from otlpserver import Receiver, require_protobuf

SOURCE = os.path.dirname(os.path.abspath(__file__))
PROM_PROTO = "/usr/share/gocode/src/github.com/prometheus/client_model/io/prometheus/client/metrics.proto"
ACCEPT_PROTO = ("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,"
                "text/plain;version=0.0.4;q=0.3")
# One bucket of schema 4: a factor of 2^(1/16).
BUCKET = 2 ** (1 / 16)


def require_protoc():
    """protoc and Python's protobuf: Debian's python3-protobuf, also under another Python 3.11."""
    try:
        import google.protobuf  # noqa: F401
    except ImportError:
        sys.path.append(f"/usr/lib/python3/dist-packages")
        try:
            import google.protobuf  # noqa: F401,F811
        except ImportError:
            raise Skip("python3-protobuf missing: scripts/deps installs it")
    if not os.path.exists(PROM_PROTO) or subprocess.run(["which", "protoc"], capture_output=True).returncode:
        raise Skip("protoc or Prometheus' metrics.proto missing: scripts/deps installs them")


def prom_pb2(tmp):
    """io.prometheus.client's Python classes, compiled from the .proto the agent's build uses."""
    root = PROM_PROTO.split("/io/prometheus/client/")[0]
    subprocess.run(["protoc", f"-I{root}", "-I/usr/include", f"--python_out={tmp}", PROM_PROTO], check=True)
    # By its path: the package "io" would be Python's own.
    spec = importlib.util.spec_from_file_location("metrics_pb2", f"{tmp}/io/prometheus/client/metrics_pb2.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def scrape_proto(port):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/metrics", headers={"Accept": ACCEPT_PROTO})
    with urllib.request.urlopen(req, timeout=5) as r:
        return r.headers.get("Content-Type"), r.read()


def families(pb2, data):
    """The delimited stream's MetricFamily messages, by name."""
    from google.protobuf.internal.decoder import _DecodeVarint32
    out, pos = {}, 0
    while pos < len(data):
        size, pos = _DecodeVarint32(data, pos)
        mf = pb2.MetricFamily()
        mf.ParseFromString(data[pos:pos + size])
        out[mf.name] = mf
        pos += size
    return out


def native_buckets(h):
    """{index: count} from spans and deltas, as Prometheus reads them."""
    out, i, c, d = {}, 0, 0, 0
    for s in h.positive_span:
        i += s.offset
        for _ in range(s.length):
            c += h.positive_delta[d]
            d += 1
            out[i] = c
            i += 1
    return out


@modes("session")
def test_agent_protobuf_exposition():
    """The protobuf answer carries every family of the text one, with the same values; the
    duration histogram has the classic buckets of the text and native ones at schema 4 whose
    counts add up to the histogram's count, the workload's."""
    require_protoc()
    n = 5000
    with Agent(["--lib", LIB, "--func", "dlt_add", "--max-overhead", "off"]) as a, \
            tempfile.TemporaryDirectory(prefix="dlprof-pb.") as tmp:
        pb2 = prom_pb2(tmp)
        a.wait_ready()
        scrape_proto(a.port)	# the first protobuf ask: the agent renders it from now on
        subprocess.run([DRIVER, "count", str(n)], check=True, capture_output=True)
        text = wait_value(a, lambda t: calls(t, "dlt_add"), n)
        ctype, data = scrape_proto(a.port)
        check(ctype.startswith("application/vnd.google.protobuf"), f"Content-Type {ctype}")
        fams = families(pb2, data)
        text_names = {l.split()[2] for l in text.splitlines() if l.startswith("# TYPE ")}
        check(set(fams) == text_names, f"families: protobuf {sorted(fams)}, text {sorted(text_names)}")
        (m,) = [m for m in fams["dlprof_calls_total"].metric
                if {l.name: l.value for l in m.label}.get("function") == "dlt_add"]
        check(m.counter.value == n, f"calls {m.counter.value}")
        (m,) = [m for m in fams["dlprof_call_duration_seconds"].metric
                if {l.name: l.value for l in m.label}.get("function") == "dlt_add"]
        h = m.histogram
        text_buckets = [v for lbl, v in samples(text, "dlprof_call_duration_seconds_bucket").items()
                        if 'function="dlt_add"' in lbl and "+Inf" not in lbl]
        check([b.cumulative_count for b in h.bucket] == text_buckets, f"classic {h.bucket} text {text_buckets}")
        nb = native_buckets(h)
        print(f"{n} calls: native schema {h.schema}, {len(nb)} buckets, zero {h.zero_count}, "
              f"from {2 ** ((min(nb) - 1) / 16):.3g} s to {2 ** (max(nb) / 16):.3g} s")
        check(h.schema == 4 and h.sample_count == n and h.zero_count + sum(nb.values()) == n,
              f"schema {h.schema}, count {h.sample_count}, buckets {nb}, zero {h.zero_count}")
        check(a.stop() == 0, f"exit {a.p.returncode}")


def cli_percentiles(cmd):
    """The CLI's p50 and p99 of dlt_nap over cmd's calls, in seconds, and its call count."""
    rc, doc, err = run_profiled(cmd, ["--func", "dlt_nap"])
    check(rc == 0 and doc, f"profiler: {rc} {err}")
    f = func(doc, "dlt_nap")
    return f["p50_ns"] / 1e9, f["p99_ns"] / 1e9, f["calls"]


@modes("session")
def test_agent_native_histogram_quantiles_in_prometheus():
    """Debian's Prometheus with native histograms scrapes the agent over protobuf: the series
    is a native histogram of the workload's count, and histogram_quantile over it is within
    a bucket of the p50 and p99 the CLI reads from the same calls."""
    require_prometheus()
    cmd = ["sh", "-c", f"{DRIVER} nap 1 300; {DRIVER} nap 5 12"]
    query = 'dlprof_call_duration_seconds{function="dlt_nap"}'
    with Agent(["--lib", LIB, "--func", "dlt_nap", "--max-overhead", "off", "--refresh", "1"]) as a, \
            prometheus(f"127.0.0.1:{a.port}", extra_args=["--enable-feature=native-histograms"]) as url:
        a.wait_ready()
        deadline = time.time() + 30
        while [v for _, v in promql(url, f'up{{instance="127.0.0.1:{a.port}"}}')] != [1.0]:
            check(time.time() < deadline, f"Prometheus does not reach the agent: {promql(url, 'up')}")
            time.sleep(0.2)
        p50, p99, n = cli_percentiles(cmd)
        check(n == 312, f"the CLI counted {n} calls")
        deadline = time.time() + 30
        while [v for _, v in promql(url, f"histogram_count({query})")] != [n]:
            check(time.time() < deadline, f"Prometheus' native histogram never counted {n}: "
                                          f"{promql(url, f'histogram_count({query})')}")
            time.sleep(0.5)
        check(not promql(url, 'dlprof_call_duration_seconds_bucket{function="dlt_nap"}'),
              "Prometheus stored classic buckets: it did not take the native histogram")
        for q, want in ((0.5, p50), (0.99, p99)):
            (_, got), = promql(url, f"histogram_quantile({q}, {query})")
            off = abs(math.log(got / want, BUCKET))
            print(f"p{q * 100:g}: Prometheus {got * 1e3:.4f} ms, CLI {want * 1e3:.4f} ms, {off:.2f} buckets apart")
            check(off <= 1, f"p{q * 100:g}: Prometheus {got} s, CLI {want} s: {off:.2f} buckets apart")
        check(a.stop() == 0, f"exit {a.p.returncode}")


def attrs(kvs):
    return {kv.key: kv.value.string_value for kv in kvs}


def points(req, name):
    """[(resource attributes, point attributes, point)] of every metric called name in req."""
    out = []
    for rm in req.resource_metrics:
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                if m.name != name:
                    continue
                data = getattr(m, m.WhichOneof("data"))
                out += [(attrs(rm.resource.attributes), attrs(p.attributes), p) for p in data.data_points]
    return out


def otlp_calls(req, function):
    if req is None:
        return None
    got = [p.as_double for _, a, p in points(req, "dlprof.calls") if a.get("code.function.name") == function]
    return got[0] if len(got) == 1 else got


def wait_push(receiver, function, want, timeout=30):
    """The first request from now on whose calls of function are want."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        headers, req = receiver.last()
        if otlp_calls(req, function) == want:
            return headers, req
        time.sleep(0.2)
    raise AssertionError(f"no push with {want} calls of {function}: last {otlp_calls(receiver.last()[1], function)}")


def check_push(req, lib, n):
    """Names, attributes, counts and the exponential histogram of dlt_add's n calls."""
    (res, a, p), = [x for x in points(req, "dlprof.calls") if x[1].get("code.function.name") == "dlt_add"]
    check(res.get("service.name") == "dlprof-bpf" and res.get("host.name") and a.get("dlprof.library") == lib,
          f"resource {res}, attributes {a}")
    (_, _, h), = [x for x in points(req, "dlprof.call.duration") if x[1].get("code.function.name") == "dlt_add"]
    buckets = list(h.positive.bucket_counts)
    check(h.scale == 4 and h.count == n and h.zero_count + sum(buckets) == n and h.sum > 0,
          f"exponential histogram: scale {h.scale} count {h.count} zero {h.zero_count} buckets {sum(buckets)} sum {h.sum}")
    check(h.start_time_unix_nano < h.time_unix_nano and p.start_time_unix_nano == h.start_time_unix_nano,
          "start and point times")
    (_, _, c), = [x for x in points(req, "dlprof.cpu.time") if x[1].get("code.function.name") == "dlt_add"]
    check(0 < c.as_double <= h.sum, f"on-CPU {c.as_double} s, wall {h.sum} s")
    return h


def metric_value(text, name):
    return samples(text, name).get("", -1)


@modes("session")
def test_agent_otlp_push_survives_collector_restart():
    """The agent pushes OTLP/HTTP to the endpoint and headers OpenTelemetry's variables name;
    the receiver decodes each push with the official .proto: names, resource and point
    attributes, calls and the exponential histogram's count and buckets are the workload's.
    The receiver stops mid-run: the agent keeps serving, retries, drops what its queue
    cannot hold and counts it; started again, it gets the exact totals, calls made while
    it was down included."""
    require_protobuf()
    first, second = 3000, 2000
    rx = Receiver().start()
    env = dict(os.environ, OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{rx.port}",
               OTEL_EXPORTER_OTLP_HEADERS="x-tenant=team%20a, x-scope = dlprof", OTEL_METRIC_EXPORT_INTERVAL="1000")
    try:
        with Agent(["--lib", LIB, "--func", "dlt_add", "--max-overhead", "off"], env=env) as a:
            a.wait_ready()
            subprocess.run([DRIVER, "count", str(first)], check=True, capture_output=True)
            text = wait_value(a, lambda t: calls(t, "dlt_add"), first)
            (lib,) = {l.split('lib="')[1].split('"')[0] for l in samples(text, "dlprof_calls_total") if "dlt_add" in l}
            headers, req = wait_push(rx, "dlt_add", first)
            check(headers.get("x-tenant") == "team a" and headers.get("x-scope") == "dlprof", f"headers {headers}")
            h = check_push(req, lib, first)
            print(f"{first} calls pushed: {len(h.positive.bucket_counts)} buckets from offset {h.positive.offset}")
            rx.stop()
            down = time.time()
            subprocess.run([DRIVER, "count", str(second)], check=True, capture_output=True)
            time.sleep(10)
            text = a.metrics()
            dropped, failures = metric_value(text, "dlprof_agent_otlp_dropped_total"), metric_value(text, "dlprof_agent_otlp_failures_total")
            print(f"receiver down {time.time() - down:.1f} s: {failures:.0f} failed attempts, {dropped:.0f} requests dropped")
            check(a.p.poll() is None and dropped > 0 and failures > 0, f"dropped {dropped}, failures {failures}")
            rx.start()
            _, req = wait_push(rx, "dlt_add", first + second)
            check_push(req, lib, first + second)
            ((_, _, d),) = points(req, "dlprof.agent.otlp.dropped")
            check(d.as_double >= dropped, f"the push says {d.as_double} dropped, /metrics {dropped}")
            check(a.stop() == 0, f"exit {a.p.returncode}: {a.text()[-2000:]}")
    finally:
        if rx.server:
            rx.stop()


@modes("session")
def test_agent_otlp_last_push_at_sigterm():
    """With a push due only a minute from now, SIGTERM still pushes the final counts once."""
    require_protobuf()
    n = 4321
    rx = Receiver().start()
    try:
        with Agent(["--lib", LIB, "--func", "dlt_add", "--max-overhead", "off",
                    "--otlp-endpoint", f"http://127.0.0.1:{rx.port}", "--otlp-interval", "60"]) as a:
            a.wait_ready()
            subprocess.run([DRIVER, "count", str(n)], check=True, capture_output=True)
            wait_value(a, lambda t: calls(t, "dlt_add"), n)
            check(rx.count() == 0, f"{rx.count()} pushes before the interval")
            check(a.stop() == 0, f"exit {a.p.returncode}")
        check(rx.count() == 1 and otlp_calls(rx.last()[1], "dlt_add") == n,
              f"{rx.count()} pushes, the last with {otlp_calls(rx.last()[1], 'dlt_add')} calls")
    finally:
        rx.stop()


@modes("session")
def test_agent_otlp_push_over_tls():
    """An https endpoint: the agent checks its certificate against OTEL_EXPORTER_OTLP_CERTIFICATE
    and pushes; without that CA it cannot (the certificate is the test's own), and says so in
    its failure count while the calls stay served on /metrics."""
    require_protobuf()
    n = 1234
    with tempfile.TemporaryDirectory(prefix="dlprof-tls.") as tmp:
        cert, key = f"{tmp}/cert.pem", f"{tmp}/key.pem"
        p = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                            "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                           capture_output=True, text=True)
        if p.returncode:
            raise Skip(f"openssl cannot make a test certificate: {p.stderr.strip()[-200:]}")
        rx = Receiver(tls=(cert, key)).start()
        try:
            url = f"https://127.0.0.1:{rx.port}"
            for ca, want in ((cert, n), (None, None)):
                env = dict(os.environ, OTEL_METRIC_EXPORT_INTERVAL="500")
                if ca:
                    env["OTEL_EXPORTER_OTLP_CERTIFICATE"] = ca
                before = rx.count()
                with Agent(["--lib", LIB, "--func", "dlt_add", "--max-overhead", "off", "--otlp-endpoint", url],
                           env=env) as a:
                    a.wait_ready()
                    subprocess.run([DRIVER, "count", str(n)], check=True, capture_output=True)
                    wait_value(a, lambda t: calls(t, "dlt_add"), n)
                    if want:
                        check_push(wait_push(rx, "dlt_add", n)[1], LIB.rsplit("/", 1)[-1], n)
                    else:
                        wait_value(a, lambda t: metric_value(t, "dlprof_agent_otlp_failures_total") > 0, True)
                        check(rx.count() == before, "a push got through without the CA")
                        check(metric_value(a.metrics(), "dlprof_agent_otlp_sent_total") == 0, "sent without the CA")
                    check(a.stop() == 0, f"exit {a.p.returncode}")
        finally:
            rx.stop()


@modes("session")
def test_agent_otlp_bad_settings():
    """A bad endpoint, header list, interval or CA file is one line naming it, exit 2, before
    anything is attached."""
    base = [DLPROF, "agent", "--lib", LIB, "--listen", f"127.0.0.1:{free_port()}"]
    env = dict(os.environ)
    cases = [
        (["--otlp-endpoint", "collector:4318"], {}, "--otlp-endpoint: 'collector:4318' is not an http"),
        (["--otlp-interval", "0"], {}, "--otlp-interval"),
        ([], {"OTEL_EXPORTER_OTLP_ENDPOINT": "grpc://c:4317"}, "(from OTEL_EXPORTER_OTLP_ENDPOINT)"),
        ([], {"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "c:4318/v1/metrics"}, "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"),
        (["--otlp-endpoint", "http://c:4318"], {"OTEL_EXPORTER_OTLP_HEADERS": "api-key"}, "OTEL_EXPORTER_OTLP_HEADERS"),
        (["--otlp-endpoint", "http://c:4318"], {"OTEL_METRIC_EXPORT_INTERVAL": "soon"}, "OTEL_METRIC_EXPORT_INTERVAL"),
        (["--otlp-endpoint", "https://c:4318"], {"OTEL_EXPORTER_OTLP_CERTIFICATE": "/nonexistent/ca.pem"},
         "cannot read '/nonexistent/ca.pem'"),
    ]
    for args, extra_env, needle in cases:
        expect_error(base + args, needle, env=dict(env, **extra_env))
        p = subprocess.run(base + args, capture_output=True, text=True, timeout=60, env=dict(env, **extra_env))
        check(p.returncode == 2, f"{args} {extra_env}: exit {p.returncode}")


if __name__ == "__main__":
    sys.exit(itest.run(globals()))
