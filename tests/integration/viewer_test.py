#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Our exports loaded in real viewers: speedscope's own web app (the pinned
npm package, tests/viewers) in Debian's chromium reads the Chrome Trace Event
JSON of `export --format perfetto` and the folded stacks of `--format folded`
through its own importers; what speedscope then holds comes back through its
own Export (speedscope JSON). Chromium's DevTools trace engine (the
Performance panel's) parses the Chrome trace too, and Brendan Gregg's
flamegraph.pl (the copy Debian ships in libdevel-nytprof-perl) draws the folded
stacks. All are checked against the recording: slices per thread, nesting,
thread and process names, durations, folded weights. Screenshots of the
speedscope loads and the flame graphs are kept in the build directory."""
import collections
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import itest
from itest import *  # noqa: F401,F403 (the shared helpers and environment)

VIEWERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "viewers")
# meson runs the tests from the build directory: artifacts stay there.
ARTIFACTS = os.path.join(os.getcwd(), "viewer-artifacts")
FLAMEGRAPH = "/usr/share/perl5/Devel/NYTProf/flamegraph.pl"
CALLS = 200
THREADS, THREAD_CALLS = 3, 150


def require_viewer():
    check(os.path.isdir(os.path.join(VIEWERS, "node_modules", "speedscope")),
          "speedscope is not installed: run scripts/deps (npm ci in tests/viewers)")
    check(shutil.which("node") and os.path.exists(os.environ.get("CHROMIUM", "/usr/bin/chromium")),
          "node or chromium is missing: run scripts/deps")


def export(trace, fmt, out, extra=()):
    p = subprocess.run([DLPROF, "export", trace, "--format", fmt, "-o", out] + list(extra),
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"export --format {fmt} rc {p.returncode}: {p.stderr}")
    return out


def speedscope(path, label):
    """Loads path in speedscope; returns its own export of what it imported."""
    os.makedirs(ARTIFACTS, exist_ok=True)
    shot = os.path.join(ARTIFACTS, f"speedscope-{label}-{ATTACH or 'default'}.png")
    loaded = path + ".speedscope.json"
    p = subprocess.run(["node", os.path.join(VIEWERS, "speedscope.mjs"), path, loaded, shot],
                       capture_output=True, text=True, timeout=180)
    check(p.returncode == 0 and p.stdout.strip() == "ok", f"speedscope on {label}: {p.stdout}{p.stderr}")
    print(f"screenshot: {shot}")
    with open(loaded) as f:
        return json.load(f)


def replay(profile, frames):
    """The calls of an evented speedscope profile: (frame name, open, close, depth, parent name)."""
    calls, stack = [], []
    for e in profile["events"]:
        if e["type"] == "O":
            stack.append((e["frame"], e["at"]))
            continue
        check(stack and stack[-1][0] == e["frame"], f"speedscope closed {e} out of order")
        frame, at = stack.pop()
        parent = frames[stack[-1][0]]["name"] if stack else None
        calls.append((frames[frame]["name"], at, e["at"], len(stack), parent))
    check(not stack, f"{len(stack)} frames left open in {profile['name']}")
    return calls


def call_name(frame_name):
    """speedscope names a Chrome slice 'NAME {args as JSON}'."""
    name, _, args = frame_name.partition(" ")
    return name, json.loads(args)


def rows_by_tid(rows):
    by = collections.defaultdict(list)
    for r in rows:
        by[int(r["tid"])].append(r)
    return by


def check_chrome_trace(trace, rows, label, names=None):
    """speedscope shows the timed calls as slices (it reads only B, E and X
    events: the instants of untimed calls and losses are not drawn). names:
    {tid: the thread's own name} where the trace has one, else the process's."""
    doc = speedscope(export(trace, "perfetto", os.path.join(os.path.dirname(trace), "t.json")), label)
    frames = doc["shared"]["frames"]
    by_tid = rows_by_tid(r for r in rows if int(r["dur_ns"]) > 0)
    profiles = doc["profiles"]
    check(len(profiles) == len(by_tid), f"speedscope shows {len(profiles)} threads, the trace has {len(by_tid)}")
    comm = os.path.basename(DRIVER)[:15]
    for prof in profiles:
        # lf(): "PROCESS (pid P), THREAD (tid T)" when both are named.
        check(prof["type"] == "evented" and prof["unit"] == "microseconds", f"profile {prof['name']}")
        tid = int(prof["name"].rsplit("(tid ", 1)[1].rstrip(")"))
        pid = int(rows[0]["pid"])
        own = (names or {}).get(tid, comm)
        check(prof["name"].startswith(f"{comm} (pid {pid}), {own} {tid} (tid {tid})"),
              f"thread named {prof['name']!r}")
        mine = by_tid.get(tid, [])
        calls = replay(prof, frames)
        check(len(calls) == len(mine), f"tid {tid}: speedscope has {len(calls)} slices, the trace {len(mine)} calls")
        for name, start, end, depth, parent in calls:
            func, args = call_name(name)
            check(args["depth"] == depth, f"{func} at depth {depth} in speedscope, recorded {args['depth']}")
            if depth:
                check(call_name(parent)[0] == "dlt_apply", f"{func} nested in {parent}")
        # Durations as speedscope computed them (µs), to the nanosecond.
        seen = collections.Counter((call_name(n)[0], round((e - s) * 1000)) for n, s, e, _, _ in calls)
        want = collections.Counter((r["func"], int(r["dur_ns"])) for r in mine)
        check(seen == want, f"tid {tid}: durations differ: {list((seen - want).items())[:3]} vs {list((want - seen).items())[:3]}")
        oncpu = sum(call_name(n)[1]["oncpu_ns"] for n, *_ in calls)
        check(oncpu == sum(int(r["oncpu_ns"]) for r in mine), f"tid {tid}: on-CPU time in the slices' args")
    return profiles


def check_devtools(trace, rows, names=None):
    """What Chromium's DevTools trace engine builds from our Chrome trace."""
    path = os.path.join(os.path.dirname(trace), "t.json")
    built = path + ".devtools.json"
    p = subprocess.run(["node", os.path.join(VIEWERS, "devtools.mjs"), path, built],
                       capture_output=True, text=True, timeout=180)
    check(p.returncode == 0 and p.stdout.strip() == "ok", f"DevTools on {path}: {p.stdout}{p.stderr}")
    with open(built) as f:
        doc = json.load(f)
    comm = os.path.basename(DRIVER)[:15]
    by_tid = rows_by_tid(r for r in rows if int(r["dur_ns"]) > 0)
    check(not doc["warnings"], f"DevTools warns: {doc['warnings']}")
    check(doc["processNames"] == {rows[0]["pid"]: comm}, f"DevTools names the processes {doc['processNames']}")
    threads = {t["tid"]: t for t in doc["threads"]}
    check(set(threads) == set(by_tid), f"DevTools has threads {sorted(threads)}, the trace {sorted(by_tid)}")
    for tid, mine in by_tid.items():
        t = threads[tid]
        own = (names or {}).get(tid, comm)
        check(t["name"] == f"{own} {tid}", f"DevTools names thread {tid} {t['name']!r}")
        check(len(t["slices"]) == len(mine), f"tid {tid}: DevTools has {len(t['slices'])} slices for {len(mine)} calls")
        for sl in t["slices"]:
            # A slice that does not nest stays out of DevTools' tree (no depth).
            check(sl["depth"] == sl["args"]["depth"], f"DevTools puts {sl} at depth {sl['depth']}")
            check(sl["depth"] == 0 or sl["parent"] == "dlt_apply", f"DevTools nests {sl['name']} in {sl['parent']}")
        seen = collections.Counter((sl["name"], round(sl["dur"] * 1000)) for sl in t["slices"])
        check(seen == collections.Counter((r["func"], int(r["dur_ns"])) for r in mine), f"tid {tid}: durations differ")


def flamegraph(path, label):
    """Draws path with flamegraph.pl; returns its frames: (name, count, level, x0, x1),
    level 0 being its "all" frame."""
    check(os.path.exists(FLAMEGRAPH), f"{FLAMEGRAPH} is missing: run scripts/deps (libdevel-nytprof-perl)")
    p = subprocess.run(["perl", FLAMEGRAPH, "--countname", "units", path], capture_output=True, text=True, timeout=120)
    check(p.returncode == 0 and not p.stderr, f"flamegraph.pl on {label}: rc {p.returncode}: {p.stderr}")
    os.makedirs(ARTIFACTS, exist_ok=True)
    svg = os.path.join(ARTIFACTS, f"flamegraph-{label}-{ATTACH or 'default'}.svg")
    with open(svg, "w") as f:
        f.write(p.stdout)
    print(f"flame graph: {svg}")
    # Each frame: <title>NAME (COUNT units, P%)</title><rect x=.. y=.. width=..
    frames = [(html.unescape(m[0]), int(m[1].replace(",", "")), float(m[2]), int(m[3]), float(m[4]))
              for m in re.findall(r'<title>(.*) \(([\d,]+) units, [\d.]+%\)</title><rect x="([\d.]+)" '
                                  r'y="(\d+)" width="([\d.]+)"', p.stdout)]
    bottom = max(y for _, _, _, y, _ in frames)
    height = bottom - sorted({y for _, _, _, y, _ in frames})[-2]
    return [(n, c, (bottom - y) // height, x, x + w) for n, c, x, y, w in frames]


def check_flamegraph(frames, stacks):
    """The flame graph shows each stack of the folded weights with its total,
    each frame drawn on top of its caller."""
    totals = collections.Counter()
    for stack, w in stacks.items():
        parts = stack.split(";")
        for i in range(1, len(parts) + 1):
            totals[tuple(parts[:i])] += w
    paths = {}
    for name, count, level, x0, x1 in sorted(frames, key=lambda f: f[2]):
        if level == 0:
            check(name == "all" and count == sum(stacks.values()), f"flamegraph.pl's total: {name} {count}")
            paths[(level, x0, x1)] = ()
            continue
        # Its caller: the frame one level down whose span holds this one's middle.
        under = [k for k in paths if k[0] == level - 1 and k[1] <= (x0 + x1) / 2 <= k[2]]
        check(len(under) == 1, f"flamegraph.pl drew {name} on {len(under)} callers")
        path = paths[under[0]] + (name,)
        check(totals.get(path) == count, f"flamegraph.pl: {';'.join(path)} weighs {count}, the export {totals.get(path)}")
        paths[(level, x0, x1)] = path
    check(len(paths) == len(totals) + 1, f"flamegraph.pl drew {len(paths)} frames for {len(totals)} stacks")


def folded_weights(doc):
    """Self weight per stack, from speedscope's evented form of a folded file."""
    frames, weights, stack, last = doc["shared"]["frames"], collections.Counter(), [], 0
    check(len(doc["profiles"]) == 1, "a folded file is one profile")
    for e in doc["profiles"][0]["events"]:
        if stack:
            weights[";".join(frames[f]["name"] for f in stack)] += e["at"] - last
        last = e["at"]
        if e["type"] == "O":
            stack.append(e["frame"])
        else:
            check(stack.pop() == e["frame"], f"speedscope closed {e} out of order")
    return +weights  # the process and thread frames open at one instant: no weight of their own


def nested_trace(tmp):
    trace, _ = record(tmp, [DRIVER, "nested", LATE_LIB, str(CALLS)], ["--lib", LATE_LIB])
    _, rows, _ = dump_csv(trace)
    check(len(rows) == 2 * CALLS, f"{len(rows)} calls recorded for {2 * CALLS}")
    return trace, rows


def threads_trace(tmp):
    trace, _ = record(tmp, [DRIVER, "threads", str(THREADS), str(THREAD_CALLS)])
    _, rows, _ = dump_csv(trace)
    check(len(rows) == THREADS * THREAD_CALLS, f"{len(rows)} calls recorded for {THREADS * THREAD_CALLS}")
    return trace, rows


@modes("session")
def test_viewer_perfetto_nested():
    require_viewer()
    with tempfile.TemporaryDirectory() as tmp:
        trace, rows = nested_trace(tmp)
        check_chrome_trace(trace, rows, "perfetto-nested")
        check_devtools(trace, rows)


@modes("session")
def test_viewer_perfetto_threads():
    require_viewer()
    with tempfile.TemporaryDirectory() as tmp:
        trace, rows = threads_trace(tmp)
        profiles = check_chrome_trace(trace, rows, "perfetto-threads")
        check_devtools(trace, rows)
        check(len(profiles) == THREADS + (1 if any(r["tid"] == r["pid"] for r in rows) else 0),
              f"{len(profiles)} thread tracks for {THREADS} threads")


@modes("session")
def test_viewer_perfetto_named_threads():
    """Threads that named themselves (pthread_setname_np) and exited: both
    viewers title each thread with its own name."""
    require_viewer()
    with tempfile.TemporaryDirectory() as tmp:
        trace, _ = record(tmp, [DRIVER, "namedthreads", str(THREADS), str(THREAD_CALLS)])
        _, rows, _ = dump_csv(trace)
        check(len(rows) == THREADS * THREAD_CALLS, f"{len(rows)} calls recorded for {THREADS * THREAD_CALLS}")
        with open(os.path.join(trace, "meta.json")) as f:
            names = {t["tid"]: t["comm"] for t in json.load(f)["threads"]}
        check(sorted(names.values()) == sorted(f"worker-{i}" for i in range(THREADS)), f"thread names {names}")
        check_chrome_trace(trace, rows, "perfetto-named-threads", names)
        check_devtools(trace, rows, names)


@modes("session")
def test_viewer_perfetto_untimed():
    """Calls left by longjmp never return: the export writes them as instants,
    which must not stop speedscope from reading the timed calls around them."""
    require_viewer()
    with tempfile.TemporaryDirectory() as tmp:
        trace, _ = record(tmp, [DRIVER, "longjmp", "5", str(CALLS)])
        _, rows, _ = dump_csv(trace)
        untimed = [r for r in rows if int(r["dur_ns"]) == 0]
        check(len(untimed) >= 10 and len(rows) - len(untimed) == CALLS,
              f"{len(untimed)} untimed and {len(rows) - len(untimed)} timed calls recorded, {CALLS} dlt_add expected")
        check_chrome_trace(trace, rows, "perfetto-untimed")
        check_devtools(trace, rows)


@modes("session")
def test_viewer_perfetto_damaged():
    """A damaged shard is a global instant (pid 0): the viewers read the calls
    that are left and make no process or thread of it."""
    require_viewer()
    with tempfile.TemporaryDirectory() as tmp:
        # Calls over ~2.5 s: the writer flushes at least every second, so the damaged last block
        # is never all of the trace, however the scheduler spread the calls over the CPUs.
        trace, _ = record(tmp, [DRIVER, "sleep", "10", "250"])
        _, rows, _ = dump_csv(trace)
        shards = sorted((os.path.join(trace, n) for n in os.listdir(trace) if n.endswith(".shard")),
                        key=os.path.getsize)
        with open(shards[-1], "r+b") as f:  # one byte of its last block's payload
            f.seek(-20, os.SEEK_END)
            byte = f.read(1)
            f.seek(-1, os.SEEK_CUR)
            f.write(bytes([byte[0] ^ 0xFF]))
        _, left, _ = dump_csv(trace)
        check(0 < len(left) < len(rows), f"{len(left)} of {len(rows)} calls left after the damage")
        with open(export(trace, "perfetto", os.path.join(tmp, "t.json"))) as f:
            losses = [e for e in json.load(f)["traceEvents"] if e.get("cat") == "dlprof-loss"]
        check(len(losses) == 1 and losses[0]["ph"] == "i" and losses[0]["s"] == "g", f"loss events {losses}")
        profiles = check_chrome_trace(trace, left, "perfetto-damaged")
        check(all("(pid 0" not in p["name"] for p in profiles), "speedscope made a track of the loss")
        check_devtools(trace, left)


@modes("session")
def test_viewer_rejects_overlap():
    """The checks catch what Perfetto would misdraw, slices of one thread that
    overlap without nesting: speedscope's importer warns, DevTools leaves the
    second out of its tree."""
    require_viewer()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "overlap.json")
        with open(path, "w") as f:
            json.dump({"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
                                       {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 5, "dur": 10}]}, f)
        p = subprocess.run(["node", os.path.join(VIEWERS, "speedscope.mjs"), path, path + ".out",
                            os.path.join(tmp, "overlap.png")], capture_output=True, text=True, timeout=180)
        check(p.returncode != 0 and "Tried to end" in p.stdout, f"an overlapping pair loaded: {p.stdout}{p.stderr}")
        p = subprocess.run(["node", os.path.join(VIEWERS, "devtools.mjs"), path, path + ".dt"],
                           capture_output=True, text=True, timeout=180)
        check(p.returncode == 0, f"DevTools on an overlapping pair: {p.stdout}{p.stderr}")
        with open(path + ".dt") as f:
            depths = [sl["depth"] for sl in json.load(f)["threads"][0]["slices"]]
        check(depths == [0, None], f"DevTools placed an overlapping pair at depths {depths}")


@modes("session")
def test_viewer_folded_nested():
    require_viewer()
    with tempfile.TemporaryDirectory() as tmp:
        trace, rows = nested_trace(tmp)
        pid = rows[0]["pid"]
        head = f"{os.path.basename(DRIVER)[:15]}-{pid};{pid}"
        for weight, column in (("wall", "dur_ns"), ("oncpu", "oncpu_ns")):
            out = export(trace, "folded", os.path.join(tmp, f"{weight}.folded"), ["--weight", weight])
            w = folded_weights(speedscope(out, f"folded-{weight}"))
            outer = sum(int(r[column]) for r in rows if r["depth"] == "0")
            add = sum(int(r[column]) for r in rows if r["func"] == "dlt_add")
            check(sum(w.values()) == outer, f"{weight}: speedscope's total {sum(w.values())} != outer calls' {outer}")
            check(w[f"{head};dlt_apply;dlt_add"] == add, f"{weight}: dlt_add inside dlt_apply weighs "
                  f"{w[f'{head};dlt_apply;dlt_add']} in speedscope, its calls {add}")
            check(w[f"{head};dlt_apply"] == outer - add, f"{weight}: dlt_apply's self weight {w}")
            check(set(w) == {f"{head};dlt_apply", f"{head};dlt_apply;dlt_add"}, f"{weight}: stacks {list(w)}")
            check_flamegraph(flamegraph(out, f"nested-{weight}"), w)


@modes("session")
def test_viewer_folded_threads():
    require_viewer()
    with tempfile.TemporaryDirectory() as tmp:
        trace, rows = threads_trace(tmp)
        pid = rows[0]["pid"]
        out = export(trace, "folded", os.path.join(tmp, "t.folded"))
        w = folded_weights(speedscope(out, "folded-threads"))
        want = collections.Counter()
        for r in rows:
            want[f"{os.path.basename(DRIVER)[:15]}-{pid};{r['tid']};dlt_add"] += int(r["dur_ns"])
        check(w == want, f"speedscope's stacks {dict(w)} != the trace's {dict(want)}")
        check_flamegraph(flamegraph(out, "threads"), want)


if __name__ == "__main__":
    sys.exit(itest.run(globals()))
