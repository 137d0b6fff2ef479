#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""A short churn soak of the agent (bench/agent_soak.py for 45 s): processes and
podman containers come and go; the agent's RSS stays flat, no BPF map or link
leaks, removed containers are collected, a steady workload's count is exact.
Runner and helpers: itest.py."""
import json
import os
import subprocess
import sys

import itest
from itest import *  # noqa: F401,F403 (the shared helpers and environment)

SOAK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "agent_soak.py")


def soak_short(*extra):
    build = os.path.dirname(os.path.dirname(os.path.abspath(DLPROF)))
    p = subprocess.run([sys.executable, SOAK, "--build", build, "--minutes", "0.75", "--warmup", "15", "--grace", "2",
                        *extra], capture_output=True, text=True, timeout=240)
    res = json.loads(p.stdout.strip().splitlines()[-1]) if p.stdout.strip() else {}
    check(p.returncode == 0 and res and all(res["checks"].values()), f"soak failed:\n{p.stdout[-3000:]}\n{p.stderr[-2000:]}")
    check(res["steady_calls"] > 0 and res["processes"] > 20, f"too little churn: {res}")
    return res


@modes("session")
def test_agent_soak_short():
    """45 s of churn under the agent; every check of bench/agent_soak.py passes."""
    soak_short()


@modes("session")
def test_agent_soak_short_with_exports():
    """The same churn with a protobuf scrape (native histograms) every 5 s and an OTLP push
    every second: the series' kernel buckets go with their containers, RSS stays flat."""
    from otlpserver import require_protobuf
    require_protobuf()  # the receiver decodes each push: skips, saying why, without python3-protobuf
    res = soak_short("--exports")
    check(res["otlp_pushes"] > 20, f"too few pushes: {res['otlp_pushes']}")


if __name__ == "__main__":
    sys.exit(itest.run(globals()))
