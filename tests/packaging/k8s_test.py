#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""packaging/k8s validated offline: every manifest against the Kubernetes API
schemas and types (k8s-validate/validate.mjs: types, required fields, enums,
unknown fields), broken manifests rejected, and the DaemonSet's security and
wiring (capabilities, probes, ports, Service and ServiceMonitor) as
docs/packaging.md states them; the opt-in kubelet lookup (kubelet-lookup/:
its RBAC and the DaemonSet patch) valid, granting only what its comment
justifies and wired to what the DaemonSet mounts. Runner and helpers:
pkgtest.py."""
import glob
import os
import subprocess
import sys
import tempfile

import pkgtest
from pkgtest import check

VALIDATOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "k8s-validate")
LOOKUP = os.path.join(pkgtest.K8S, "kubelet-lookup")
RBAC = os.path.join("kubelet-lookup", "kubelet-rbac.yaml")
PATCH = os.path.join("kubelet-lookup", "daemonset-patch.yaml")


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
    ("misspelt ClusterRole field", RBAC, ('    verbs: ["get"]', '    verb: ["get"]'), "required property verbs"),
    ("misspelt pod field", "daemonset.yaml", ("serviceAccountName:", "serviceAccountNme:"),
     "'\"serviceAccountNme\"' does not exist"),
]


def broken_copies(tmp, table):
    """Each (what, manifest, (old, new), needle) of table as a file in tmp with old replaced by new:
    (what, name, path, needle)."""
    for what, name, (old, new), needle in table:
        text = open(os.path.join(pkgtest.K8S, name)).read()
        check(old in text, f"{what}: {old!r} is not in {name} any more; update the test")
        path = os.path.join(tmp, os.path.basename(name))
        with open(path, "w") as f:
            f.write(text.replace(old, new, 1))
        yield what, name, path, needle


def test_broken_manifests_rejected():
    with tempfile.TemporaryDirectory() as tmp:
        for what, name, path, needle in broken_copies(tmp, BROKEN):
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
    for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz"), ("startupProbe", "/healthz")):
        get = c[probe]["httpGet"]
        check(get["path"] == path and get["port"] == "metrics", f"{probe}: {get}, want {path}")
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


# The opt-in kubelet lookup. The list keys of the strategic merge patch
# (the API's patchMergeKey of each list the patch touches); other lists are
# replaced whole, as kubectl patch does with atomic lists.
MERGE_KEYS = {"containers": "name", "env": "name", "volumeMounts": "mountPath", "volumes": "name"}
# What kubelet-rbac.yaml's comment justifies: (API group, resource, verb).
KUBELET_GRANT = {("", "nodes/pods", "get")}
TOKEN_MAX_S = 3600
KUBELET_ENV = ("DLPROF_AGENT_KUBELET_URL", "DLPROF_AGENT_KUBELET_TOKEN", "DLPROF_AGENT_KUBELET_CA")


def strategic_merge(base, patch, key=None):
    if isinstance(base, dict) and isinstance(patch, dict):
        out = dict(base)
        for k, v in patch.items():
            out[k] = strategic_merge(base[k], v, k) if k in base else v
        return out
    if isinstance(base, list) and isinstance(patch, list) and key in MERGE_KEYS:
        out, mk = list(base), MERGE_KEYS[key]
        for item in patch:
            i = next((n for n, x in enumerate(out) if x.get(mk) == item.get(mk)), None)
            if i is None:
                out.append(item)
            else:
                out[i] = strategic_merge(out[i], item)
        return out
    return patch


def patched_daemonset(patch_path):
    return strategic_merge(pkgtest.k8s_docs("daemonset.yaml")[0], pkgtest.k8s_docs(patch_path)[0])


def write_patched_daemonset(tmp, patch_path):
    """The DaemonSet with the patch merged, as a file in tmp for the validator."""
    import yaml
    path = os.path.join(tmp, "daemonset-patched.yaml")
    with open(path, "w") as f:
        yaml.safe_dump(patched_daemonset(patch_path), f)
    return path


def file_source(pod, mounts, path):
    """The volume source that provides the file `path` of the container, with its mount; (None, None) if none."""
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    for m in mounts if path.startswith("/") else []:
        rel = os.path.relpath(path, m["mountPath"])
        if rel.startswith(".."):
            continue
        for src in volumes.get(m["name"], {}).get("projected", {}).get("sources", []):
            if src.get("serviceAccountToken", {}).get("path") == rel:
                return src, m
            if any(i["path"] == rel for i in src.get("configMap", {}).get("items", [])):
                return src, m
    return None, None


def rbac_problems(rbac_docs, ds, sa):
    """What in the kubelet lookup's RBAC goes beyond KUBELET_GRANT or misses the DaemonSet's identity."""
    problems = []
    pod = ds["spec"]["template"]["spec"]
    who = {"kind": "ServiceAccount", "name": pod.get("serviceAccountName"), "namespace": ds["metadata"]["namespace"]}
    if (sa["metadata"]["name"], sa["metadata"]["namespace"]) != (who["name"], who["namespace"]):
        problems.append(f"the DaemonSet runs as {who}, not as serviceaccount.yaml's {sa['metadata']}")
    roles = [d for d in rbac_docs if d["kind"] == "ClusterRole"]
    bindings = [d for d in rbac_docs if d["kind"] == "ClusterRoleBinding"]
    if len(roles) != 1 or len(bindings) != 1 or len(rbac_docs) != 2:
        return problems + [f"want one ClusterRole and one ClusterRoleBinding: {[d['kind'] for d in rbac_docs]}"]
    role = roles[0]
    if "aggregationRule" in role:
        problems.append("the ClusterRole aggregates other roles")
    for rule in role.get("rules", []):
        if rule.get("nonResourceURLs") or rule.get("resourceNames"):
            problems.append(f"rule {rule}: nonResourceURLs or resourceNames")
        granted = {(g, r, v) for g in rule.get("apiGroups", []) for r in rule.get("resources", [])
                   for v in rule.get("verbs", [])}
        if any("*" in part for grant in granted for part in grant):
            problems.append(f"rule {rule}: a wildcard")
        problems += [f"grants {g or 'core'} {r} {v}, beyond {KUBELET_GRANT}" for g, r, v in sorted(granted - KUBELET_GRANT)]
    binding = bindings[0]
    ref = binding["roleRef"]
    if (ref["apiGroup"], ref["kind"], ref["name"]) != ("rbac.authorization.k8s.io", "ClusterRole", role["metadata"]["name"]):
        problems.append(f"the binding refers to {ref}, not to the ClusterRole {role['metadata']['name']}")
    if binding.get("subjects") != [who]:
        problems.append(f"the binding's subjects are {binding.get('subjects')}, not the DaemonSet's {who}")
    return problems


def lookup_wiring_problems(ds):
    """What in the patched DaemonSet does not give the agent the token, CA and URL that the kubelet lookup uses."""
    problems = []
    pod = ds["spec"]["template"]["spec"]
    c = next(c for c in pod["containers"] if c["name"] == "agent")
    env = {e["name"]: e for e in c.get("env", [])}
    if pod.get("automountServiceAccountToken") is not False:
        problems.append("the pod mounts the default service-account token")
    for name, want in (("DLPROF_AGENT_KUBELET_TOKEN", "serviceAccountToken"), ("DLPROF_AGENT_KUBELET_CA", "configMap")):
        path = env.get(name, {}).get("value", "")
        src, mount = file_source(pod, c.get("volumeMounts", []), path)
        if want not in (src or {}):
            problems.append(f"{name}={path!r}: no {want} volume of the pod provides that file")
        elif not mount.get("readOnly"):
            problems.append(f"{mount['mountPath']} is mounted writable")
        elif want == "serviceAccountToken" and not 600 <= src[want].get("expirationSeconds", 3600) <= TOKEN_MAX_S:
            problems.append(f"the token lives {src[want].get('expirationSeconds')} s, not 600..{TOKEN_MAX_S}")
        elif want == "configMap" and (src[want]["name"], src[want]["items"][0]["key"]) != ("kube-root-ca.crt", "ca.crt"):
            problems.append(f"the CA is {src[want]}, not the cluster's root CA")
    url = env.get("DLPROF_AGENT_KUBELET_URL", {}).get("value", "")
    host_ip = env.get("HOST_IP", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
    names = [e["name"] for e in c.get("env", [])]
    if url != "https://$(HOST_IP):10250" or host_ip != "status.hostIP" or \
            names.index("HOST_IP") > names.index("DLPROF_AGENT_KUBELET_URL"):
        problems.append(f"the URL {url!r} is not the node's kubelet port via HOST_IP (status.hostIP) defined before it")
    return problems


def test_kubelet_lookup_valid():
    with tempfile.TemporaryDirectory() as tmp:
        merged = write_patched_daemonset(tmp, os.path.join(pkgtest.K8S, PATCH))
        rc, out = validate(os.path.join(pkgtest.K8S, RBAC), merged)
    print(out, end="")
    check(rc == 0, f"the kubelet lookup's RBAC or patched DaemonSet does not validate: {out}")


def test_kubelet_lookup_policy():
    ds = pkgtest.k8s_docs("daemonset.yaml")[0]
    sa = pkgtest.k8s_docs("serviceaccount.yaml")[0]
    pod, c = pkgtest.agent_container()
    # Off by default: no token, no kubelet address (the agent asks the kubelet only when given one).
    check(not any(e["name"] in KUBELET_ENV for e in c["env"]), f"the base DaemonSet turns the kubelet lookup on: {c['env']}")
    check(not any("projected" in v for v in pod.get("volumes", [])), "the base DaemonSet mounts a projected token")
    check(sa.get("automountServiceAccountToken") is False and pod.get("automountServiceAccountToken") is False,
          "a service-account token is mounted by default")
    check(sorted(os.listdir(LOOKUP)) == ["daemonset-patch.yaml", "kubelet-rbac.yaml"], f"kubelet-lookup/ holds {os.listdir(LOOKUP)}")
    patched = patched_daemonset(os.path.join(pkgtest.K8S, PATCH))
    problems = rbac_problems(pkgtest.k8s_docs(os.path.join(pkgtest.K8S, RBAC)), ds, sa) + lookup_wiring_problems(patched)
    check(not problems, "; ".join(problems))
    env = {e["name"]: e.get("value") for e in patched["spec"]["template"]["spec"]["containers"][0]["env"]}
    check(env["DLPROF_AGENT_KUBELET_CA"] != "insecure", "the patch turns certificate verification off")


# (what to break, file, text → replacement, what the policy check must say)
BROKEN_LOOKUP = [
    ("wildcard verb", RBAC, ('verbs: ["get"]', 'verbs: ["*"]'), "a wildcard"),
    ("wildcard resource", RBAC, ('resources: ["nodes/pods"]', 'resources: ["*"]'), "a wildcard"),
    ("another verb", RBAC, ('verbs: ["get"]', 'verbs: ["get", "list"]'), "grants core nodes/pods list"),
    ("nodes/proxy", RBAC, ('resources: ["nodes/pods"]', 'resources: ["nodes/pods", "nodes/proxy"]'),
     "grants core nodes/proxy get"),
    ("binding to the wrong namespace", RBAC, ("    namespace: dlprof-bpf", "    namespace: default"), "not the DaemonSet's"),
    ("binding to another account", RBAC, ("    name: dlprof-bpf-agent\n    namespace", "    name: default\n    namespace"),
     "not the DaemonSet's"),
    ("binding to another role", RBAC, ("  name: dlprof-bpf-agent-kubelet-pods\nsubjects", "  name: view\nsubjects"),
     "not to the ClusterRole"),
    ("token not mounted", PATCH, ("value: /var/run/secrets/dlprof-bpf/token", "value: /var/run/secrets/kubernetes.io/serviceaccount/token"),
     "DLPROF_AGENT_KUBELET_TOKEN='/var/run/secrets/kubernetes.io/serviceaccount/token': no serviceAccountToken"),
    ("CA not mounted", PATCH, ("      path: ca.crt", "      path: root.crt"), "DLPROF_AGENT_KUBELET_CA="),
    ("long-lived token", PATCH, ("expirationSeconds: 3600", "expirationSeconds: 86400"), "the token lives 86400 s"),
    ("writable mount", PATCH, ("readOnly: true", "readOnly: false"), "mounted writable"),
    ("URL without its variable", PATCH, ("            - name: HOST_IP\n              valueFrom:\n                fieldRef:\n                  fieldPath: status.hostIP\n", ""),
     "HOST_IP (status.hostIP) defined before it"),
]


def test_kubelet_lookup_broken_rejected():
    ds = pkgtest.k8s_docs("daemonset.yaml")[0]
    sa = pkgtest.k8s_docs("serviceaccount.yaml")[0]
    with tempfile.TemporaryDirectory() as tmp:
        for what, name, path, needle in broken_copies(tmp, BROKEN_LOOKUP):
            if name == RBAC:
                problems = rbac_problems(pkgtest.k8s_docs(path), ds, sa)
            else:
                problems = lookup_wiring_problems(patched_daemonset(path))
            print(f"{what}: {problems}")
            check(any(needle in p for p in problems), f"{what}: {needle!r} not in {problems}")
        # A misspelt field of the patch reaches the validator through the merged DaemonSet.
        text = open(os.path.join(pkgtest.K8S, PATCH)).read().replace("expirationSeconds:", "expirationSecond:")
        with open(os.path.join(tmp, "patch.yaml"), "w") as f:
            f.write(text)
        rc, out = validate(write_patched_daemonset(tmp, os.path.join(tmp, "patch.yaml")))
        print(f"misspelt patch field: exit {rc}: {out.splitlines()[0] if out else ''}")
        check(rc == 1 and "'\"expirationSecond\"' does not exist" in out, f"misspelt patch field accepted: {out}")


if __name__ == "__main__":
    sys.exit(pkgtest.run(globals()))
