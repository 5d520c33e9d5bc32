"""Shared harness of the benchmark (see bench/README.md): running and timing processes, statistics,
the private nginx, test data helpers, the per-run context handed to every benchmark, and the pieces of
the Markdown report. Python standard library only.

A benchmark module (large.py, many.py, unpack.py, catalog.py) exposes:

- ``ONLY``: the ``--only`` names it answers to, and ``NEEDS_NGINX``/``TOOLS``: what it needs;
- ``FULL`` / ``QUICK``: its sizes (merged into ``ctx.sizes``);
- ``plan(ctx, only)``: ``[(result key, title, function)]``, each function returning a JSON-able dict;
- ``render(results, report)``: adds its rows, details and notes to a ``Report``.
"""

import grp
import hashlib
import os
import platform
import pwd
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_DIR = os.path.dirname(BENCH_DIR)
RESULTS_DIR = os.path.join(BENCH_DIR, "results")
MiB = 1 << 20
GiB = 1 << 30


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
            # The lines that say what failed, wherever they are in a long output (a download of 2,000 files).
            problems = [line for line in self.stderr.splitlines() if "error" in line.lower() or "failed" in line.lower()]
            raise BenchError(f"{what} exited with {self.returncode}: {shell_line(self.cmd)}\n"
                             + (f"failures: {tail(chr(10).join(problems[:20]))}\n" if problems else "")
                             + f"stdout: {tail(self.stdout)}\nstderr: {tail(self.stderr)}")
        return self


def tail(text, limit=1500):
    text = text.strip()
    return text if len(text) <= limit else "..." + text[-limit:]


def shell_line(cmd):
    if len(cmd) > 12:
        return " ".join(shlex.quote(c) for c in cmd[:10]) + f" ... ({len(cmd) - 10} more args)"
    return " ".join(shlex.quote(c) for c in cmd)


LAUNCHER = os.path.join(BENCH_DIR, "launch.py")


def run(cmd, cwd=None, stdout_to_null=False, stdout_path=None, stdin_path=None, scratch=None):
    """Runs `cmd` through launch.py, which times it with perf_counter from just before the fork to just
    after the reap and reports its peak resident set (ru_maxrss from os.wait4, KiB on Linux) without
    the benchmark process's own memory (see launch.py).

    stdout and stderr go to files (no pipe can fill up and stall the child); stdout to /dev/null when
    asked, or to `stdout_path` (kept, not read back). stdin is /dev/null unless `stdin_path` is given.
    The launcher runs in its own session; on an exception (Ctrl-C, SIGTERM) its group is killed.
    """
    scratch = scratch or tempfile.gettempdir()
    out_fd, out_path = tempfile.mkstemp(prefix="out-", dir=scratch)
    err_fd, err_path = tempfile.mkstemp(prefix="err-", dir=scratch)
    null = open(os.devnull, "wb") if stdout_to_null else None
    sink = open(stdout_path, "wb") if stdout_path else None
    source = open(stdin_path, "rb") if stdin_path else None
    report_r, report_w = os.pipe()
    try:
        # Flush what earlier runs left dirty (thousands of extracted files, deleted trees, an imported
        # catalog), so that no command is charged for another's writeback; the disk here is a shared
        # virtual volume.
        os.sync()
        proc = subprocess.Popen([sys.executable, "-S", "-E", LAUNCHER, str(report_w), *cmd], cwd=cwd, env=ENV,
                                stdin=source or subprocess.DEVNULL, stdout=null or sink or out_fd,
                                stderr=err_fd, pass_fds=(report_w,), start_new_session=True)
        os.close(report_w)
        report_w = None
        try:
            with os.fdopen(report_r, "rb") as f:
                report_r = None
                line = f.read().decode()
            proc.wait()
        except BaseException:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
            raise
        with open(err_path, "rb") as f:
            stderr = f.read().decode("utf-8", "replace")
        if proc.returncode != 0 or len(line.split()) != 3:
            raise BenchError(f"launch.py failed ({proc.returncode}) for {shell_line(cmd)}: {tail(stderr)}")
        seconds, returncode, maxrss = line.split()
        with open(out_path, "rb") as f:
            stdout = f.read().decode("utf-8", "replace")
        return Result(cmd, float(seconds), int(returncode), int(maxrss), stdout, stderr)
    finally:
        for fd in (out_fd, err_fd, report_r, report_w):
            if fd is not None:
                os.close(fd)
        os.unlink(out_path)
        os.unlink(err_path)
        for f in (null, sink, source):
            if f:
                f.close()


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


