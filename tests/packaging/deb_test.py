#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The Debian package (packaging/deb): what it holds, lintian, the agent's
systemd unit (verified, its exposure scored, its capabilities measured by
running the packaged binary as a non-root user with exactly those), and a man
page that documents every command and option the binary has.
Runner and helpers: pkgtest.py."""
import contextlib
import os
import re
import subprocess
import sys
import tempfile
import time

import pkgtest
from pkgtest import check, needs_bpf

UNIT = "lib/systemd/system/dlprof-bpf-agent.service"
MAN = "usr/share/man/man8/dlprof-bpf.8.gz"
# systemd-analyze security's 0-10 exposure score; "OK" ends at 3.9 in systemd 252's scale.
MAX_EXPOSURE = 3.0


@contextlib.contextmanager
def unpacked():
    deb = pkgtest.deb()
    with tempfile.TemporaryDirectory(prefix="dlprof-deb.") as root:
        os.chmod(root, 0o755)
        subprocess.run(["dpkg-deb", "-x", deb, root], check=True)
        yield root


def test_deb_contents():
    deb = pkgtest.deb()
    listing = subprocess.run(["dpkg-deb", "-c", deb], capture_output=True, text=True, check=True).stdout
    paths = {line.split()[-1].lstrip(".") for line in listing.splitlines()}
    for want in ("/usr/sbin/dlprof-bpf", "/" + MAN, "/" + UNIT, "/etc/default/dlprof-bpf",
                 "/usr/share/doc/dlprof-bpf/copyright", "/usr/share/doc/dlprof-bpf/README.md.gz",
                 "/usr/share/doc/dlprof-bpf/packaging.md.gz"):
        check(want in paths, f"{want} is not in the package: {sorted(paths)}")
    mode = next(line.split()[0] for line in listing.splitlines() if line.endswith("/usr/sbin/dlprof-bpf"))
    check(mode == "-rwxr-xr-x", f"/usr/sbin/dlprof-bpf has mode {mode}")
    info = subprocess.run(["dpkg-deb", "-f", deb], capture_output=True, text=True, check=True).stdout
    fields = dict(re.findall(r"^(\S+): (.*)$", info, re.M))
    check(fields.get("Package") == "dlprof-bpf", f"Package: {fields.get('Package')}")
    check(fields.get("Version") == pkgtest.version(), f"Version: {fields.get('Version')}")
    for lib in ("libbpf1", "libelf1", "libjson-c5", "libcapstone4", "zlib1g", "libc6"):
        check(lib in fields.get("Depends", ""), f"Depends lacks {lib}: {fields.get('Depends')}")
    conffiles = subprocess.run(["dpkg-deb", "-I", deb, "conffiles"], capture_output=True, text=True).stdout
    check("/etc/default/dlprof-bpf" in conffiles, f"/etc/default/dlprof-bpf is not a conffile: {conffiles!r}")
    with unpacked() as root:
        p = subprocess.run([os.path.join(root, "usr/sbin/dlprof-bpf"), "--version"], capture_output=True, text=True)
        check(p.returncode == 0 and pkgtest.version() in p.stdout, f"packaged binary --version: {p.stdout}{p.stderr}")


def test_deb_lintian():
    """No error and no warning from lintian (pedantic and informational tags are printed)."""
    pkgtest.require_tools("lintian")
    deb = pkgtest.deb()
    changes = deb.rsplit("_", 1)[0] + f"_{subprocess.check_output(['dpkg', '--print-architecture'], text=True).strip()}.changes"
    p = subprocess.run(["lintian", "--pedantic", "-I", changes], capture_output=True, text=True)
    print(p.stdout, end="")
    bad = [line for line in p.stdout.splitlines() if line[:2] in ("E:", "W:")]
    check(not bad, f"lintian: {bad}")


def test_unit_verifies():
    """systemd-analyze verify passes (binary and man page resolved in the unpacked package)
    and the unit's exposure score stays low."""
    pkgtest.require_tools("systemd-analyze")
    with unpacked() as root:
        unit = open(os.path.join(root, UNIT)).read()
        local = os.path.join(root, "dlprof-bpf-agent.service")
        with open(local, "w") as f:
            f.write(unit.replace("/usr/sbin/dlprof-bpf", os.path.join(root, "usr/sbin/dlprof-bpf")))
        p = subprocess.run(["systemd-analyze", "verify", local], capture_output=True, text=True,
                           env=dict(os.environ, MANPATH=os.path.join(root, "usr/share/man")))
        check(p.returncode == 0 and not p.stderr.strip(), f"systemd-analyze verify: {p.stderr}")
        p = subprocess.run(["systemd-analyze", "security", "--offline=yes", local], capture_output=True, text=True)
        m = re.search(r"Overall exposure level for \S+: ([0-9.]+)", p.stdout)
        check(m, f"systemd-analyze security: {p.stdout[-500:]}{p.stderr}")
        print(f"exposure {m.group(1)}")
        check(float(m.group(1)) <= MAX_EXPOSURE, f"exposure {m.group(1)} > {MAX_EXPOSURE}")
    for want in ("ProtectSystem=strict", "ProtectHome=", "NoNewPrivileges=yes", "EnvironmentFile=-/etc/default/dlprof-bpf",
                 "ExecStart=/usr/sbin/dlprof-bpf agent"):
        check(want in unit, f"the unit lacks {want}")


