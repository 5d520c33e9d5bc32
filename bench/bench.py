#!/usr/bin/env python3
"""Benchmark of the `issues` CLI against curl, aria2c, bsdtar and unzip (see bench/README.md).

One run: generates data in a temporary folder, serves it with a private nginx on 127.0.0.1, runs every
benchmark `--runs` times, prints one Markdown table of ratios to stdout and writes it to
bench/results/latest.md (+ latest.json, + timestamped copies). Progress goes to stderr.

Exit status: 0 when every benchmark ran (missed targets are reported, not failures), 1 when one could
not run (tool missing, wrong output, non-zero exit), 2 on bad usage, 130 when interrupted.
Python standard library only.
"""

import argparse
import datetime
import hashlib
import json
import os
import platform
import pwd
import grp
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_DIR = os.path.dirname(BENCH_DIR)
RESULTS_DIR = os.path.join(BENCH_DIR, "results")
MiB = 1 << 20
GiB = 1 << 30

# Sizes of a full run and of a `--quick` smoke run.
FULL = dict(large=1 * GiB, many_count=200, many_size=5 * MiB, small_files=10_000,
            big_files=4, big_file_size=64 * MiB, library_sizes=[1_000, 10_000, 100_000])
QUICK = dict(large=64 * MiB, many_count=20, many_size=1 * MiB, small_files=1_000,
             big_files=4, big_file_size=4 * MiB, library_sizes=[1_000, 10_000])

RSS_TARGET_KIB = 64 * 1024
SCALE_TARGET_S = 1.0


class BenchError(Exception):
    """A benchmark could not run or produced wrong output."""


class Terminated(BaseException):
    """SIGTERM/SIGHUP: unwinds like Ctrl-C so that every `finally` (nginx, temp dir) runs."""


def log(message):
    print(f"[bench] {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------------
# Running and timing commands


def child_env():
    env = dict(os.environ)
    for key in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
                "no_proxy", "NO_PROXY", "ISSUES_LIBRARY", "ISSUES_DEBUG", "CURL_HOME"):
        env.pop(key, None)
    env["LC_ALL"] = "C"
    return env


ENV = child_env()


class Result:
    def __init__(self, cmd, seconds, returncode, maxrss_kib, stdout, stderr):
        self.cmd, self.seconds, self.returncode = cmd, seconds, returncode
        self.maxrss_kib, self.stdout, self.stderr = maxrss_kib, stdout, stderr

    def check(self, what):
        if self.returncode != 0:
            raise BenchError(f"{what} exited with {self.returncode}: {shell_line(self.cmd)}\n"
                             f"stdout: {tail(self.stdout)}\nstderr: {tail(self.stderr)}")
        return self


def tail(text, limit=1500):
    text = text.strip()
    return text if len(text) <= limit else "..." + text[-limit:]


def shell_line(cmd):
    import shlex
    if len(cmd) > 12:
        return " ".join(shlex.quote(c) for c in cmd[:10]) + f" ... ({len(cmd) - 10} more args)"
    return " ".join(shlex.quote(c) for c in cmd)


def run(cmd, cwd=None, stdout_to_null=False, scratch=None):
    """Runs `cmd`, timed with perf_counter from just before the spawn to just after the reap.

    Reaps with os.wait4 to get the child's peak resident set (ru_maxrss, KiB on Linux). stdout and
    stderr go to files (no pipe can fill up and stall the child); stdout to /dev/null when asked.
    """
    scratch = scratch or tempfile.gettempdir()
    out_fd, out_path = tempfile.mkstemp(prefix="out-", dir=scratch)
    err_fd, err_path = tempfile.mkstemp(prefix="err-", dir=scratch)
    null = open(os.devnull, "wb") if stdout_to_null else None
    try:
        # Flush what earlier runs left dirty (thousands of extracted files, deleted trees), so that no
        # tool is charged for another's writeback; the disk here is a shared virtual volume.
        os.sync()
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=ENV, stdin=subprocess.DEVNULL,
                                stdout=null if null else out_fd, stderr=err_fd)
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        with open(out_path, "rb") as f:
            stdout = f.read().decode("utf-8", "replace")
        with open(err_path, "rb") as f:
            stderr = f.read().decode("utf-8", "replace")
        return Result(cmd, seconds, proc.returncode, usage.ru_maxrss, stdout, stderr)
    finally:
        os.close(out_fd)
        os.close(err_fd)
        os.unlink(out_path)
        os.unlink(err_path)
        if null:
            null.close()


