#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Integration tests of a shared host's hazards: outputs that must not replace
what is not theirs, and every gap of a trace reported (runner and helpers:
itest.py)."""
import itest
from itest import *  # noqa: F401,F403 (the shared helpers and environment)

import json
import os
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
import time

SHARD_HEADER = 64
BLOCK_HEADER = 48


def live_args(extra):
    args = [DLPROF, "--lib", LIB, "--func", "dlt_*"]
    if ATTACH:
        args += ["--attach", ATTACH]
    return args + list(extra)


def one_line_refusal(args, path):
    """A refusal: non-zero, one line naming path and saying what to do."""
    p = subprocess.run(args, capture_output=True, text=True, timeout=120)
    lines = [l for l in p.stderr.splitlines() if l.strip() and "no hardware PMU" not in l]
    check(p.returncode not in (0,) and p.returncode < 128, f"{args}: rc {p.returncode}")
    check(len(lines) == 1, f"{args}: expected one line, got {p.stderr!r}")
    check(path in lines[0] and "refusing" in lines[0] and "give -o" in lines[0],
          f"{args}: not a refusal naming {path}: {lines[0]!r}")


def no_temp_files(directory):
    left = [n for n in os.listdir(directory) if ".tmp." in n]
    check(not left, f"temporary files left in {directory}: {left}")


def block_ends(shard):
    """Offsets just past each block of a shard, from the block headers."""
    data = open(shard, "rb").read()
    off, ends = SHARD_HEADER, []
    while off + BLOCK_HEADER <= len(data):
        payload_len, = struct.unpack_from("<I", data, off + 8)
        off += BLOCK_HEADER + payload_len
        ends.append(off)
    return ends


def biggest_shard(trace):
    shards = [os.path.join(trace, n) for n in os.listdir(trace) if n.endswith(".shard")]
    return max(shards, key=os.path.getsize)


def run_cmd(*args):
    return subprocess.run([DLPROF] + list(args), capture_output=True, text=True, timeout=120)


# ---- outputs -----------------------------------------------------------------

@modes("session")
def test_live_output_file():
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "profile.json")
        p = subprocess.run(live_args(["--json", "-o", out, "--", DRIVER, "count", "1000"]),
                           capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, f"rc {p.returncode}: {p.stderr}")
        check("functions" not in p.stdout, f"the document went to stdout too: {p.stdout!r}")
        doc = json.load(open(out))
        check(calls_of(doc, "dlt_add") == 1000, f"dlt_add calls in {out}: {func(doc, 'dlt_add')}")
        # The table form, over the file just written: replaced whole.
        p = subprocess.run(live_args(["-o", out, "--", DRIVER, "count", "10"]),
                           capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, f"rc {p.returncode}: {p.stderr}")
        text = open(out).read()
        check(text.startswith("FUNCTION") and "dlt_add" in text, f"table in {out}: {text!r}")
        no_temp_files(tmp)
        # A profile that cannot start leaves nothing behind.
        gone = os.path.join(tmp, "never.json")
        p = subprocess.run([DLPROF, "--lib", "libdoesnotexist.so.9", "-o", gone, "--", DRIVER, "exit", "0"],
                           capture_output=True, text=True, timeout=60)
        check(p.returncode != 0 and not os.path.exists(gone), f"rc {p.returncode}, {gone} exists")
        no_temp_files(tmp)


def special_outputs(tmp):
    """A FIFO, a symlink to a file, a directory: (path, check it is untouched)."""
    fifo = os.path.join(tmp, "fifo")
    os.mkfifo(fifo)
    target = os.path.join(tmp, "target.txt")
    open(target, "w").write("keep\n")
    link = os.path.join(tmp, "link.json")
    os.symlink(target, link)
    directory = os.path.join(tmp, "dir")
    os.mkdir(directory)
    return [
        ("/dev/full", lambda: stat.S_ISCHR(os.stat("/dev/full").st_mode)),
        (fifo, lambda: stat.S_ISFIFO(os.lstat(fifo).st_mode)),
        (link, lambda: os.path.islink(link) and open(target).read() == "keep\n"),
        (directory, lambda: os.path.isdir(directory) and not os.listdir(directory)),
    ]


@modes("session")
def test_live_output_refused():
    with tempfile.TemporaryDirectory() as tmp:
        for path, untouched in special_outputs(tmp):
            one_line_refusal(live_args(["--json", "-o", path, "--", DRIVER, "count", "10"]), path)
            check(untouched(), f"{path} was touched")
        no_temp_files(tmp)


@modes("session")
def test_merge_output_refused():
    with tempfile.TemporaryDirectory() as tmp:
        trace, _ = record(tmp, [DRIVER, "count", "2000"])
        before = {n: open(os.path.join(trace, n), "rb").read() for n in os.listdir(trace)}
        dlt = os.path.join(tmp, "trace.dlt")
        p = run_cmd("merge", trace, "-o", dlt)
        check(p.returncode == 0, f"merge: {p.stderr}")
        for path, untouched in special_outputs(tmp):
            one_line_refusal([DLPROF, "merge", trace, "-o", path], path)
            check(untouched(), f"{path} was touched")
        # Its own input: a file of the trace, a new name inside it, a hard link to it, the .dlt itself.
        shard = os.path.basename(biggest_shard(trace))
        for inside in ("meta.json", shard, "new.dlt"):
            path = os.path.join(trace, inside)
            one_line_refusal([DLPROF, "merge", trace, "-o", path], path)
        alias = os.path.join(tmp, "alias.dlt")
        os.link(dlt, alias)
        for path in (dlt, alias):
            one_line_refusal([DLPROF, "merge", dlt, "-o", path], path)
        after = {n: open(os.path.join(trace, n), "rb").read() for n in os.listdir(trace)}
        check(before == after, "the input trace changed")
        header, rows, _ = dump_csv(dlt)
        check(sum(r["func"] == "dlt_add" for r in rows) == 2000, "the .dlt input changed")
        no_temp_files(tmp)
        no_temp_files(trace)


def planted_outputs(tmp):
    """Trace directories another user could have planted: (path, the directory that must stay empty)."""
    target = os.path.join(tmp, "target")
    os.mkdir(target, 0o755)
    link = os.path.join(tmp, "x")
    os.symlink(target, link)
    os.lchown(link, 65534, 65534)	# a link planted by nobody, to a directory
    nobodys = os.path.join(tmp, "nobodys")
    os.mkdir(nobodys, 0o755)
    os.chown(nobodys, 65534, 65534)
    shared = os.path.join(tmp, "shared")
    os.mkdir(shared)
    os.chmod(shared, 0o1777)	# writable by anyone, sticky
    return [(link, target, "symbolic link"), (nobodys, nobodys, "another user"),
            (shared, shared, "others can write")]


@modes("session")
def test_record_refuses_planted_directory():
    """record -o through a link nobody planted, into nobody's directory or one anyone can write
    to: refused in one line before anything is written; a new directory works."""
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)
        for path, stays_empty, why in planted_outputs(tmp):
            args = [DLPROF, "record", "-o", path, "--lib", LIB, "--func", "dlt_*", "--", DRIVER, "count", "10"]
            p = subprocess.run(args, capture_output=True, text=True, timeout=120)
            lines = [l for l in p.stderr.splitlines() if l.strip() and "no hardware PMU" not in l]
            check(0 < p.returncode < 128, f"{path}: rc {p.returncode}: {p.stderr}")
            check(len(lines) == 1 and path in lines[0] and "refusing" in lines[0] and why in lines[0]
                  and "give a new directory" in lines[0], f"{path}: not a one-line refusal: {p.stderr!r}")
            check(not os.listdir(stays_empty), f"written into {stays_empty}: {os.listdir(stays_empty)}")
        trace, doc = record(tmp, [DRIVER, "count", "10"])
        check(calls_of(doc, "dlt_add") == 10 and os.path.exists(os.path.join(trace, "meta.json")),
              f"a new directory: {os.listdir(trace)}")


# ---- trace gaps --------------------------------------------------------------

@modes("session")
def test_trace_cut_at_block_boundary():
    with tempfile.TemporaryDirectory() as tmp:
        trace, _ = record(tmp, [DRIVER, "count", "5000"], ["--compress", "none"])
        meta = json.load(open(os.path.join(trace, "meta.json")))
        check(meta["ended_cleanly"] and meta["format_version"] == 3, f"meta: {meta}")
        shard = biggest_shard(trace)
        ends = block_ends(shard)
        check(len(ends) >= 3, f"{shard}: {len(ends)} blocks")
        cpu = int(os.path.basename(shard)[3:-6])
        check(meta["cpus"][cpu]["blocks"] == len(ends), f"meta counts {meta['cpus'][cpu]} != {len(ends)} blocks")
        for cut, what in ((ends[0], "cut at a block boundary"), (0, "emptied")):
            with open(shard, "r+b") as f:
                f.truncate(cut)
            for cmd in (["report", trace], ["dump", trace, "--csv"]):
                p = run_cmd(*cmd)
                check(p.returncode == 0, f"{cmd} ({what}): rc {p.returncode}: {p.stderr}")
                check("incomplete trace" in p.stderr and "damaged part" in p.stderr,
                      f"{cmd} ({what}): the gap is not reported: {p.stderr!r}")
            p = run_cmd("merge", trace, "-o", os.path.join(tmp, "cut.dlt"))
            check(p.returncode == 0 and os.path.basename(shard) in p.stderr
                  and "cut at a block boundary or emptied" in p.stderr,
                  f"merge ({what}) must name the shard: {p.stderr!r}")
            p = run_cmd("report", os.path.join(tmp, "cut.dlt"))
            check("incomplete trace" in p.stderr, f"the .dlt forgot the gap: {p.stderr!r}")


@modes("session")
def test_trace_foreign_shard_refused():
    with tempfile.TemporaryDirectory() as tmp:
        a = os.path.join(tmp, "a")
        b = os.path.join(tmp, "b")
        os.mkdir(a)
        os.mkdir(b)
        trace_a, _ = record(a, [DRIVER, "count", "3000"])
        trace_b, _ = record(b, [DRIVER, "count", "4000"])
        ida = json.load(open(os.path.join(trace_a, "meta.json")))["recording_id"]
        idb = json.load(open(os.path.join(trace_b, "meta.json")))["recording_id"]
        check(ida != idb, f"two recordings share the id {ida}")
        name = os.path.basename(biggest_shard(trace_b))
        shutil.copy(os.path.join(trace_b, name), os.path.join(trace_a, name))
        for cmd in (["report", trace_a], ["dump", trace_a, "--csv"], ["merge", trace_a, "-o", os.path.join(tmp, "m.dlt")]):
            p = run_cmd(*cmd)
            check(p.returncode == 0, f"{cmd}: rc {p.returncode}: {p.stderr}")
            refused = [l for l in p.stderr.splitlines() if name in l and "another recording" in l]
            check(len(refused) == 1, f"{cmd}: {name} not refused by name in one line: {p.stderr!r}")
        # a's other shards are read whole, and none of b's records is among them.
        meta = json.load(open(os.path.join(trace_a, "meta.json")))
        cpu = int(name[3:-6])
        _, rows, _ = dump_csv(trace_a)
        want = sum(c["records"] for c in meta["cpus"]) - meta["cpus"][cpu]["records"]
        check(len(rows) == want, f"{len(rows)} records read, {want} expected from a's other shards")
        check(all(int(r["cpu"]) != cpu for r in rows), "records of the refused shard were read")


@modes("session")
def test_record_full_disk_meta():
    calls = 100000
    with tempfile.TemporaryDirectory() as tmp:
        mnt = os.path.join(tmp, "small")
        os.mkdir(mnt)
        m = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt],
                           capture_output=True, text=True)
        if m.returncode != 0:
            raise Skip(f"cannot mount a small tmpfs: {m.stderr.strip()}")
        try:
            trace = os.path.join(mnt, "trace.d")
            args = [DLPROF, "record", "-o", trace, "--json", "--compress", "none",
                    "--lib", LIB, "--func", "dlt_*"] + (["--attach", ATTACH] if ATTACH else [])
            p = subprocess.run(args + ["--", DRIVER, "count", str(calls)],
                               capture_output=True, text=True, timeout=120)
            check(p.returncode == 1 and "No space left on device" in p.stderr, f"record rc {p.returncode}: {p.stderr}")
            doc = json.loads(p.stdout)
            check(func(doc, "dlt_add")["calls"] == calls, "the summary must stay exact")
            meta = json.load(open(os.path.join(trace, "meta.json")))
            lost = sum(c["write_lost"] for c in meta["cpus"])
            check(lost > calls // 2, f"meta.json says {lost} records lost to write errors of {calls}")
            check(not meta["ended_cleanly"], "a trace with write errors did not end cleanly")
            check(meta["closed"], "a trace closed with its write errors counted is not cut off")
            rep = run_cmd("report", trace, "--json")
            check(rep.returncode == 0 and "lost to write errors" in rep.stderr,
                  f"report must show the loss: {rep.stderr!r}")
            # Every loss is counted: nothing is said to be missing beyond them.
            check("cut off" not in rep.stderr and "last second" not in rep.stderr,
                  f"report doubts a trace whose losses are all counted: {rep.stderr!r}")
            _, rows, _ = dump_csv(trace)
            written = sum(r["func"] == "dlt_add" for r in rows)
            drops = json.loads(rep.stdout)["drops"]
            check(drops == doc["drops"], f"report drops {drops} != record's {doc['drops']}")
            check(written + drops == calls, f"written {written} + lost {drops} != {calls}")
        finally:
            subprocess.run(["umount", mnt])


@modes("session")
def test_record_killed_says_the_gap():
    """record killed with SIGKILL: the trace is cut off at its last flush, and report says how much of
    the recording it holds and how long after that can be missing."""
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace.d")
        args = [DLPROF, "record", "-o", trace, "--lib", LIB, "--func", "dlt_*"] + (["--attach", ATTACH] if ATTACH else [])
        d = itest.start_waiting_driver(["count", "5000"])
        try:
            p = subprocess.Popen(args + ["-p", str(d.pid)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                 text=True)
            while "profiling" not in p.stderr.readline():
                check(p.poll() is None, "record did not start")
            itest.drive(d)
            time.sleep(2.5)     # past a flush or two
            p.kill()
            p.wait()
        finally:
            itest.finish(d)
        meta = json.load(open(os.path.join(trace, "meta.json")))
        check(not meta["ended_cleanly"] and not meta["closed"], f"a killed recording: {meta['ended_cleanly']}")
        window = meta["writer"]["reorder_window_ns"]
        written = (meta["clock"]["last_flush_ns"] - window - meta["clock"]["monotonic_start_ns"]) / 1e9
        rep = run_cmd("report", trace, "--json")
        check(rep.returncode == 0, f"report rc {rep.returncode}: {rep.stderr}")
        said = f"the recording was cut off (never closed): it holds the calls of its first {written:.1f} s, " \
               f"and those of at most {1 + window / 1e9:.1f} s after that were never written"
        check(said in rep.stderr, f"report does not give the gap ({said!r}): {rep.stderr!r}")


@modes("session")
def test_record_refused_for_full_disk_leaves_nothing():
    """A disk too full to start a trace: record fails in one line, leaves no files a reader
    could take for a trace (report then says there is none); a trace that ends cleanly
    keeps no spare metadata file."""
    with tempfile.TemporaryDirectory() as tmp:
        mnt = os.path.join(tmp, "tiny")
        os.mkdir(mnt)
        m = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=80k", "tmpfs", mnt], capture_output=True, text=True)
        if m.returncode != 0:
            raise Skip(f"cannot mount a small tmpfs: {m.stderr.strip()}")
        try:
            trace = os.path.join(mnt, "trace.d")
            p = subprocess.run([DLPROF, "record", "-o", trace, "--lib", LIB, "--func", "dlt_*"] +
                               (["--attach", ATTACH] if ATTACH else []) + ["--", DRIVER, "count", "10"],
                               capture_output=True, text=True, timeout=120)
            check(p.returncode == 1 and "No space left on device" in p.stderr, f"record rc {p.returncode}: {p.stderr}")
            left = os.listdir(trace) if os.path.exists(trace) else None
            check(left is None, f"a refused trace left {left}")
            rep = run_cmd("report", trace)
            check(rep.returncode != 0 and "No such file" in rep.stderr, f"report of nothing: {rep.returncode} {rep.stderr!r}")
        finally:
            subprocess.run(["umount", mnt])
        trace = os.path.join(tmp, "ok.d")
        p = subprocess.run([DLPROF, "record", "-o", trace, "--lib", LIB, "--func", "dlt_*"] +
                           (["--attach", ATTACH] if ATTACH else []) + ["--", DRIVER, "count", "10"],
                           capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, f"record rc {p.returncode}: {p.stderr}")
        check(sorted(os.listdir(trace)) == sorted(["meta.json"] + [f for f in os.listdir(trace) if f.endswith(".shard")]),
              f"a clean trace holds {os.listdir(trace)}")


def test_record_end_loses_nothing():
    """A profile that ends while the command still calls: every counted call is a
    record, a drop, or said to have been in flight when the probes went."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "trace.d")
        args = [DLPROF, "record", "-o", out, "--json", "--lib", LIB, "--func", "dlt_add", "-d", "1"]
        if ATTACH:
            args += ["--attach", ATTACH]
        p = subprocess.run(args + ["--", DRIVER, "threads", "2", "20000000"], capture_output=True,
                           text=True, timeout=240)
        check(p.stdout.strip(), f"no summary: rc {p.returncode} {p.stderr}")
        doc = json.loads(p.stdout)
        calls = calls_of(doc, "dlt_add")
        check(0 < calls < 40000000, f"the command must still be calling when the profile ends: {calls}")
        _, rows, _ = dump_csv(out)
        records = sum(1 for r in rows if r["func"] == "dlt_add")
        check(calls == records + doc["drops"] + doc["in_flight_calls"],
              f"calls {calls} != records {records} + drops {doc['drops']} + in flight {doc['in_flight_calls']}")


if __name__ == "__main__":
    sys.exit(itest.run(globals()))