def help_text(binary, *args):
    p = subprocess.run([binary, *args, "--help"], capture_output=True, text=True)
    return p.stdout + p.stderr


def test_man_page_covers_the_cli():
    """Every command the binary lists and every long option of every command's --help is
    in the man page; groff renders it without a warning."""
    with unpacked() as root:
        man = os.path.join(root, MAN)
        p = subprocess.run(f"zcat {man} | groff -man -ww -z", shell=True, capture_output=True, text=True)
        check(p.returncode == 0 and not p.stderr.strip(), f"groff warnings: {p.stderr}")
        text = subprocess.run(["man", "-l", man], capture_output=True, text=True,
                              env=dict(os.environ, MANWIDTH="200")).stdout
        binary = os.path.join(root, "usr/sbin/dlprof-bpf")
        top = help_text(binary)
        commands = re.findall(r"^  (\w+)  ", top.split("Commands:")[1].split("\n\n")[0], re.M)
        check(len(commands) >= 6, f"no commands found in --help: {top}")
        missing = []
        for cmd in set(commands) | {"agent"}:
            if not re.search(rf"^\s+(dlprof-bpf )?{cmd}\b", text, re.M):
                missing.append(cmd)
        for cmd in [None] + commands:
            h = help_text(binary, *([cmd] if cmd else []))
            for opt in re.findall(r"^\s+(?:-\w, )?(--[a-z][a-z-]*)", h, re.M):
                if opt not in text:
                    missing.append(f"{cmd or 'live'} {opt}")
        check(not missing, f"the man page lacks: {sorted(set(missing))}")


def setpriv_caps(caps, uid=65534):
    """setpriv arguments: run as uid with exactly caps (names like CAP_BPF) in every set that matters."""
    spec = ",".join(["-all"] + ["+" + c.lower().removeprefix("cap_") for c in sorted(caps)])
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
            f"--inh-caps={spec}", f"--ambient-caps={spec}", f"--bounding-set={spec}"]


def unit_caps():
    with unpacked() as root:
        ambient, bounding = pkgtest.unit_caps(open(os.path.join(root, UNIT)).read())
    check(ambient == bounding == set(pkgtest.AGENT_CAPS),
          f"unit: ambient {sorted(ambient)}, bounding {sorted(bounding)}, want {pkgtest.AGENT_CAPS}")
    return ambient


@needs_bpf
def test_unit_caps_suffice_as_non_root():
    """The packaged binary as user nobody with only the unit's capabilities profiles a process of
    another user (root), found by the library's soname alone: exact count."""
    caps = unit_caps()
    with unpacked() as root:
        binary = os.path.join(root, "usr/sbin/dlprof-bpf")
        rc, doc, err = pkgtest.profile_driver_by_name(setpriv_caps(caps) + [binary], calls=5000)
    check(rc == 0, f"as nobody with {sorted(caps)}: exit {rc}: {err}")
    check(pkgtest.calls_of(doc, "dlt_add") == 5000, f"as nobody with {sorted(caps)}: {pkgtest.calls_of(doc, 'dlt_add')} calls, want 5000")


