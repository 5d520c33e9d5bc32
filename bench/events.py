"""Events: the time from a change's commit to its hook's start (p50/p95 over 200 events; SPEC.md "Events"
and issue 27: p95 <= 250 ms), and what the event log costs the catalog rows (`issues add`, and the
many-assets download) against a build from before the log, run in the same go.

The baseline is any `issues` binary built from before the event log (commit 08c0739, the parent of the
events merge): `bench/baseline.sh` builds one and prints its path; pass it as BENCH_BASELINE_ISSUES.
Without it the cost rows show this build's figures alone."""

import datetime
import json
import os
import random

from harness import BenchError, log, met, rm, stats, write_random

ONLY = ("events",)
NEEDS_NGINX = True
TOOLS = ()
FULL = dict(events_count=200, events_add_runs=30, events_many_count=64, events_many_size=1 << 20)
QUICK = dict(events_count=40, events_add_runs=6, events_many_count=16, events_many_size=256 << 10)

LATENCY_P95_TARGET_MS = 250


def plan(ctx, only):
    if "events" not in only:
        return []
    return [("events", "Events: commit to hook, and the log's cost", lambda: events(ctx))]


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def parse_time(text):
    # "2026-11-20T06:00:00.123Z"
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()


def latency(ctx, count):
    """`count` changes, each by its own `issues add`; an exec hook appends its start time. The event's time
    is taken when the change is staged, so each figure also holds the commit's own write and flush."""
    lib = ctx.fresh("events-latency")
    os.makedirs(lib)
    times = os.path.join(ctx.work, "hook-times.txt")
    rm(times)
    hook = ["/bin/sh", "-c", 'echo "$ISSUES_EVENT_CURSOR $(date +%s.%N)" >> "$0"', times]
    with open(os.path.join(lib, "config.json"), "w") as f:
        json.dump({"hooks": [{"name": "clock", "exec": hook, "events": ["issue.added"]}]}, f)
    for i in range(count):
        ctx.run(ctx.issues_cmd("add", f"Event {i:04d}", "--date", "2026-11-20", "--library", lib)).check("issues add")
    listed = ctx.run(ctx.issues_cmd("events", "--json", "--library", lib)).check("issues events --json")
    committed = {}
    for line in listed.stdout.splitlines():
        event = json.loads(line)
        if event["kind"] == "issue.added":
            committed[event["cursor"]] = parse_time(event["time"])
    started = {}
    with open(times) as f:
        for line in f:
            cursor, when = line.split()
            started[int(cursor)] = float(when)
    if sorted(started) != sorted(committed) or len(started) != count:
        raise BenchError(f"events: the hook saw {len(started)} events, the log holds {len(committed)}, expected {count}")
    rm(lib)
    return [(started[c] - committed[c]) * 1000 for c in committed]