def rm(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


def file_sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(4 * MiB):
            h.update(chunk)
    return h.hexdigest()


def count_files(root):
    """(number of regular files, total bytes) under root."""
    n = total = 0
    for dirpath, _, files in os.walk(root):
        for name in files:
            st = os.lstat(os.path.join(dirpath, name))
            n += 1
            total += st.st_size
    return n, total


def expect_file(path, size, sha256=None):
    if not os.path.isfile(path):
        raise BenchError(f"missing downloaded file {path}")
    got = os.path.getsize(path)
    if got != size:
        raise BenchError(f"{path}: {got} bytes, expected {size}")
    if sha256 and file_sha256(path) != sha256:
        raise BenchError(f"{path}: SHA-256 mismatch")


def stats(samples):
    return dict(median=statistics.median(samples), min=min(samples), max=max(samples),
                samples=samples)


# --------------------------------------------------------------------------------------------------
# nginx


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Nginx:
    def __init__(self, root, www):
        self.root, self.www = root, www
        self.proc = None
        self.port = None

    def start(self):
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        if not os.path.exists(nginx):
            raise BenchError("nginx not found (make bench-deps installs nginx-light)")
        conf_dir = os.path.join(self.root, "nginx")
        os.makedirs(conf_dir, exist_ok=True)
        user_line = ""
        if os.geteuid() == 0:  # workers would otherwise run as nobody and could not read the temp dir
            user_line = f"user {pwd.getpwuid(os.geteuid()).pw_name} {grp.getgrgid(os.getegid()).gr_name};"
        for attempt in range(5):
            self.port = free_port()
            conf = os.path.join(conf_dir, "nginx.conf")
            with open(conf, "w") as f:
                f.write(f"""{user_line}
worker_processes 2;
daemon off;
pid {conf_dir}/nginx.pid;
error_log {conf_dir}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    default_type application/octet-stream;
    types {{ }}
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    access_log off;
    keepalive_requests 100000;
    keepalive_timeout 65;
    client_body_temp_path {conf_dir}/body;
    proxy_temp_path {conf_dir}/proxy;
    fastcgi_temp_path {conf_dir}/fastcgi;
    uwsgi_temp_path {conf_dir}/uwsgi;
    scgi_temp_path {conf_dir}/scgi;
    server {{
        listen 127.0.0.1:{self.port};
        root {self.www};
        location / {{ }}
    }}
}}
""")
            # Own session: Ctrl-C in the terminal does not reach nginx; it is stopped in order below.
            self.proc = subprocess.Popen([nginx, "-p", conf_dir, "-e", f"{conf_dir}/error.log", "-c", conf],
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL, start_new_session=True)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    break
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/ready.txt", timeout=1) as r:
                        if r.read() == b"ok\n":
                            return
                except OSError:
                    time.sleep(0.05)
            # Port taken in the meantime, or nginx failed: show its log, retry on another port.
            self.stop()
            errors = ""
            try:
                with open(os.path.join(conf_dir, "error.log")) as f:
                    errors = f.read()
            except OSError:
                pass
            if "Address already in use" not in errors:
                raise BenchError(f"nginx did not start: {tail(errors)}")
        raise BenchError("nginx did not start: no free port")

    def url(self, name):
        return f"http://127.0.0.1:{self.port}/{name}"

    def stop(self):
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()  # SIGTERM to the master: fast shutdown, it stops its workers
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # the master's own process group (new session)
            except ProcessLookupError:
                pass
            proc.wait()


# --------------------------------------------------------------------------------------------------
# Data


def write_random(path, size, want_hash=False):
    h = hashlib.sha256() if want_hash else None
    with open(path, "wb") as f:
        left = size
        while left:
            chunk = os.urandom(min(left, 4 * MiB))
            f.write(chunk)
            if h:
                h.update(chunk)
            left -= len(chunk)
    return h.hexdigest() if h else None


# 16 symbols: random data of about 4 bits per byte, so deflate gets about 2:1 ("compressible-ish").
_HALF = bytes.maketrans(bytes(range(256)), bytes(b"abcdefghijklmnop"[i % 16] for i in range(256)))


def compressible(n, rng=None):
    raw = rng.randbytes(n) if rng else os.urandom(n)
    return raw.translate(_HALF)


def make_small_zip(path, count):
    """`count` files of 1-4 KiB in nested folders (a/b/), deflated. Returns (files, bytes)."""
    rng = random.Random(20261120)
    base = compressible(256 * 1024, rng) + b"the quick brown fox jumps over the lazy dog\n" * 2000
    total = 0
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as z:
        for i in range(count):
            name = f"pages/{i % 20:02d}/{(i // 20) % 25:02d}/page-{i:05d}.txt"
            size = rng.randint(1024, 4096)
            offset = rng.randrange(0, len(base) - size)
            data = base[offset:offset + size]
            z.writestr(name, data)
            total += size
    return count, total


def make_big_zip(path, count, size):
    """`count` files of `size` bytes of compressible-ish data, deflated at level 1 (fast to build)."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        for i in range(count):
            with z.open(f"media/video-{i}.bin", "w", force_zip64=True) as f:
                left = size
                while left:
                    n = min(left, 4 * MiB)
                    f.write(compressible(n))
                    left -= n
    return count, count * size


def make_library(path, count):
    os.makedirs(path)
    base = datetime.date(2026, 11, 20)
    issues = []
    for i in range(count):
        name = f"Pub {i:06d}"
        issues.append({"name": name, "date": (base - datetime.timedelta(days=i % 3650)).isoformat(),
                       "folder": name, "status": "none", "assets": []})
    with open(os.path.join(path, "library.json"), "w") as f:
        json.dump({"version": 1, "pendingDownloads": [], "issues": issues}, f)


# --------------------------------------------------------------------------------------------------
# Benchmarks


class Bench:
    def __init__(self, args, sizes, work, nginx, issues):
        self.args, self.sizes, self.work, self.nginx, self.issues = args, sizes, work, nginx, issues
        self.www = nginx.www
        self.runs = args.runs
        self.scratch = os.path.join(work, "scratch")
        os.makedirs(self.scratch, exist_ok=True)
        self.counter = 0

    def fresh(self, label, root=None):
        self.counter += 1
        return os.path.join(root or self.work, f"{label}-{self.counter}")

    def unpack_root(self):
        """Where the unpack benchmark extracts. On the shared virtual disk here, creating 10,000 files took
        anywhere from 0.6 s to 6 s for the same tool (ext4 scanning for free inodes after earlier deletions,
        seen with perf), which swamps the difference between extractors; a tmpfs measures the extractors.
        `--unpack-on-disk` measures on the work folder's disk instead."""
        if self.args.unpack_on_disk or not os.path.isdir("/dev/shm"):
            return self.work
        if not getattr(self, "_shm", None):
            self._shm = tempfile.mkdtemp(prefix="issues-bench-unpack-", dir="/dev/shm")
        return self._shm

    def run(self, cmd, **kw):
        return run(cmd, scratch=self.scratch, **kw)

    def issues_cmd(self, *args):
        return [self.issues, *args]

    def new_library(self, label, issue, assets=(), no_unpack_assets=(), root=None):
        lib = self.fresh(label, root)
        cmd = self.issues_cmd("add", issue, "--date", "2026-11-20", "--library", lib)
        for url in assets:
            cmd += ["--asset", url]
        self.run(cmd).check("issues add")
        for url in no_unpack_assets:
            self.run(self.issues_cmd("add-asset", issue, url, "--no-unpack", "--library", lib)).check(
                "issues add-asset --no-unpack")
        return lib

    def issues_download(self, lib, jobs=None, extra=()):
        cmd = self.issues_cmd("download", "--library", lib, *extra)
        if jobs:
            cmd += ["--jobs", str(jobs)]
        return self.run(cmd).check("issues download")

    # 1 + 2: one large asset --------------------------------------------------------------------------

    def large(self):
        size = self.sizes["large"]
        log(f"large: generating {size // MiB} MiB of random data")
        src = os.path.join(self.www, "large.bin")
        digest = write_random(src, size, want_hash=True)
        url = self.nginx.url("large.bin")
        curl_t, curl_rss, iss_t, iss_rss = [], [], [], []
        for i in range(self.runs):
            order = ("curl", "issues") if i % 2 == 0 else ("issues", "curl")
            for tool in order:
                if tool == "curl":
                    out = os.path.join(self.fresh("curl-large"), "large.bin")
                    os.makedirs(os.path.dirname(out))
                    r = self.run(["curl", "-s", "-o", out, url]).check("curl")
                    expect_file(out, size, digest if i == 0 else None)
                    curl_t.append(r.seconds)
                    curl_rss.append(r.maxrss_kib)
                    rm(os.path.dirname(out))
                else:
                    lib = self.new_library("lib-large", "Large", [url])
                    r = self.issues_download(lib)
                    expect_file(os.path.join(lib, "Large", "large.bin"), size, digest if i == 0 else None)
                    iss_t.append(r.seconds)
                    iss_rss.append(r.maxrss_kib)
                    rm(lib)
                log(f"large run {i + 1}/{self.runs}: {tool} {(curl_t if tool == 'curl' else iss_t)[-1]:.2f} s")
        rm(src)
        return dict(size=size, curl=stats(curl_t), issues=stats(iss_t),
                    curl_rss_kib=stats(curl_rss), issues_rss_kib=stats(iss_rss))

    # 3: many assets ----------------------------------------------------------------------------------

    def many(self):
        count, size = self.sizes["many_count"], self.sizes["many_size"]
        log(f"many: generating {count} x {size // MiB} MiB")
        folder = os.path.join(self.www, "many")
        os.makedirs(folder)
        names = [f"asset-{i:03d}.bin" for i in range(count)]
        for name in names:
            write_random(os.path.join(folder, name), size)
        urls = [self.nginx.url(f"many/{name}") for name in names]
        url_list = os.path.join(self.work, "many-urls.txt")
        with open(url_list, "w") as f:
            f.write("".join(u + "\n" for u in urls))

        def verify(folder_out, what):
            n, total = count_files(folder_out)
            if n != count or total != count * size:
                raise BenchError(f"{what}: {n} files / {total} bytes in {folder_out}, "
                                 f"expected {count} / {count * size}")
            for name in names[:: max(1, count // 10)]:
                expect_file(os.path.join(folder_out, name), size)

        times = {"issues": [], "aria2c": [], "curl": [], "issues_nofsync": []}
        tools = list(times)
        for i in range(self.runs):
            for tool in tools[i % 4:] + tools[:i % 4]:  # rotate the order between runs
                if tool in ("issues", "issues_nofsync"):
                    lib = self.new_library("lib-many", "Many", urls)
                    extra = ["--no-fsync"] if tool == "issues_nofsync" else []
                    r = self.issues_download(lib, jobs=8, extra=extra)
                    verify(os.path.join(lib, "Many"), "issues download")
                    rm(lib)
                elif tool == "aria2c":
                    out = self.fresh("aria2c-many")
                    os.makedirs(out)
                    r = self.run(["aria2c", "-j8", "-x1", "-i", url_list, "-d", out,
                                  "--allow-overwrite=true", "--auto-file-renaming=false", "-q"]).check("aria2c")
                    verify(out, "aria2c")
                    rm(out)
                else:
                    out = self.fresh("curl-many")
                    os.makedirs(out)
                    r = self.run(["curl", "-s", "--remote-name-all", *urls], cwd=out).check("curl")
                    verify(out, "curl")
                    rm(out)
                times[tool].append(r.seconds)
                log(f"many run {i + 1}/{self.runs}: {tool} {r.seconds:.2f} s")
        shutil.rmtree(folder)
        return dict(count=count, size=size, layout="one issue with all assets",
                    **{k: stats(v) for k, v in times.items()})

    # 4: unpacking ------------------------------------------------------------------------------------

    def unpack(self, label, zip_name, expect_count, expect_bytes):
        src = os.path.join(self.www, zip_name)
        zip_size = os.path.getsize(src)
        url = self.nginx.url(zip_name)
        times = {"issues_unpack_on": [], "issues_no_unpack": [], "bsdtar": [], "unzip": []}
        tools = list(times)

        def verify(root, what):
            n, total = count_files(root)
            if n != expect_count or total != expect_bytes:
                raise BenchError(f"{what}: {n} files / {total} bytes in {root}, "
                                 f"expected {expect_count} / {expect_bytes}")

        for i in range(self.runs):
            for tool in tools[i % 4:] + tools[:i % 4]:
                if tool == "issues_unpack_on":
                    lib = self.new_library("lib-unzip", "Zip", [url], root=self.unpack_root())
                    r = self.issues_download(lib)
                    verify(os.path.join(lib, "Zip"), "issues download (unpack)")
                    rm(lib)
                elif tool == "issues_no_unpack":
                    lib = self.new_library("lib-zipfile", "Zip", [], [url], root=self.unpack_root())
                    r = self.issues_download(lib)
                    expect_file(os.path.join(lib, "Zip", zip_name), zip_size)
                    n, _ = count_files(os.path.join(lib, "Zip"))
                    if n != 1:
                        raise BenchError(f"issues download --no-unpack left {n} files, expected 1")
                    rm(lib)
                else:
                    out = self.fresh(tool, self.unpack_root())
                    os.makedirs(out)
                    cmd = ["bsdtar", "-xf", src, "-C", out] if tool == "bsdtar" else ["unzip", "-q", src, "-d", out]
                    r = self.run(cmd).check(tool)
                    verify(out, tool)
                    rm(out)
                times[tool].append(r.seconds)
                log(f"unpack {label} run {i + 1}/{self.runs}: {tool} {r.seconds:.2f} s")
        result = {k: stats(v) for k, v in times.items()}
        result["issues_unpack"] = result["issues_unpack_on"]["median"] - result["issues_no_unpack"]["median"]
        result.update(files=expect_count, bytes=expect_bytes, zip_bytes=zip_size)
        rm(src)
        return result

    def unpack_small(self):
        count = self.sizes["small_files"]
        log(f"unpack: building a ZIP of {count} small files")
        files, total = make_small_zip(os.path.join(self.www, "small-files.zip"), count)
        return self.unpack("small", "small-files.zip", files, total)

    def unpack_big(self):
        n, size = self.sizes["big_files"], self.sizes["big_file_size"]
        log(f"unpack: building a ZIP of {n} x {size // MiB} MiB")
        files, total = make_big_zip(os.path.join(self.www, "big-files.zip"), n, size)
        return self.unpack("big", "big-files.zip", files, total)

    # 5: library scale --------------------------------------------------------------------------------

    def scale(self, count):
        log(f"scale: generating a library of {count} issues")
        master = os.path.join(self.work, f"library-{count}")
        make_library(master, count)
        list_t, add_t, list_rss = [], [], []
        for i in range(self.runs):
            r = self.run(self.issues_cmd("list", "--library", master), stdout_to_null=True).check("issues list")
            list_t.append(r.seconds)
            list_rss.append(r.maxrss_kib)
            lib = self.fresh(f"lib-add-{count}")
            os.makedirs(lib)
            shutil.copy2(os.path.join(master, "library.json"), os.path.join(lib, "library.json"))
            r = self.run(self.issues_cmd("add", "Brand New Issue", "--date", "2026-11-22", "--library", lib)).check(
                "issues add")
            add_t.append(r.seconds)
            if i == 0:
                with open(os.path.join(lib, "library.json")) as f:
                    got = len(json.load(f)["issues"])
                if got != count + 1:
                    raise BenchError(f"issues add: library has {got} issues, expected {count + 1}")
            rm(lib)
            log(f"scale {count} run {i + 1}/{self.runs}: list {list_t[-1]:.3f} s, add {add_t[-1]:.3f} s")
        # Sanity check that list really listed everything (once, untimed).
        r = self.run(self.issues_cmd("list", "--json", "--library", master)).check("issues list --json")
        try:
            listed = len(json.loads(r.stdout))
        except (ValueError, TypeError) as e:
            raise BenchError(f"issues list --json: not a JSON array ({e})")
        if listed != count:
            raise BenchError(f"issues list --json printed {listed} issues, expected {count}")
        rm(master)
        return dict(count=count, list=stats(list_t), add=stats(add_t), list_rss_kib=stats(list_rss))


# --------------------------------------------------------------------------------------------------
# Report


def fmt_s(s):
    return f"{s * 1000:.0f} ms" if s < 1 else f"{s:.2f} s"


def fmt_mibs(size, seconds):
    return f"{size / MiB / seconds:,.0f} MiB/s"


def fmt_kib(kib):
    return f"{kib / 1024:.1f} MiB"


def met(ok):
    return "yes" if ok else "**NO**"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def filesystem_of(path):
    """'ext4 on /dev/vda' for the mount holding path (longest mount point that is a prefix)."""
    best = ("", "?", "?")
    try:
        with open("/proc/self/mounts") as f:
            for line in f:
                dev, mnt, fstype = line.split()[:3]
                mnt = mnt.replace("\\040", " ")
                if (path == mnt or path.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best[0]):
                    best = (mnt, fstype, dev)
    except OSError:
        pass
    return f"{best[1]} on {best[2]}"


def tool_version(cmd):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=10, env=ENV)
        text = (p.stdout or p.stderr).strip().splitlines()
        if not text:
            return "?"
        words = text[0].replace("nginx version: ", "").replace(" version", "").replace("/", " ").split()
        return " ".join(words[:2])
    except (OSError, subprocess.SubprocessError):
        return "not found"


def render(meta, results, errors, args):
    runs = args.runs
    lines = [f"# issues benchmark — {meta['date']}", ""]
    lines += [f"- Machine: `{meta['uname']}`, CPU: {meta['cpu']}, {meta['cores']} cores "
              f"({meta['cores_usable']} usable by this process)",
              f"- issues binary: `{meta['issues']}` (modified {meta['issues_mtime']})",
              f"- Data and downloads in a temp dir under `{meta['workdir']}`",
              f"- Mode: {'**quick** (small sizes, smoke run)' if args.quick else 'full'}; "
              f"{runs} run(s) per measurement, median shown (min–max in the details table)",
              f"- Tools: {meta['versions']['curl']}; {meta['versions']['aria2c']}; "
              f"{meta['versions']['bsdtar']}; {meta['versions']['unzip']}; {meta['versions']['nginx']}",
              ""]
    rows = []
    details = []

    def detail(name, st, extra=""):
        details.append(f"| {name} | {fmt_s(st['median'])} | {fmt_s(st['min'])} | {fmt_s(st['max'])} | {extra} |")

    r = results.get("large")
    if r:
        size = r["size"]
        ti, tc = r["issues"]["median"], r["curl"]["median"]
        ratio = tc / ti  # = throughput(issues) / throughput(curl)
        rows.append(f"| Large asset ({size // MiB} MiB), throughput | {fmt_mibs(size, ti)} | "
                    f"curl {fmt_mibs(size, tc)} | {ratio:.2f} | ≥ 1.0 | {met(ratio >= 1.0)} |")
        rss = r["issues_rss_kib"]["max"]
        rows.append(f"| Peak RSS during the {size // MiB} MiB download | {fmt_kib(rss)} | "
                    f"curl {fmt_kib(r['curl_rss_kib']['max'])} | — | < 64 MiB | {met(rss < RSS_TARGET_KIB)} |")
        detail(f"large: issues download ({size // MiB} MiB)", r["issues"],
               f"{fmt_mibs(size, ti)}; RSS max {fmt_kib(r['issues_rss_kib']['max'])}, "
               f"min {fmt_kib(r['issues_rss_kib']['min'])}")
        detail(f"large: curl -o ({size // MiB} MiB)", r["curl"],
               f"{fmt_mibs(size, tc)}; RSS max {fmt_kib(r['curl_rss_kib']['max'])}")
    r = results.get("many")
    if r:
        ti = r["issues"]["median"]
        best_name = min(("aria2c", "curl"), key=lambda k: r[k]["median"])
        tb = r[best_name]["median"]
        ratio = ti / tb
        label = "aria2c -j8" if best_name == "aria2c" else "curl (sequential)"
        other = "curl (sequential)" if best_name == "aria2c" else "aria2c -j8"
        other_t = r["curl" if best_name == "aria2c" else "aria2c"]["median"]
        rows.append(f"| Many assets ({r['count']} × {r['size'] // MiB} MiB), `--jobs 8`, wall time | {fmt_s(ti)} | "
                    f"{label} {fmt_s(tb)} ({other} {fmt_s(other_t)}) | {ratio:.2f} | ≤ 1.0 | {met(ratio <= 1.0)} |")
        if "issues_nofsync" in r:
            tn = r["issues_nofsync"]["median"]
            rows.append(f"| Many assets, `--jobs 8 --no-fsync` (no flush to disk, as curl and aria2c) | {fmt_s(tn)} | "
                        f"{label} {fmt_s(tb)} | {tn / tb:.2f} | — (info) | — |")
        total = r["count"] * r["size"]
        detail(f"many: issues download --jobs 8 ({r['count']} assets)", r["issues"], fmt_mibs(total, ti))
        if "issues_nofsync" in r:
            detail("many: issues download --jobs 8 --no-fsync", r["issues_nofsync"], fmt_mibs(total, r["issues_nofsync"]["median"]))
        detail("many: aria2c -j8 -x1 -i LIST", r["aria2c"], fmt_mibs(total, r["aria2c"]["median"]))
        detail("many: curl --remote-name-all (one process)", r["curl"], fmt_mibs(total, r["curl"]["median"]))
    for key, label, targeted in (("unpack_small", "Unpack ZIP of {files:,} small files ({zip} MiB zip)", True),
                                 ("unpack_big", "Unpack ZIP of {files} large files ({bytes} MiB → {zip} MiB zip)", False)):
        r = results.get(key)
        if not r:
            continue
        name = label.format(files=r["files"], zip=f"{r['zip_bytes'] / MiB:.1f}", bytes=r["bytes"] // MiB)
        tu, tb, tz = r["issues_unpack"], r["bsdtar"]["median"], r["unzip"]["median"]
        ratio = tu / tb
        if targeted:
            target, ok = "≤ 1.1", met(ratio <= 1.1)
        else:
            target, ok = "— (info)", "—"
        rows.append(f"| {name} | {fmt_s(tu)} | bsdtar {fmt_s(tb)} (unzip {fmt_s(tz)}) | {ratio:.2f} | {target} | {ok} |")
        short = key.replace("unpack_", "")
        detail(f"unpack {short}: issues download (unpack on)", r["issues_unpack_on"])
        detail(f"unpack {short}: issues download (--no-unpack)", r["issues_no_unpack"])
        details.append(f"| unpack {short}: issues unpack = difference of medians | {fmt_s(tu)} | | | |")
        detail(f"unpack {short}: bsdtar -xf", r["bsdtar"])
        detail(f"unpack {short}: unzip -q", r["unzip"])
    for key in sorted((k for k in results if k.startswith("scale_")), key=lambda k: results[k]["count"]):
        r = results[key]
        for cmd in ("list", "add"):
            t = r[cmd]["median"]
            rows.append(f"| `issues {cmd}`, library of {r['count']:,} issues | {fmt_s(t)} | — | — | < 1 s | "
                        f"{met(t < SCALE_TARGET_S)} |")
            extra = f"RSS max {fmt_kib(r['list_rss_kib']['max'])}" if cmd == "list" else ""
            detail(f"scale: issues {cmd} ({r['count']:,} issues)", r[cmd], extra)
    for name, message in errors:
        rows.append(f"| {name} | **could not run** | — | — | — | — |")

    lines += ["| benchmark | issues | reference | ratio | target | met? |",
              "|---|---|---|---|---|---|", *rows, ""]
    if errors:
        lines += ["## Errors", ""]
        for name, message in errors:
            lines += [f"- **{name}**: " + message.replace("\n", "\n  "), ""]
    lines += ["## Details (wall time per command)", "",
              "| measurement | median | min | max | notes |", "|---|---|---|---|---|", *details, ""]
    lines += ["## Notes", "",
              "- All downloads are from one local nginx (sendfile on, access_log off) on 127.0.0.1. The files "
              "it serves were just written, so they come from the page cache, not the disk (dropping the cache "
              "needs root and is not attempted); downloaded files are written to the temp dir's file system.",
              "- Times are wall clock (`time.perf_counter` around spawning and reaping each process), so they "
              "include process start-up; for `issues` also opening the library and committing the manifest. "
              "Setup (`issues add`, `add-asset`, fresh folders) is not timed. The order of the tools rotates "
              "between runs.",
              "- **Large asset**: `curl -s -o FILE URL` vs `issues download` into a fresh library holding one "
              "issue with that asset. Ratio = issues' throughput / curl's (MiB = 2^20 bytes). Size is checked "
              "on every run, SHA-256 on the first.",
              "- **Peak RSS**: `ru_maxrss` from `os.wait4` on the process spawned (the largest over the runs).",
              "- **Many assets**: `issues download` flushes every finished file to disk (fsync) before recording it "
              "as downloaded, so that a power cut cannot leave a 'downloaded' file with missing bytes; curl and "
              "aria2c do not flush. The `--no-fsync` row shows the same run without the flush.\n"
              "- **Many assets**: one issue holding all the assets, `issues download --jobs 8`, vs "
              "`aria2c -j8 -x1 -i LIST -d DIR --allow-overwrite=true --auto-file-renaming=false -q`, vs one "
              "`curl -s --remote-name-all URL...` process fetching them in sequence over one connection. "
              "Ratio = issues / the faster of the two. File count and total size are checked.",
              "- **Unpack** runs its libraries and extraction folders on /dev/shm (tmpfs) unless `--unpack-on-disk`: on "
              "this shared virtual disk the same extraction took 0.6–6 s from run to run (ext4 free-inode scans after "
              "earlier deletions), which drowned the extractors' difference. The ZIP itself is served by nginx as usual.\n"
              "- **Unpack**: issues' unpack time = median of `issues download` of the ZIP (unpacked into the "
              "issue folder) − median of `issues download` of the same ZIP added with `--no-unpack`, both into "
              "fresh libraries; so it is a difference of two noisy numbers. Compared with `bsdtar -xf ZIP -C DIR` "
              "and `unzip -q ZIP -d DIR` into fresh folders, reading the ZIP from the page cache. Ratio = "
              "issues' unpack / bsdtar. File count and total size of every extraction are checked. Only the "
              "ZIP of many small files has a target in SPEC.md; the large-file ZIP is informational.",
              "- **Library scale**: library.json generated directly with N issues (no assets); `issues list` "
              "with stdout to /dev/null, and `issues add NEW --date 2026-11-22` on a fresh copy of the library "
              "each run (so the size stays N). `issues list --json` is checked once to list all N.",
              "- The machine may be shared; numbers are noisy. Compare ratios from the same run.",
              ""]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run in under a minute")
    parser.add_argument("--issues", default=os.path.join(REPO_DIR, ".build", "release", "issues"),
                        help="the issues binary (default: .build/release/issues, what `make release` builds)")
    parser.add_argument("--runs", type=int, default=3, help="runs per measurement; the median is reported")
    parser.add_argument("--workdir", help="parent folder of the temporary data folder (default: /tmp)")
    parser.add_argument("--only", help="comma-separated subset: large,many,unpack,scale")
    parser.add_argument("--unpack-on-disk", action="store_true",
                        help="extract on the work folder's disk instead of /dev/shm (noisy on shared volumes)")
    parser.add_argument("--output", default=RESULTS_DIR, help="where to write latest.md/latest.json")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    issues = os.path.abspath(args.issues)
    if not (os.path.isfile(issues) and os.access(issues, os.X_OK)):
        parser.error(f"no issues binary at {issues} (run `make release`, or pass --issues PATH)")
    only = set(args.only.split(",")) if args.only else {"large", "many", "unpack", "scale"}
    unknown = only - {"large", "many", "unpack", "scale"}
    if unknown:
        parser.error(f"unknown --only item(s): {', '.join(sorted(unknown))}")
    missing = [t for t in ("nginx", "curl", "aria2c", "bsdtar", "unzip") if not shutil.which(t)
               and not (t == "nginx" and os.path.exists("/usr/sbin/nginx"))]
    if missing:
        print(f"bench: missing tools: {', '.join(missing)} (run `make bench-deps`)", file=sys.stderr)
        return 1

    def on_signal(signum, frame):
        raise Terminated(signum)

    signal.signal(signal.SIGINT, signal.default_int_handler)  # even if started with SIGINT ignored
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)

    sizes = QUICK if args.quick else FULL
    meta = dict(date=datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
                uname=" ".join(platform.uname()[i] for i in (0, 2, 4)),
                cpu=cpu_model(), cores=os.cpu_count(), cores_usable=len(os.sched_getaffinity(0)),
                issues=issues,
                issues_mtime=datetime.datetime.fromtimestamp(os.path.getmtime(issues)).strftime("%Y-%m-%d %H:%M"),
                quick=args.quick, runs=args.runs, sizes=sizes,
                versions={"curl": tool_version(["curl", "--version"]),
                          "aria2c": tool_version(["aria2c", "--version"]),
                          "bsdtar": tool_version(["bsdtar", "--version"]),
                          "unzip": tool_version(["unzip", "-v"]),
                          "nginx": tool_version(["nginx", "-v"])})
    try:
        meta["uname"] = subprocess.run(["uname", "-srm"], capture_output=True, text=True).stdout.strip()
    except OSError:
        pass

    work = tempfile.mkdtemp(prefix="issues-bench-", dir=args.workdir)
    log(f"work dir {work}")
    meta["workdir"] = f"{os.path.dirname(work)} ({filesystem_of(work)})"
    www = os.path.join(work, "www")
    os.makedirs(www)
    with open(os.path.join(www, "ready.txt"), "w") as f:
        f.write("ok\n")
    nginx = Nginx(work, www)
    results, errors = {}, []
    started = time.monotonic()
    try:
        nginx.start()
        log(f"nginx on 127.0.0.1:{nginx.port}")
        bench = Bench(args, sizes, work, nginx, issues)
        # Warm up: page in the binary and its libraries once.
        bench.run([issues, "--help"])
        bench.run([issues, "list", "--library", os.path.join(work, "warmup-library")])
        plan = []
        if "large" in only:
            plan.append(("large", "Large asset + peak RSS", bench.large))
        if "many" in only:
            plan.append(("many", "Many assets", bench.many))
        if "unpack" in only:
            plan.append(("unpack_small", "Unpack ZIP of small files", bench.unpack_small))
            plan.append(("unpack_big", "Unpack ZIP of large files", bench.unpack_big))
        if "scale" in only:
            for count in sizes["library_sizes"]:
                plan.append((f"scale_{count}", f"Library scale ({count:,} issues)",
                             lambda c=count: bench.scale(c)))
        for key, name, fn in plan:
            try:
                results[key] = fn()
            except (BenchError, OSError, subprocess.SubprocessError, ValueError) as e:
                log(f"{name}: could not run: {e}")
                errors.append((name, str(e)))
    except (KeyboardInterrupt, Terminated):
        log("interrupted; stopping nginx and removing the work dir")
        nginx.stop()
        shutil.rmtree(work, ignore_errors=True)
        return 130
    except BenchError as e:  # nginx did not start
        errors.append(("setup", str(e)))
    finally:
        nginx.stop()
        shutil.rmtree(work, ignore_errors=True)
        shm = getattr(locals().get("bench"), "_shm", None)
        if shm:
            shutil.rmtree(shm, ignore_errors=True)

    meta["elapsed_s"] = round(time.monotonic() - started, 1)
    report = render(meta, results, errors, args)
    report += f"\n_Total bench time: {meta['elapsed_s']} s._\n"
    print(report)
    os.makedirs(args.output, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S") + ("-quick" if args.quick else "")
    data = dict(meta=meta, results=results, errors=[dict(benchmark=n, error=m) for n, m in errors])
    for name in ("latest", stamp):
        with open(os.path.join(args.output, f"{name}.md"), "w") as f:
            f.write(report)
        with open(os.path.join(args.output, f"{name}.json"), "w") as f:
            json.dump(data, f, indent=2)
    log(f"wrote {os.path.join(args.output, 'latest.md')} and latest.json")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
