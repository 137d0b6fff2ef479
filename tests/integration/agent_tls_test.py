#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""dlprof-bpf agent on a real TLS server: openssl s_server serving HTTPS on
127.0.0.1 to a client at a fixed request rate, in a cgroup of its own (the
client calls libssl too, outside it), the agent at its default budget on all
of libssl and libcrypto. The functions the server calls once per request,
against the server's own count of requests (its status page's accepts).
Runner and helpers: itest.py; the agent's: agent_test.py."""
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time

import itest
from itest import *  # noqa: F401,F403 (the shared helpers and environment)
from agent_test import Agent, calls, samples
from containers import move_into, scratch_cgroup

# Requests a second, each on a connection of its own: few enough that the cold start's 10 ms
# batches often see a per-request function idle, enough that a 0.1 s scan sees it (95%: the
# turn of scans after the cold start finds it, docs/agent.md). And the scrape interval.
RATE = 30
INTERVAL_S = 30
# s_server -www makes, binds and frees one SSL per connection: once per request each
# (with --max-overhead off the three series equal the requests made).
PER_REQUEST = ("SSL_new", "SSL_set_bio", "SSL_free")
# The client, a process of its own (the test's own threads would share its GIL with the
# scrapes): a request every 1/RATE s by the clock until killed, one behind its time at once.
CLIENT = r"""
import socket, ssl, sys, time
port, rate = int(sys.argv[1]), float(sys.argv[2])
ctx = ssl.create_default_context()
ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
t0, i = time.monotonic(), 0
while True:
    i += 1
    wait = t0 + i / rate - time.monotonic()
    if wait > 0:
        time.sleep(wait)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s, ctx.wrap_socket(s) as t:
            t.sendall(b"GET / HTTP/1.0\r\n\r\n")
            while t.recv(65536):
                pass
    except OSError as e:
        print(f"request failed: {e}", file=sys.stderr, flush=True)
"""