def add_times(ctx, binary, runs, label):
    """`issues add` of a new issue with one asset, `runs` times in one library of 1,000 imported issues."""
    lib = ctx.fresh(f"events-add-{label}")
    source = os.path.join(ctx.work, "events-import.jsonl")
    if not os.path.exists(source):
        with open(source, "w") as f:
            for i in range(1000):
                f.write(json.dumps({"name": f"Imported {i:04d}", "date": f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}"}) + "\n")
    ctx.run([binary, "import", source, "--library", lib]).check(f"{label} issues import")
    url = ctx.nginx.url("ready.txt")
    samples = []
    for i in range(runs):
        r = ctx.run([binary, "add", f"New {i:03d}", "--date", "2026-11-21", "--asset", url, "--library", lib]).check(
            f"{label} issues add")
        samples.append(r.seconds)
    rm(lib)
    return samples


def many_times(ctx, binary, urls, label):
    lib = ctx.fresh(f"events-many-{label}")
    cmd = [binary, "add", "Many", "--date", "2026-11-20", "--library", lib]
    for url in urls:
        cmd += ["--asset", url]
    ctx.run(cmd).check(f"{label} issues add")
    extra = ["--no-covers"] if label == "this build" else []
    r = ctx.run([binary, "download", "--jobs", "8", "--library", lib, *extra]).check(f"{label} issues download")
    rm(lib)
    return r.seconds


def events(ctx):
    count = ctx.sizes["events_count"]
    lat = []
    for i in range(ctx.runs):
        lat += latency(ctx, count)
        log(f"events run {i + 1}/{ctx.runs}: commit → hook p50 {percentile(lat, 50):.0f} ms, "
            f"p95 {percentile(lat, 95):.0f} ms (all runs so far)")
    baseline = os.environ.get("BENCH_BASELINE_ISSUES")
    if baseline and not os.access(baseline, os.X_OK):
        raise BenchError(f"BENCH_BASELINE_ISSUES={baseline} is not an executable")
    binaries = [("this build", ctx.issues)] + ([("before the log", baseline)] if baseline else [])

    many_count, many_size = ctx.sizes["events_many_count"], ctx.sizes["events_many_size"]
    folder = os.path.join(ctx.www, "events-many")
    os.makedirs(folder, exist_ok=True)
    for i in range(many_count):
        write_random(os.path.join(folder, f"a-{i:03d}.bin"), many_size)
    urls = [ctx.nginx.url(f"events-many/a-{i:03d}.bin") for i in range(many_count)]

    adds = {label: [] for label, _ in binaries}
    many = {label: [] for label, _ in binaries}
    order = list(binaries)
    for i in range(ctx.runs):
        random.Random(i).shuffle(order)  # neither build always runs first
        for label, binary in order:
            adds[label] += add_times(ctx, binary, ctx.sizes["events_add_runs"], label)
            many[label].append(many_times(ctx, binary, urls, label))
            log(f"events run {i + 1}/{ctx.runs}: {label}: add median {sorted(adds[label])[len(adds[label]) // 2] * 1000:.1f} ms, "
                f"many {many[label][-1]:.2f} s")
    rm(folder)
    return dict(count=count, runs=ctx.runs, latency_ms=lat, baseline=baseline,
                add={k: stats(v) for k, v in adds.items()}, many={k: stats(v) for k, v in many.items()},
                many_count=many_count, many_size=many_size)


def render(results, report):
    r = results.get("events")
    if not r:
        return
    lat = r["latency_ms"]
    p50, p95 = percentile(lat, 50), percentile(lat, 95)
    report.row(f"event commit → exec hook start ({r['count']} `issues add`s × {r['runs']} runs)",
               f"p50 {p50:.0f} ms, p95 {p95:.0f} ms (max {max(lat):.0f})",
               target=f"p95 ≤ {LATENCY_P95_TARGET_MS} ms", ok=met(p95 <= LATENCY_P95_TARGET_MS))
    for key, title, unit in (("add", "`issues add` with one asset, 1,000 issues", 1000),
                             ("many", f"many assets ({r['many_count']} × {r['many_size'] >> 10} KiB) `download --jobs 8`", 1)):
        now = r[key]["this build"]
        fmt = (lambda s: f"{s * 1000:.1f} ms") if unit == 1000 else (lambda s: f"{s:.2f} s")
        figure = f"{fmt(now['median'])} ({fmt(now['min'])}–{fmt(now['max'])})"
        before = r[key].get("before the log")
        if before:
            ratio = now["median"] / before["median"]
            spread_before = f"{fmt(before['median'])} ({fmt(before['min'])}–{fmt(before['max'])})"
            # Within noise: each build's median lies inside the other's range of runs.
            within = before["min"] <= now["median"] <= before["max"] and now["min"] <= before["median"] <= now["max"]
            report.row(f"the event log's cost: {title}", f"{figure} vs {spread_before} before the log: ×{ratio:.2f}",
                       target="within noise of before", ok="yes" if within else f"no (×{ratio:.2f})")
        else:
            report.row(f"the event log's cost: {title}", figure + " (no BENCH_BASELINE_ISSUES: no before)",
                       target="within noise of before", ok="—")


NOTES = [
    "- **Events**: commit → hook: a library whose `config.json` has one exec hook (`/bin/sh -c 'echo "
    "$ISSUES_EVENT_CURSOR $(date +%s.%N) >> FILE'`, on `issue.added`); each of N `issues add` processes "
    "commits, then delivers before it exits. The figure is the hook's start time minus the event's `time` (taken "
    "when the change is staged, so it includes the commit's write and flush). The log's cost: the same commands "
    "run alternately (in shuffled order) with this build and with `BENCH_BASELINE_ISSUES`, an `issues` built from "
    "before the event log (`bench/baseline.sh`); `add` in a library of 1,000 imported issues, many assets with "
    "`download --jobs 8`.",
]
