# SPDX-License-Identifier: GPL-2.0-only
"""What the packaging tests share: the package and the offline image (built
once per build directory and rebuilt when a source file changed), the
DaemonSet's settings as podman arguments, and the runner.

A script defines test_* functions and ends with `sys.exit(pkgtest.run(globals()))`:

    SCRIPT --list        the tests to register
    SCRIPT TEST_NAME     run one test (exit 0 pass, 1 fail, 77 skip)

Environment: DLPROF (the tree's binary; its build directory holds the cache),
DLTEST_DRIVER, DLTEST_LIB.
"""
import contextlib
import fcntl
import glob
import hashlib
import os
import re
import subprocess
import sys

# One runner, one Skip and one check for every test script (tests/integration/itest.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import itest  # noqa: E402
from itest import SKIP, Skip, check, free_port, http_get, require_bpf  # noqa: E402,F401

TOP = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", ".."))
DLPROF = os.environ.get("DLPROF", "")
DRIVER = os.environ.get("DLTEST_DRIVER", "")
LIB = os.environ.get("DLTEST_LIB", "")
# <build>/user/dlprof-bpf → <build>/packaging-cache: what the tests build, per build directory.
CACHE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(DLPROF or "build/user/x"))),
                     "packaging-cache")
K8S = os.path.join(TOP, "packaging", "k8s")
# The capabilities that packaging/deb's unit and packaging/k8s' DaemonSet grant.
AGENT_CAPS = ("CAP_BPF", "CAP_PERFMON", "CAP_SYS_PTRACE", "CAP_DAC_READ_SEARCH")
PODMAN_RUN = ["podman", "run", "--runtime", "runc",
              # runc cannot raise rlimits in this sandbox; crun refuses hybrid cgroup hosts.
              "--ulimit", "nofile=20000:20000", "--ulimit", "nproc=4096:4096"]

def require_tools(*tools):
    """The tools scripts/deps installs; missing means the machine is not set up: a failure."""
    import shutil
    missing = [t for t in tools if not shutil.which(t)]
    check(not missing, f"{', '.join(missing)} not installed: run scripts/deps")


def version():
    return subprocess.run(["dpkg-parsechangelog", "-l", os.path.join(TOP, "packaging/deb/debian/changelog"),
                           "-S", "Version"], capture_output=True, text=True, check=True).stdout.strip()


