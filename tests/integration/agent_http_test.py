#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""dlprof-bpf agent's endpoint under slow clients (docs/agent.md, "Endpoints"):
connections that trickle one header byte every 2 s, more of them than the
endpoint keeps, while a liveness probe and a scrape must each succeed every
second; the agent's memory stays flat. Real agent, real sockets, 127.0.0.1
only. Runner and helpers: itest.py; the agent: agent_test.py."""
import os
import selectors
import socket
import sys
import threading
import time

import itest
from itest import *  # noqa: F401,F403 (the shared helpers and environment)
from agent_test import Agent

TRICKLERS = 100
TRICKLE_EVERY_S = 2.0
# A closed trickler comes back this much later: pressure without a busy loop of reconnects.
RECONNECT_S = 0.2
RUN_S = 20
# The time a kubelet gives a liveness probe by default (timeoutSeconds).
PROBE_TIMEOUT_S = 1.0


class Tricklers:
    """n connections that each send one byte of a never-ending request header every
    TRICKLE_EVERY_S, reconnected when the agent closes them; on one thread of their own."""

    def __init__(self, port, n):
        self.port, self.n = port, n
        self.sel = selectors.DefaultSelector()
        self.due = {}	# socket -> when its next byte goes
        self.reopen = []	# when each closed trickler connects again
        self.closed_by_agent = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def open_one(self, now, stagger):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        s.setblocking(False)
        s.send(b"GET /metrics HTTP/1.1\r\n")
        self.sel.register(s, selectors.EVENT_READ)
        self.due[s] = now + stagger

    def drop(self, s, again=True):
        self.sel.unregister(s)
        del self.due[s]
        s.close()
        if again:
            self.reopen.append(time.monotonic() + RECONNECT_S)

    def run(self):
        now = time.monotonic()
        for i in range(self.n):
            self.open_one(now, TRICKLE_EVERY_S * i / self.n)
        while not self.stop.is_set():
            for key, _ in self.sel.select(timeout=0.05):
                try:
                    data = key.fileobj.recv(4096)
                except OSError:
                    data = b""
                if not data:	# closed, or reset, by the agent
                    self.closed_by_agent += 1
                    self.drop(key.fileobj)
            now = time.monotonic()
            for s, when in list(self.due.items()):
                if when <= now:
                    try:
                        s.send(b"X")
                        self.due[s] = now + TRICKLE_EVERY_S
                    except OSError:
                        self.closed_by_agent += 1
                        self.drop(s)
            for when in [w for w in self.reopen if w <= now]:
                self.reopen.remove(when)
                try:
                    self.open_one(now, TRICKLE_EVERY_S)
                except OSError:
                    self.reopen.append(now + RECONNECT_S)
        for s in list(self.due):
            self.drop(s, again=False)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(timeout=10)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def probe(port, path, timeout):
    """The status of one GET over a fresh connection, as a kubelet or Prometheus does it; 0 on failure."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.settimeout(timeout)
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        return int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.") else 0
    except (OSError, ValueError, IndexError):
        return 0


@modes("session")
def test_agent_serves_under_slow_clients():
    """100 trickling connections: /healthz and /metrics still answer every second; RSS flat."""
    with Agent(["--lib", LIB, "--func", "dlt_add", "--max-overhead", "off"]) as a:
        a.wait_status("/healthz", 200, timeout=60)
        rss_before = rss_kib(a.p.pid)
        failed, rss = [], []
        with Tricklers(a.port, TRICKLERS) as t:
            time.sleep(TRICKLE_EVERY_S)	# every trickler connected and trickling
            for second in range(RUN_S):
                start = time.monotonic()
                for path, timeout in (("/healthz", PROBE_TIMEOUT_S), ("/metrics", 2 * PROBE_TIMEOUT_S)):
                    status = probe(a.port, path, timeout)
                    if status != 200:
                        failed.append(f"{path} at {second} s: {status or 'no answer'}")
                rss.append(rss_kib(a.p.pid))
                time.sleep(max(0.0, 1.0 - (time.monotonic() - start)))
            shed = t.closed_by_agent
        print(f"failed {len(failed)} of {2 * RUN_S}; tricklers closed by the agent {shed}; "
              f"RSS {rss_before} KiB before, {min(rss)}..{max(rss)} KiB under the tricklers")
        check(not failed, f"{len(failed)} of {2 * RUN_S} requests failed: {failed[:6]}")
        check(shed >= TRICKLERS, f"only {shed} trickling connections were closed by the agent")
        # Flat: what the tricklers cost is bounded by the connection limit (libmicrohttpd's
        # 16 KiB buffers of up to 256 connections, taken once), and does not grow.
        check(max(rss) - rss_before < 6144, f"RSS grew from {rss_before} to {max(rss)} KiB")
        check(rss[-1] - rss[len(rss) // 4] < 1024, f"RSS still growing: {rss}")
        check(a.stop() == 0, f"exit {a.p.returncode}")


if __name__ == "__main__":
    sys.exit(itest.run(globals()))