def https_get(port):
    """One request on a new connection; the body."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s, ctx.wrap_socket(s) as t:
        t.sendall(b"GET / HTTP/1.0\r\n\r\n")
        body = b""
        while chunk := t.recv(65536):
            body += chunk
    return body.decode(errors="replace")


def server_accepts(port):
    """The server's own count of handshakes finished (this request's included)."""
    m = re.search(r"(\d+) server accepts that finished", https_get(port))
    check(m is not None, "s_server's status page has no accept count")
    return int(m.group(1))


def series(text, fn):
    return calls(text, fn) + calls(text, fn, sampled=True)


def turn_s(text):
    """The documented bound on a turn of scans over the idle functions (docs/agent.md)."""
    idle = samples(text, "dlprof_agent_functions").get('{state="sampled"}', 0)
    return (idle / 128 + 1) * 0.5


def profile_server(agent_args):
    """openssl s_server under the client's load in a cgroup of its own, the agent with agent_args
    on libssl and libcrypto: once every per-request function's series is up, one scrape interval.
    Per function: (series' increase, requests the server finished, sampled at some time in the
    interval, moved between the links and sampling in it, its largest relative error gauge)."""
    if not shutil.which("openssl"):
        raise Skip("openssl is not installed")
    port = free_port()
    rows = {}
    with tempfile.TemporaryDirectory() as tmp, scratch_cgroup("tls-server") as cg:
        key, cert = os.path.join(tmp, "key.pem"), os.path.join(tmp, "cert.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=localhost"],
                       check=True, capture_output=True, timeout=60)
        server = subprocess.Popen(["openssl", "s_server", "-accept", f"127.0.0.1:{port}", "-cert", cert,
                                   "-key", key, "-www", "-quiet"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        client = None
        try:
            move_into(cg, server.pid)
            deadline = time.time() + 30
            while True:
                try:
                    server_accepts(port)
                    break
                except OSError:
                    check(time.time() < deadline and server.poll() is None, "s_server never answered")
                    time.sleep(0.1)
            # The server under its load when the agent starts, as on a node where the agent is restarted.
            client = subprocess.Popen([sys.executable, "-c", CLIENT, str(port), str(RATE)],
                                      stderr=subprocess.PIPE, text=True)
            with Agent(["--lib", "libssl.so.3", "--lib", "libcrypto.so.3", "--cgroup", cg, "-v"] + agent_args) as a:
                a.wait_ready(timeout=180)
                ready = time.time()
                # The state the comparison needs: every per-request function's series up and rising
                # (a new series is shown at 0 until a scrape has been served it). A function the cold
                # start's batches saw idle is found by the turn of scans that follows it.
                bound_s = turn_s(a.metrics())
                # Three times the bound and some: a busy machine stretches the scans' attach and close.
                deadline = time.time() + 3 * bound_s + 30
                while missing := [f for f in PER_REQUEST if series(a.metrics(), f) <= 0]:
                    scans = a.text().count("scan=true")
                    check(time.time() < deadline, f"{missing} not seen {time.time() - ready:.0f} s after /readyz "
                          f"({scans} scans; a turn: {bound_s:.0f} s): {a.text()[-3000:]}")
                    time.sleep(0.2)
                found_s = time.time() - ready
                print(f"the per-request functions' series up {found_s:.1f} s after /readyz "
                      f"(a turn of scans: {bound_s:.0f} s)")
                s0, t0, log0 = server_accepts(port), a.metrics(), a.text()
                time.sleep(INTERVAL_S)
                t1, s1, log1 = a.metrics(), server_accepts(port), a.text()
                made = s1 - s0 - 1      # the second status request's own handshake
                check(made > 0, "the server finished no request")
                errors = samples(t1, "dlprof_sampled_relative_error")
                for fn in PER_REQUEST:
                    shown = series(t1, fn) - series(t0, fn)
                    # In the links the whole interval: there when it began (the agent logs each
                    # move), and not moved since.
                    moves0, moves1 = (re.findall(rf"event=move function={fn} to=(\w+)", t) for t in (log0, log1))
                    sampled = not moves0 or moves0[-1] != "links" or len(moves1) > len(moves0)
                    relinked = len(moves1) > len(moves0) and moves1[-1] == "links"
                    err = max([v for lbl, v in errors.items() if f'function="{fn}"' in lbl] or [0])
                    print(f"{fn}: the server finished {made} requests in {INTERVAL_S} s, the series show "
                          f"{shown:,.0f} ({(shown / made - 1) * 100:+.1f}%), sampled {sampled}"
                          f"{' then linked' if relinked else ''}, relative error {err:.1%}")
                    rows[fn] = (shown, made, sampled, len(moves1) > len(moves0), err)
                log = a.text()
                check(a.stop() == 0, f"exit {a.p.returncode}")
        finally:
            if client:
                client.kill()
                _, err = client.communicate(timeout=30)
                check(not err, f"the client's requests failed: {err[-2000:]}")
            server.kill()
            server.wait()
    return rows, log


@modes("session")
def test_agent_tls_server_per_request_series():
    """openssl s_server at 30 requests a second, the agent on libssl and libcrypto at its
    default budget: the functions called once per request are found within the cold start's
    turn of scans; over a 30 s scrape interval those in the links match the server's count
    of requests within 5%, and the sampled ones carry their relative error once a window saw
    them. Not asserted, printed: a sampled one's count rides in the windows of libcrypto's hot
    functions, whose cost sets their duty (0.2%, a 25 ms window every 12.5 s), and misses 5%
    by far (issue 35 item 6 is open for those)."""
    rows, log = profile_server([])
    for fn, (shown, made, sampled, moved, err) in rows.items():
        # Linked the whole interval: exact, but for the requests between a scrape and the
        # status request beside it.
        if not sampled:
            check(abs(shown / made - 1) <= 0.05, f"{fn}: series {shown:.0f} against {made} requests: {log[-3000:]}")
        else:
            # A series has its error from its first window that saw a call (docs/agent.md). One
            # that moved in the interval may have had none yet: sampled, it runs on at the links'
            # rate until its first window; back in the links, its sampled series stops.
            check(err or moved, f"{fn}: a sampled series without its relative error: {log[-3000:]}")


@modes("session")
def test_agent_tls_server_named_functions_exact():
    """The same server and budget, the per-request functions named (--func): a few functions,
    in the links from the first plan on, and their series match the server's count of
    requests within 5% (docs/agent.md, "Where it falls short")."""
    rows, log = profile_server(["--func", ",".join(PER_REQUEST)])
    for fn, (shown, made, sampled, moved, err) in rows.items():
        check(not sampled, f"{fn}: sampled, with {len(PER_REQUEST)} functions named: {log[-3000:]}")
        check(abs(shown / made - 1) <= 0.05, f"{fn}: series {shown:.0f} against {made} requests: {log[-3000:]}")


@modes("session")
def test_agent_tls_server_exact_functions_rest_sampled():
    """The same server and budget on all of libssl and libcrypto, the per-request functions
    named with --exact: in the links from the first plan on, their series match the server's
    count of requests within 5%, while the rest of the libraries is still there, every function
    linked or sampled and the links within the budget (docs/agent.md, "--exact GLOB")."""
    rows, log = profile_server(["--exact", ",".join(PER_REQUEST)])
    for fn, (shown, made, sampled, moved, err) in rows.items():
        check(not sampled, f"{fn}: sampled, named with --exact: {log[-3000:]}")
        check(abs(shown / made - 1) <= 0.05, f"{fn}: series {shown:.0f} against {made} requests: {log[-3000:]}")
    # Each plan keeps every function profiled, linked or sampled, and its links within the budget.
    # How much of the rest is sampled depends on what its idle functions cost the server's
    # mappings as the cold start measured it: most of it on one run, a tenth on another.
    functions = int(re.search(r"event=attach functions=(\d+)", log).group(1))
    plans = re.findall(r"event=budget sampled=(\d+) attached=(\d+) budget_ms_per_s=([0-9.]+) "
                       r"exact_ms_per_s=([0-9.]+)", log)
    check(plans, f"no plan of the budget: {log[-3000:]}")
    for sampled, attached, budget, exact in plans:
        check(int(sampled) + int(attached) == functions and float(exact) <= float(budget),
              f"a plan leaves functions out or goes over the budget ({functions} functions): {plans[-3:]}")
    print(f"the rest: {plans[-1][0]} of {functions} functions sampled in the last plan, its links "
          f"{plans[-1][3]} of {plans[-1][2]} ms/s")
    print(f"last plan: {plans[-1][0]} functions sampled, {plans[-1][1]} attached")


if __name__ == "__main__":
    sys.exit(itest.run(globals()))