def source_files():
    out = subprocess.run(["git", "-C", TOP, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         capture_output=True, check=True).stdout
    return [os.path.join(TOP, p) for p in out.decode().split("\0") if p]


def newest_source_mtime():
    return max((os.stat(p).st_mtime for p in source_files() if os.path.exists(p)), default=0)


@contextlib.contextmanager
def cache_lock():
    os.makedirs(CACHE, exist_ok=True)
    with open(os.path.join(CACHE, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def deb():
    """The package of this tree, built by packaging/deb/build unless it is newer than every source file."""
    require_tools("dpkg-buildpackage", "dh")
    with cache_lock():
        outdir = os.path.join(CACHE, "deb")
        found = glob.glob(os.path.join(outdir, f"dlprof-bpf_{version()}_*.deb"))
        if found and os.stat(found[0]).st_mtime >= newest_source_mtime():
            return found[0]
        for old in glob.glob(os.path.join(outdir, "*")):
            os.unlink(old)
        p = subprocess.run([os.path.join(TOP, "packaging/deb/build"), outdir], capture_output=True, text=True)
        check(p.returncode == 0, f"packaging/deb/build failed ({p.returncode}): {p.stdout[-3000:]}{p.stderr[-3000:]}")
        found = glob.glob(os.path.join(outdir, f"dlprof-bpf_{version()}_*.deb"))
        check(len(found) == 1, f"packaging/deb/build made {found}")
        return found[0]


def image():
    """The image packaging/container/build-offline.sh makes from deb(); rebuilt when the package changed."""
    require_tools("podman", "runc")
    package = deb()
    tag = f"localhost/dlprof-bpf-test-{hashlib.sha1(TOP.encode()).hexdigest()[:8]}:{version()}"
    with cache_lock():
        stamp = os.path.join(CACHE, "image.stamp")
        want = f"{tag} {os.stat(package).st_mtime_ns}"
        have = open(stamp).read() if os.path.exists(stamp) else ""
        exists = subprocess.run(["podman", "image", "exists", tag]).returncode == 0
        if have != want or not exists:
            p = subprocess.run([os.path.join(TOP, "packaging/container/build-offline.sh"), package, tag],
                               capture_output=True, text=True)
            check(p.returncode == 0, f"build-offline.sh failed ({p.returncode}): {p.stderr[-3000:]}")
            with open(stamp, "w") as f:
                f.write(want)
        return tag


def k8s_docs(name):
    """The YAML documents of packaging/k8s/NAME (an absolute path: that file)."""
    import yaml  # Debian: python3-yaml; imported here so that --list needs nothing
    with open(os.path.join(K8S, name)) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def agent_container():
    ds = k8s_docs("daemonset.yaml")[0]
    return ds["spec"]["template"]["spec"], ds["spec"]["template"]["spec"]["containers"][0]


def podman_memory(quantity):
    """A Kubernetes memory quantity (binary suffixes) as podman's --memory (k, m, g are binary there)."""
    for suffix, unit in (("Ki", "k"), ("Mi", "m"), ("Gi", "g")):
        if quantity.endswith(suffix):
            return quantity[:-2] + unit
    check(quantity.isdigit(), f"memory limit {quantity}: only Ki, Mi, Gi or bytes are understood here")
    return quantity


def podman_args_like_daemonset(env_override=None):
    """podman run arguments that give a container what the DaemonSet gives the agent:
    the host's PIDs, the same capabilities, seccomp, read-only root, mounts, resource limits
    and environment."""
    pod, c = agent_container()
    sc = c["securityContext"]
    args = []
    if pod.get("hostPID"):
        args += ["--pid", "host"]
    caps = sc.get("capabilities", {})
    for cap in caps.get("drop", []):
        args += ["--cap-drop", cap.lower()]
    for cap in caps.get("add", []):
        args += ["--cap-add", cap.lower()]
    check(not sc.get("privileged"), "the DaemonSet runs privileged")
    if sc.get("readOnlyRootFilesystem"):
        args.append("--read-only")
    if sc.get("allowPrivilegeEscalation") is False:
        args += ["--security-opt", "no-new-privileges"]
    if sc.get("seccompProfile", {}).get("type") == "Unconfined":
        args += ["--security-opt", "seccomp=unconfined"]
    if "runAsUser" in sc:
        args += ["--user", f"{sc['runAsUser']}:{sc.get('runAsGroup', sc['runAsUser'])}"]
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    for m in c.get("volumeMounts", []):
        v = volumes[m["name"]]
        if "hostPath" in v:
            args += ["-v", f"{v['hostPath']['path']}:{m['mountPath']}" + (":ro" if m.get("readOnly") else "")]
        elif "emptyDir" in v:
            args += ["--tmpfs", m["mountPath"]]
    limits = c.get("resources", {}).get("limits", {})
    if "memory" in limits:
        args += ["--memory", podman_memory(limits["memory"])]
    if "cpu" in limits:
        cpu = str(limits["cpu"])
        args += ["--cpus", str(int(cpu[:-1]) / 1000 if cpu.endswith("m") else float(cpu))]
    env = {e["name"]: e["value"] for e in c.get("env", []) if "value" in e}
    env.update(env_override or {})
    for k, v in env.items():
        args += ["-e", f"{k}={v}"]
    return args


def unit_caps(unit_text):
    """The unit's AmbientCapabilities= and CapabilityBoundingSet=, as sets."""
    def caps(key):
        m = re.search(rf"^{key}=(.*)$", unit_text, re.M)
        return set(m.group(1).split()) if m else set()
    return caps("AmbientCapabilities"), caps("CapabilityBoundingSet")


@contextlib.contextmanager
def driver_copy():
    """The test driver and library copied where any user can read them (a build tree may not be)."""
    import shutil
    import tempfile
    with tempfile.TemporaryDirectory(prefix="dlprof-pkgtest.") as tmp:
        os.chmod(tmp, 0o755)
        for src in (DRIVER, LIB):
            shutil.copy(src, tmp)
        yield os.path.join(tmp, os.path.basename(DRIVER)), tmp


def profile_driver_by_name(profiler_cmd, calls=5000, driver_user=None):
    """A waiting driver (as driver_user, else root) making `calls` calls of dlt_add;
    profiler_cmd + [-p PID] profiles it, naming the library by its soname only, so that
    the profiler must read the target's /proc files. Returns (rc, json doc or None, stderr)."""
    import json
    with driver_copy() as (driver, libdir):
        pre = ["setpriv", f"--reuid={driver_user}", f"--regid={driver_user}", "--clear-groups"] if driver_user else []
        d = subprocess.Popen(pre + [driver, "--wait", "count", str(calls)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, env=dict(os.environ, LD_LIBRARY_PATH=libdir))
        prof = None
        try:
            line = d.stdout.readline()
            check(line.startswith("ready "), f"driver did not start: {line!r}")
            prof = subprocess.Popen(profiler_cmd + ["--json", "--lib", os.path.basename(LIB), "--func", "dlt_add",
                                                    "-p", str(d.pid)],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            seen = []
            while True:
                line = prof.stderr.readline()
                seen.append(line)
                if not line or "profiling" in line:
                    break
            # The driver makes its calls whether the profiler attached or not.
            d.stdin.write("go\n")
            d.stdin.flush()
            check(d.stdout.readline().strip() == "done", "driver did not finish")
            d.stdin.write("bye\n")
            d.stdin.flush()
            d.wait(timeout=30)
            # -p ends the profile when its last target exits.
            out, err = prof.communicate(timeout=60)
            doc = json.loads(out) if out.strip() else None
            return prof.returncode, doc, "".join(seen) + err
        finally:
            for p in (d, prof):
                if p and p.poll() is None:
                    p.kill()
                    p.wait()


def calls_of(doc, name):
    return sum(f["calls"] for f in (doc or {}).get("functions", []) if f["name"] == name)


def require_agent(binary):
    """Skip while the binary's command table has no agent."""
    p = subprocess.run([binary, "--help"], capture_output=True, text=True)
    commands = p.stdout.split("Commands:")[1].split("\n\n")[0] if "Commands:" in p.stdout else ""
    if not any(line.split()[:1] == ["agent"] for line in commands.splitlines()):
        raise Skip("dlprof-bpf has no agent command yet")


def needs_bpf(fn):
    fn.needs_bpf = True
    return fn


def run(scope):
    """itest's runner; BPF is required only of the tests marked @needs_bpf."""
    return itest.run(scope, prepare=lambda fn: getattr(fn, "needs_bpf", False) and require_bpf())