# --------------------------------------------------------------------------------------------------
# nginx


# nginx's `limit_rate` for the /throttled/ location: bytes per second per connection.
THROTTLE_PER_CONNECTION = 2 * 1024 * 1024


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Nginx:
    def __init__(self, root, www):
        self.root, self.www = root, www
        self.proc = None
        self.port = None
        self.extra_listen = []  # more loopback addresses to listen on, as other hosts (the service bench)
        # (certificate, key) PEM paths: also serve HTTPS with HTTP/2 (ALPN h2, then http/1.1) on `tls_port`
        # (the small-assets bench); set before start().
        self.tls = None
        self.tls_port = None

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
            self.tls_port = free_port() if self.tls else None
            tls_server = ""
            if self.tls:
                # `listen ... ssl http2` (nginx 1.22 of Debian 12; later versions also take `http2 on;`).
                tls_server = f"""
    server {{
        listen 127.0.0.1:{self.tls_port} ssl http2;
        ssl_certificate {self.tls[0]};
        ssl_certificate_key {self.tls[1]};
        root {self.www};
        location / {{ }}
    }}"""
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
        {"".join(f"listen {a}:{self.port}; " for a in self.extra_listen)}
        root {self.www};
        location / {{ }}
        # A publisher's CDN that caps each connection (the segments benchmark).
        location /throttled/ {{ alias {self.www}/; limit_rate {THROTTLE_PER_CONNECTION}; }}
    }}{tls_server}
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

    def tls_url(self, name):
        return f"https://127.0.0.1:{self.tls_port}/{name}"

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
# The context every benchmark runs in


class Context:
    """One bench run: options, sizes, the work folder, nginx (None when no selected benchmark needs
    it), the issues binary, and helpers to run it in fresh libraries."""

    def __init__(self, args, sizes, work, nginx, issues):
        self.args, self.sizes, self.work, self.nginx, self.issues = args, sizes, work, nginx, issues
        self.www = os.path.join(work, "www")
        self.runs = args.runs
        self.scratch = os.path.join(work, "scratch")
        os.makedirs(self.scratch, exist_ok=True)
        self.counter = 0
        self.cleanup = []  # folders outside `work` (tmpfs) removed at the end, also on error

    def fresh(self, label, root=None):
        self.counter += 1
        return os.path.join(root or self.work, f"{label}-{self.counter}")

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
        # Covers have a row of their own (covers.py): the download rows time the engine alone.
        extra = tuple(extra) + (() if "--no-covers" in extra else ("--no-covers",))
        cmd = self.issues_cmd("download", "--library", lib, *extra)
        if jobs:
            cmd += ["--jobs", str(jobs)]
        return self.run(cmd).check("issues download")


# --------------------------------------------------------------------------------------------------
# Report


def fmt_s(s):
    return f"{s * 1000:.0f} ms" if s < 1 else f"{s:.2f} s"


def fmt_mibs(size, seconds):
    return f"{size / MiB / seconds:,.0f} MiB/s"


def fmt_kib(kib):
    return f"{kib / 1024:.1f} MiB"


def fmt_bytes(n):
    if n >= GiB:
        return f"{n / GiB:.2f} GiB"
    if n >= MiB:
        return f"{n / MiB:.1f} MiB"
    return f"{n / 1024:.0f} KiB"


def met(ok):
    return "yes" if ok else "**NO**"


class Report:
    """The rows of the main table, the details table and the notes, filled in by each benchmark's
    `render`."""

    def __init__(self):
        self.rows, self.details, self.notes = [], [], []

    def row(self, name, issues, reference="—", ratio="—", target="—", ok="—"):
        self.rows.append(f"| {name} | {issues} | {reference} | {ratio} | {target} | {ok} |")

    def detail(self, name, st, extra=""):
        self.details.append(f"| {name} | {fmt_s(st['median'])} | {fmt_s(st['min'])} | {fmt_s(st['max'])} | {extra} |")


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