@needs_bpf
def test_unit_caps_each_needed():
    """Without any one of the unit's capabilities the same profile fails, with a message."""
    caps = unit_caps()
    with unpacked() as root:
        binary = os.path.join(root, "usr/sbin/dlprof-bpf")
        for cap in sorted(caps):
            rc, doc, err = pkgtest.profile_driver_by_name(setpriv_caps(caps - {cap}) + [binary], calls=1000)
            lines = [line for line in err.splitlines() if line.startswith("dlprof-bpf:")]
            print(f"without {cap}: exit {rc}: {lines[-1] if lines else err.strip()}")
            check(rc != 0 and pkgtest.calls_of(doc, "dlt_add") == 0, f"without {cap} the profile still worked")
            check(lines, f"without {cap}: exit {rc} with no message: {err!r}")


def unit_exec_start(unit_text, root, args):
    """The unit's ExecStart as argv: the unpacked binary, $DLPROF_AGENT_ARGS expanded to args."""
    line = re.search(r"^ExecStart=(.*)$", unit_text, re.M).group(1).split()
    out = []
    for word in line:
        if word == "$DLPROF_AGENT_ARGS":
            out += args
        else:
            out.append(os.path.join(root, word.lstrip("/")) if word == "/usr/sbin/dlprof-bpf" else word)
    return out


@needs_bpf
def test_unit_runs_the_agent():
    """The unit's command, environment variables and capabilities, as user nobody: /readyz
    answers 200, /metrics counts a workload's calls exactly, SIGTERM exits 0."""
    caps = unit_caps()
    with unpacked() as root, pkgtest.driver_copy() as (driver, libdir):
        binary = os.path.join(root, "usr/sbin/dlprof-bpf")
        pkgtest.require_agent(binary)
        unit = open(os.path.join(root, UNIT)).read()
        port = pkgtest.free_port()
        env = dict(os.environ, DLPROF_AGENT_LIBS=os.path.join(libdir, os.path.basename(pkgtest.LIB)),
                   DLPROF_AGENT_LISTEN=f"127.0.0.1:{port}")
        log = tempfile.TemporaryFile("a+")
        agent = subprocess.Popen(setpriv_caps(caps) + unit_exec_start(unit, root, ["--func", "dlt_sleep_ms"]),
                                 stderr=log, text=True, env=env)

        def agent_log():
            # A description of its own: seeking the agent's would move where it writes.
            with open(f"/proc/self/fd/{log.fileno()}") as f:
                return f.read()[-3000:]
        try:
            deadline = time.monotonic() + 60
            while pkgtest.http_get(f"http://127.0.0.1:{port}/readyz")[0] != 200:
                if agent.poll() is not None:
                    raise AssertionError(f"the agent exited {agent.returncode}: {agent_log()}")
                check(time.monotonic() < deadline, "/readyz never answered 200 in 60 s")
                time.sleep(0.2)
            # 1 ms per call keeps the function inside the default budget: probed, exact.
            p = subprocess.run([driver, "sleep", "1", "500"], capture_output=True, text=True,
                               env=dict(os.environ, LD_LIBRARY_PATH=libdir), timeout=60)
            want = int(re.search(r"^dltest: calls (\d+)$", p.stderr, re.M).group(1))
            got = None
            while time.monotonic() < deadline + 30:
                text = pkgtest.http_get(f"http://127.0.0.1:{port}/metrics")[1]
                got = sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                          if line.startswith("dlprof_calls_total{") and 'function="dlt_sleep_ms"' in line)
                if got == want:
                    break
                time.sleep(0.5)
            check(got == want, f"dlprof_calls_total: {got}, the workload made {want} calls")
            agent.terminate()
            agent.wait(timeout=60)
            if agent.returncode != 0:
                raise AssertionError(f"the agent exited {agent.returncode} on SIGTERM: {agent_log()}")
        finally:
            if agent.poll() is None:
                agent.kill()
                agent.wait()
            log.close()


if __name__ == "__main__":
    sys.exit(pkgtest.run(globals()))
