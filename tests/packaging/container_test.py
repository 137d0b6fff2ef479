#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The agent image built offline (packaging/container/build-offline.sh) from the
package: its settings are the Containerfile's, and run the way the DaemonSet
runs it (podman arguments derived from packaging/k8s/daemonset.yaml: host
PIDs, the four capabilities, seccomp, read-only root, the host's cgroups) it
profiles a process of another user on the host exactly, and fails without any
one of those capabilities. Runner and helpers: pkgtest.py."""
import json
import os
import subprocess
import sys
import tempfile

import pkgtest
from pkgtest import check, needs_bpf

CONTAINERFILE = os.path.join(pkgtest.TOP, "packaging/container/Containerfile")


def test_image_matches_containerfile():
    tag = pkgtest.image()
    cfg = json.loads(subprocess.run(["podman", "image", "inspect", tag], capture_output=True, text=True,
                                    check=True).stdout)[0]["Config"]
    lines = {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in open(CONTAINERFILE)
             if line.split(" ", 1)[0] in ("ENTRYPOINT", "CMD", "USER", "EXPOSE")}
    check(cfg["Entrypoint"] == json.loads(lines["ENTRYPOINT"]), f"Entrypoint {cfg['Entrypoint']}")
    check(cfg["Cmd"] == json.loads(lines["CMD"]), f"Cmd {cfg['Cmd']}")
    check(cfg.get("User") == lines["USER"].strip(), f"User {cfg.get('User')}")
    check(lines["EXPOSE"].strip() in cfg.get("ExposedPorts", {}), f"ExposedPorts {cfg.get('ExposedPorts')}")
    p = subprocess.run(pkgtest.PODMAN_RUN + ["--rm", tag, "--version"], capture_output=True, text=True, timeout=120)
    check(p.returncode == 0 and pkgtest.version() in p.stdout, f"--version in the image: {p.returncode} {p.stdout}{p.stderr}")


def in_image(args):
    return pkgtest.PODMAN_RUN + ["--rm", "-i"] + args + [pkgtest.image()]


@needs_bpf
def test_image_profiles_like_daemonset():
    """A process of user nobody on the host, its library named by soname: exact count from the image."""
    rc, doc, err = pkgtest.profile_driver_by_name(in_image(pkgtest.podman_args_like_daemonset()), calls=5000,
                                                  driver_user=65534)
    check(rc == 0, f"exit {rc}: {err}")
    check(pkgtest.calls_of(doc, "dlt_add") == 5000, f"{pkgtest.calls_of(doc, 'dlt_add')} calls, want 5000")


@needs_bpf
def test_image_each_cap_needed():
    args = pkgtest.podman_args_like_daemonset()
    for cap in pkgtest.AGENT_CAPS:
        name = cap.removeprefix("CAP_").lower()
        i = args.index(name)
        check(args[i - 1] == "--cap-add", f"{name} is not added: {args}")
        rc, doc, err = pkgtest.profile_driver_by_name(in_image(args[:i - 1] + args[i + 1:]), calls=1000,
                                                      driver_user=65534)
        lines = [line for line in err.splitlines() if line.startswith("dlprof-bpf:")]
        print(f"without {cap}: exit {rc}: {lines[-1] if lines else err.strip()}")
        check(rc != 0 and pkgtest.calls_of(doc, "dlt_add") == 0, f"without {cap} the profile still worked")
        check(lines, f"without {cap}: exit {rc} with no message: {err!r}")


RUNTIME_DEFAULT_SECCOMP = "/usr/share/containers/seccomp.json"


@needs_bpf
def test_image_with_seccomp_profile():
    """packaging/k8s/seccomp-profile.py: with the runtime's default profile the agent's image
    cannot load its programs; with the profile derived from it (the default plus bpf and
    perf_event_open) it profiles exactly, like Unconfined does."""
    if not os.path.exists(RUNTIME_DEFAULT_SECCOMP):
        raise pkgtest.Skip(f"no runtime default seccomp profile at {RUNTIME_DEFAULT_SECCOMP} (containers-common)")
    args = pkgtest.podman_args_like_daemonset()
    i = args.index("seccomp=unconfined")
    with tempfile.TemporaryDirectory() as tmp:
        derived = os.path.join(tmp, "dlprof-bpf-agent.json")
        with open(derived, "w") as f:
            p = subprocess.run([sys.executable, os.path.join(pkgtest.K8S, "seccomp-profile.py"), RUNTIME_DEFAULT_SECCOMP],
                               stdout=f, stderr=subprocess.PIPE, text=True)
        check(p.returncode == 0, f"seccomp-profile.py: {p.stderr}")
        for profile, works in ((RUNTIME_DEFAULT_SECCOMP, False), (derived, True)):
            seccomp = args[:i] + [f"seccomp={profile}"] + args[i + 1:]
            rc, doc, err = pkgtest.profile_driver_by_name(in_image(seccomp), calls=3000, driver_user=65534)
            lines = [line for line in err.splitlines() if line.startswith("dlprof-bpf:")]
            print(f"{os.path.basename(profile)}: exit {rc}: {lines[-1] if lines else ''}")
            if works:
                check(rc == 0 and pkgtest.calls_of(doc, "dlt_add") == 3000,
                      f"derived profile: exit {rc}, {pkgtest.calls_of(doc, 'dlt_add')} calls, want 3000: {err}")
            else:
                check(rc != 0 and "Operation not permitted" in err,
                      f"the runtime default let the agent load its programs (exit {rc}): {err}")


if __name__ == "__main__":
    sys.exit(pkgtest.run(globals()))
