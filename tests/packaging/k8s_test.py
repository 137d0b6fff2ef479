#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""packaging/k8s validated offline: every manifest against the Kubernetes API
schemas and types (k8s-validate/validate.mjs: types, required fields, enums,
unknown fields), broken manifests rejected, and the DaemonSet's security and
wiring (capabilities, probes, ports, Service and ServiceMonitor) as
docs/packaging.md states them. Runner and helpers: pkgtest.py."""
import glob
import os
import subprocess
import sys
import tempfile

import pkgtest
from pkgtest import check

VALIDATOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "k8s-validate")


def validate(*files):
    pkgtest.require_tools("node")
    check(os.path.isdir(os.path.join(VALIDATOR, "node_modules", "kubernetes-models")),
          "the schemas are not installed: run scripts/deps (npm ci in tests/packaging/k8s-validate)")
    p = subprocess.run(["node", os.path.join(VALIDATOR, "validate.mjs"), *files], capture_output=True, text=True,
                       timeout=120)
    return p.returncode, p.stdout + p.stderr


def manifests():
    files = sorted(glob.glob(os.path.join(pkgtest.K8S, "*.yaml")))
    check(len(files) >= 4, f"packaging/k8s holds {files}")
    return files


def test_manifests_valid():
    rc, out = validate(*manifests())
    print(out, end="")
    check(rc == 0, f"packaging/k8s does not validate: {out}")


# (what to break, file, text → replacement, what the validator must say)
BROKEN = [
    ("misspelt field", "daemonset.yaml", ("readOnlyRootFilesystem: true", "readOnlyRootFilesytem: true"),
     "'\"readOnlyRootFilesytem\"' does not exist"),
    ("wrong type", "daemonset.yaml", ("hostPID: true", "hostPID: \"yes\""), "hostPID must be boolean"),
    ("missing required field", "daemonset.yaml", ("  selector:\n    matchLabels:\n      app.kubernetes.io/name: dlprof-bpf-agent\n  updateStrategy:",
                                                  "  updateStrategy:"), "required property selector"),
    ("value outside an enum", "service.yaml", ("protocol: TCP", "protocol: TCPX"), "allowed values"),
    ("unknown ServiceMonitor field", "servicemonitor.yaml", ("    - port: metrics", "    - portt: metrics"),
     "'\"portt\"' does not exist"),
    ("unknown kind", "namespace.yaml", ("kind: Namespace", "kind: Namesppace"), "no schema for v1 Namesppace"),
    ("bad YAML", "service.yaml", ("  ports:\n", "  ports: [\n"), "YAML:"),
]


def test_broken_manifests_rejected():
    with tempfile.TemporaryDirectory() as tmp:
        for what, name, (old, new), needle in BROKEN:
            text = open(os.path.join(pkgtest.K8S, name)).read()
            check(old in text, f"{what}: {old!r} is not in {name} any more; update the test")
            path = os.path.join(tmp, name)
            with open(path, "w") as f:
                f.write(text.replace(old, new, 1))
            rc, out = validate(path)
            print(f"{what}: exit {rc}: {out.splitlines()[0] if out else ''}")
            check(rc == 1, f"{what}: the validator accepted it (exit {rc}): {out}")
            check(needle in out, f"{what}: {needle!r} not in {out!r}")


def test_daemonset_policy():
    pod, c = pkgtest.agent_container()
    sc = c["securityContext"]
    check(pod.get("hostPID") is True, "hostPID is not set")
    check(not pod.get("hostNetwork") and not pod.get("hostIPC"), "the pod shares the host's network or IPC")
    check(sc.get("privileged") is False and sc.get("allowPrivilegeEscalation") is False, "privileged or escalation allowed")
    check(sc.get("readOnlyRootFilesystem") is True, "the root file system is writable")
    check(sc["capabilities"]["drop"] == ["ALL"], f"drop: {sc['capabilities']['drop']}")
    want = sorted(c.removeprefix("CAP_") for c in pkgtest.AGENT_CAPS)
    check(sorted(sc["capabilities"]["add"]) == want, f"add: {sc['capabilities']['add']}, want {want}")
    for kind in ("requests", "limits"):
        check({"cpu", "memory"} <= set(c["resources"].get(kind, {})), f"resources.{kind}: {c['resources']}")
    port = next(p for p in c["ports"] if p["name"] == "metrics")
    env = {e["name"]: e.get("value") for e in c["env"]}
    check(env["DLPROF_AGENT_LISTEN"].endswith(f":{port['containerPort']}"),
          f"DLPROF_AGENT_LISTEN {env['DLPROF_AGENT_LISTEN']} is not the metrics port {port['containerPort']}")
    check(env.get("DLPROF_AGENT_LIBS"), "DLPROF_AGENT_LIBS is empty")
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        get = c[probe]["httpGet"]
        check(get["path"] == "/healthz" and get["port"] == "metrics", f"{probe}: {get}")
    check(c["args"][0] == "agent", f"args: {c['args']}")
    for m in c["volumeMounts"]:
        check(m.get("readOnly") or m["mountPath"] == "/tmp", f"{m['mountPath']} is mounted writable")
    svc = pkgtest.k8s_docs("service.yaml")[0]
    sm = pkgtest.k8s_docs("servicemonitor.yaml")[0]
    ds = pkgtest.k8s_docs("daemonset.yaml")[0]
    labels = ds["spec"]["template"]["metadata"]["labels"]
    check(all(labels.get(k) == v for k, v in svc["spec"]["selector"].items()), "the Service selects no agent pod")
    check(svc["spec"]["ports"][0]["targetPort"] == "metrics", f"Service targetPort: {svc['spec']['ports']}")
    check(all(svc["metadata"]["labels"].get(k) == v for k, v in sm["spec"]["selector"]["matchLabels"].items()),
          "the ServiceMonitor selects no Service")
    check(sm["spec"]["endpoints"][0]["port"] == svc["spec"]["ports"][0]["name"], "ServiceMonitor port is not the Service's")
    ns = pkgtest.k8s_docs("namespace.yaml")[0]["metadata"]["name"]
    check(ns in sm["spec"]["namespaceSelector"]["matchNames"] and ds["metadata"]["namespace"] == ns == svc["metadata"]["namespace"],
          "the documents are not in one namespace")


if __name__ == "__main__":
    sys.exit(pkgtest.run(globals()))
