"""Real containers and cgroups for the integration tests: podman images built
offline from host files, scratch cgroups, the cgroup2 mount."""

import contextlib
import os
import shutil
import subprocess
import tempfile

from itest import DRIVER, LIB, Skip

PODMAN_RUN = ["podman", "run", "--runtime", "runc", "--rm", "-i",
              # runc cannot raise rlimits in this sandbox; crun refuses hybrid cgroup hosts.
              "--ulimit", "nofile=20000:20000", "--ulimit", "nproc=4096:4096"]


def require_podman():
    if not (shutil.which("podman") and shutil.which("runc")):
        raise AssertionError("podman and runc are not installed (scripts/deps)")


def cgroup2_mount():
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            if right.split()[0] == "cgroup2":
                return left.split()[4]
    raise Skip("no cgroup v2 hierarchy mounted")


@contextlib.contextmanager
def scratch_cgroup(*names):
    """A fresh cgroup (nested names under one test parent); removed once its processes are gone."""
    parent = os.path.join(cgroup2_mount(), f"dlprof-test-{os.getpid()}")
    path = os.path.join(parent, *names)
    os.makedirs(path)
    try:
        yield path
    finally:
        for d in sorted({os.path.join(parent, *names[:i]) for i in range(len(names) + 1)}, key=len, reverse=True):
            with contextlib.suppress(OSError):
                os.rmdir(d)


def move_into(cgroup, pid):
    with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
        f.write(str(pid))


def remove_cgroup_everywhere(rel):
    """rel and what podman made below it, in every cgroup hierarchy (v1 ones too on hybrid hosts)."""
    with open("/proc/self/mountinfo") as f:
        mounts = [l.partition(" - ")[0].split()[4] for l in f if l.partition(" - ")[2].split()[0] in ("cgroup", "cgroup2")]
    for mnt in mounts:
        top = mnt + rel
        if not os.path.isdir(top):
            continue
        for d in sorted((os.path.join(r, x) for r, ds, _ in os.walk(top) for x in ds), key=len, reverse=True) + [top]:
            with contextlib.suppress(OSError):
                os.rmdir(d)


def driver_deps():
    """The loader and the libraries the driver needs besides the test library (libasan too in a sanitized build)."""
    out = subprocess.run(["ldd", DRIVER], capture_output=True, text=True, check=True).stdout
    deps = []
    for line in out.splitlines():
        path = line.split("=>")[-1].split("(")[0].strip()
        if path.startswith("/") and os.path.basename(path) != os.path.basename(LIB):
            deps.append(path)
    return deps


@contextlib.contextmanager
def image_from_files(name, files):
    """An image imported offline from a root assembled of (host file, path in the image) pairs; removed after."""
    tag = f"localhost/dlprof-{name}-{os.getpid()}:latest"
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "root")
        for src, dst in files:
            target = os.path.join(root, dst)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy(src, target)
        tar = os.path.join(tmp, "root.tar")
        subprocess.run(["tar", "-C", root, "-cf", tar, "."], check=True)
        subprocess.run(["podman", "import", "-q", tar, tag], check=True, capture_output=True)
    try:
        yield tag
    finally:
        subprocess.run(["podman", "rmi", "-f", tag], capture_output=True)


def driver_files():
    """What the test driver needs in an image: its loader and libraries, and itself at /app/dltest_driver."""
    return [(dep, dep.lstrip("/")) for dep in driver_deps()] + [(DRIVER, "app/dltest_driver")]


@contextlib.contextmanager
def driver_image():
    """The driver without the test library: a container gets it by bind mount (the host's file)."""
    with image_from_files("itest", driver_files()) as tag:
        yield tag
