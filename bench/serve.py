#!/usr/bin/env python3
"""`make bench-serve`: the serve row of the benchmark (SPEC "Performance targets").

On the 100,000-issue library the catalog benchmark builds (catalog.write_import_file, imported with
`issues import`), runs `issues serve` and measures, each as median / p95 / min–max over --runs requests:
the shelf page's server time (first page, a deep page, a search), the JSON API's page, a `curl` of a static
file from the same server (the floor), first contentful paint in headless Chromium, the script's size,
idle resident memory, and an event's latency from `issues add`'s commit to an SSE client.
Prints a Markdown table and writes bench/results/serve-latest.md. Python standard library (+ Selenium for
the paint). Usage: bench/serve.py [--issues N] [--runs N] [--bin PATH]
"""
import argparse
import http.client
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import catalog  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TARGETS = dict(shelf_ms=50, api_ms=50, fcp_ms=300, js_kb=100, rss_mib=40, sse_ms=250)


def pct(samples, q):
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def summary(samples):
    return dict(median=statistics.median(samples), p95=pct(samples, 0.95), min=min(samples), max=max(samples), n=len(samples))


def timed_get(port, path, runs):
    """Wall time of GET `path` on one kept-alive connection, body read whole (ms)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        connection.request("GET", path)
        response = connection.getresponse()
        body = response.read()
        samples.append((time.perf_counter() - start) * 1000)
        if response.status != 200:
            raise SystemExit(f"GET {path}: {response.status} {body[:200]!r}")
    connection.close()
    return samples


def curl_times(port, path, runs):
    samples = []
    for _ in range(runs):
        out = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{time_total}", f"http://127.0.0.1:{port}{path}"],
                             capture_output=True, text=True, check=True).stdout
        samples.append(float(out) * 1000)
    return samples


def rss_mib(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def sse_latency(port, binary, env, runs):
    """ms from the start of `issues add` (an upper bound: it includes the process's start and the library's
    opening) to the event on an open SSE stream."""
    samples = []
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("GET", "/events", headers={"Accept": "text/event-stream"})
    response = connection.getresponse()
    seen = {}
    ready = threading.Event()

    def reader():
        buffer = b""
        while True:
            chunk = response.fp.read1(65536) if hasattr(response.fp, "read1") else response.read(1)
            if not chunk:
                return
            buffer += chunk
            if b"retry:" in buffer:
                ready.set()
            for match in re.finditer(rb"bench-sse-(\d+)", buffer):
                seen.setdefault(int(match.group(1)), time.perf_counter())
            buffer = buffer[-4096:]

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    ready.wait(10)
    for i in range(runs):
        committed = time.perf_counter()
        subprocess.run([binary, "add", f"bench-sse-{i}", "--date", "2026-11-25"], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        deadline = committed + 5
        while i not in seen and time.perf_counter() < deadline:
            time.sleep(0.001)
        if i not in seen:
            raise SystemExit(f"event bench-sse-{i} never reached the SSE client")
        samples.append(max(0.0, (seen[i] - committed) * 1000))
    connection.close()
    return samples


def first_contentful_paint(url, runs):
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        return None
    options = Options()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options)
    samples = []
    try:
        for _ in range(runs):
            driver.get("about:blank")
            driver.get(url)
            for _ in range(100):
                value = driver.execute_script(
                    "var e = performance.getEntriesByName('first-contentful-paint')[0]; return e ? e.startTime : null;")
                if value is not None:
                    samples.append(value)
                    break
                time.sleep(0.05)
    finally:
        driver.quit()
    return samples


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--issues", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--bin", default=str(ROOT / ".build/release/issues"))
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="issues-bench-serve-"))
    env = dict(os.environ, ISSUES_LIBRARY=str(work / "library"))
    serve = None
    try:
        print(f"[bench] writing and importing {args.issues} issues", file=sys.stderr)
        names, _, _ = catalog.write_import_file(work / "issues.jsonl", args.issues)
        start = time.perf_counter()
        subprocess.run([args.bin, "import", str(work / "issues.jsonl")], env=env, check=True, stdout=subprocess.DEVNULL)
        print(f"[bench] imported in {time.perf_counter() - start:.1f} s", file=sys.stderr)
        serve = subprocess.Popen([args.bin, "serve", "--listen", "127.0.0.1:0"], env=env, stdout=subprocess.DEVNULL,
                                 stderr=open(work / "serve.log", "w"))
        for _ in range(400):
            match = re.search(r"http://127\.0\.0\.1:(\d+)/", (work / "serve.log").read_text())
            if match:
                break
            time.sleep(0.05)
        else:
            raise SystemExit("issues serve did not start: " + (work / "serve.log").read_text())
        port = int(match.group(1))
        rss_start = rss_mib(serve.pid)
        cold = timed_get(port, "/", 1)[0]
        word = names[len(names) // 2].split()[0]
        rows = {}
        rows["shelf, first page"] = summary(timed_get(port, "/", args.runs))
        rows["shelf, page at offset 90,000"] = summary(timed_get(port, "/?offset=90000", args.runs))
        rows[f"shelf, search q={word}"] = summary(timed_get(port, f"/?q={word}", max(10, args.runs // 5)))
        rows["API /api/issues page"] = summary(timed_get(port, "/api/issues", args.runs))
        rows["API /api/issues?offset=90000"] = summary(timed_get(port, "/api/issues?offset=90000", args.runs))
        rows["curl shelf page"] = summary(curl_times(port, "/", max(10, args.runs // 5)))
        rows["curl static file /static/app.css"] = summary(curl_times(port, "/static/app.css", max(10, args.runs // 5)))
        time.sleep(2)
        rss_idle = rss_mib(serve.pid)
        sse = summary(sse_latency(port, args.bin, env, 20))
        fcp = first_contentful_paint(f"http://127.0.0.1:{port}/", 21)
        js = len(subprocess.run(["curl", "-s", f"http://127.0.0.1:{port}/static/app.js"], capture_output=True, check=True).stdout)
        serve.send_signal(signal.SIGTERM)
        status = serve.wait(timeout=30)
        serve = None

        lines = [f"# issues serve benchmark — {args.issues} issues, {args.runs} requests a row", "",
                 f"- binary: `{args.bin}`; first shelf request after start (index read and sorted): {cold:.1f} ms",
                 f"- resident memory: {rss_start:.1f} MiB at start, {rss_idle:.1f} MiB idle after the runs (target ≤ {TARGETS['rss_mib']} MiB)",
                 f"- script: {js} bytes (target ≤ {TARGETS['js_kb']} KB); SIGTERM → exit status {status}", "",
                 "| measurement (ms) | median | p95 | min | max | n |", "|---|---|---|---|---|---|"]
        for name, s in rows.items():
            lines.append(f"| {name} | {s['median']:.2f} | {s['p95']:.2f} | {s['min']:.2f} | {s['max']:.2f} | {s['n']} |")
        lines.append(f"| event → SSE client (from `issues add` start) | {sse['median']:.2f} | {sse['p95']:.2f} | {sse['min']:.2f} | {sse['max']:.2f} | {sse['n']} |")
        if fcp:
            # The first load is also the browser's: a renderer process started and its fonts read. It is shown
            # apart, so that the p95 of the others is the page's and the cold figure is still in the table.
            lines.append(f"| first contentful paint, first load in a just-started Chromium | {fcp[0]:.1f} | — | — | — | 1 |")
            if len(fcp) > 1:
                f = summary(fcp[1:])
                lines.append(f"| first contentful paint, the loads after it (headless Chromium) | {f['median']:.1f} | {f['p95']:.1f} | {f['min']:.1f} | {f['max']:.1f} | {f['n']} |")
        lines += ["", f"Targets: shelf p95 ≤ {TARGETS['shelf_ms']} ms, API page p95 ≤ {TARGETS['api_ms']} ms, "
                  f"FCP ≤ {TARGETS['fcp_ms']} ms, event → SSE ≤ {TARGETS['sse_ms']} ms."]
        text = "\n".join(lines) + "\n"
        print(text)
        (ROOT / "bench/results").mkdir(exist_ok=True)
        (ROOT / "bench/results/serve-latest.md").write_text(text)
    finally:
        if serve and serve.poll() is None:
            serve.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
