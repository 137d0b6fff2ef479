#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""A seccomp profile for the agent, derived from a container runtime's default:
    seccomp-profile.py DEFAULT.json > dlprof-bpf-agent.json
DEFAULT.json is the runtime's default profile in the Docker/OCI JSON format
(podman and CRI-O: /usr/share/containers/seccomp.json). The defaults allow
bpf() and perf_event_open() only to a process with CAP_SYS_ADMIN, which the
agent does not get; this profile is the default with those two system calls
allowed, nothing else changed. Put it in the kubelet's seccomp directory
(/var/lib/kubelet/seccomp/) of every node and set the DaemonSet's
seccompProfile to {type: Localhost, localhostProfile: dlprof-bpf-agent.json}
instead of Unconfined (docs/packaging.md)."""
import json
import sys

AGENT_SYSCALLS = ["bpf", "perf_event_open"]


def agent_profile(default):
    profile = dict(default)
    rules = []
    for rule in default.get("syscalls", []):
        names = [n for n in rule.get("names", []) if n not in AGENT_SYSCALLS]
        if names:
            rules.append(dict(rule, names=names))
    rules.append({"names": AGENT_SYSCALLS, "action": "SCMP_ACT_ALLOW",
                  "comment": "dlprof-bpf agent: BPF programs and uprobe/software perf events, without CAP_SYS_ADMIN"})
    profile["syscalls"] = rules
    return profile


def main(argv):
    if len(argv) != 2:
        print("usage: seccomp-profile.py DEFAULT.json > dlprof-bpf-agent.json", file=sys.stderr)
        return 2
    try:
        with open(argv[1]) as f:
            default = json.load(f)
    except (OSError, ValueError) as e:
        print(f"seccomp-profile.py: cannot read the default profile {argv[1]}: {e}", file=sys.stderr)
        return 1
    if "defaultAction" not in default or not isinstance(default.get("syscalls"), list):
        print(f"seccomp-profile.py: {argv[1]} is not a seccomp profile (no defaultAction or syscalls)", file=sys.stderr)
        return 1
    json.dump(agent_profile(default), sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
