"""The resident service (`issues serve --no-http`): resident memory and CPU while idle with 1,000
subscriptions, and a round of 200 due feeds on 200 different hosts, every one answering 304. SPEC.md
"Performance targets": idle <= 32 MiB and no wake-ups between due times; the round <= 5 s."""

import json
import os
import signal
import socket
import subprocess
import time
import urllib.parse

from harness import BenchError, Nginx, fmt_kib, log, met, rm, stats

ONLY = ("service",)
NEEDS_NGINX = False  # its own nginx: one listening address per host (127.0.0.1 … 127.0.0.200)
TOOLS = ("nginx",)
FULL = dict(service_subscriptions=1000, service_round=200, service_idle_s=60)
QUICK = dict(service_subscriptions=200, service_round=50, service_idle_s=10)

IDLE_RSS_TARGET_KIB = 32 * 1024
ROUND_TARGET_S = 5.0


def plan(ctx, only):
    if "service" not in only:
        return []
    return [("service", "Service: idle, and a round of due feeds", lambda: service(ctx))]


def small_feed(n, base):
    items = "".join(
        f"<item><guid>feed-{n}-{i}</guid><title>Feed {n} episode {i}</title>"
        f"<pubDate>Mon, {1 + i:02d} Nov 2026 10:00:00 GMT</pubDate>"
        f"<enclosure url=\"{base}/media/{n}/{i}.mp3\" type=\"audio/mpeg\" length=\"1000\"/></item>"
        for i in range(10))
    return f"<rss version=\"2.0\"><channel><title>Feed {n}</title>{items}</channel></rss>".encode()


class NotifySocket:
    """systemd's end of the notify protocol: READY=1 tells when the service is up."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.sock.settimeout(0.1)

    def wait_for(self, message, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if message in self.sock.recv(4096).decode().split("\n"):
                    return True
            except socket.timeout:
                pass
        return False

    def close(self):
        self.sock.close()
        rm(self.path)


def proc_cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def proc_switches(pid):
    """Context switches of each thread, by thread id: how often each woke up."""
    counts = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/status") as f:
                counts[task] = sum(int(line.split()[1]) for line in f
                                   if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")))
        except OSError:
            pass
    return counts


def switches_between(before, after):
    """Wake-ups between two samples: each thread's growth (a thread born in between counts from 0)."""
    return sum(count - before.get(tid, 0) for tid, count in after.items())


def proc_rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        values = {line.split(":")[0]: line.split()[1] for line in f if line.startswith(("VmRSS", "VmHWM"))}
    return int(values["VmRSS"]), int(values["VmHWM"])


def start_service(ctx, lib, notify_path, log_path):
    env = dict(os.environ, NOTIFY_SOCKET=notify_path)
    env.pop("WATCHDOG_USEC", None)
    err = open(log_path, "w")
    proc = subprocess.Popen(ctx.issues_cmd("serve", "--no-http", "--library", lib), env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
    err.close()
    return proc


def stop_service(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        code = proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise BenchError("issues serve did not stop within 30 s of SIGTERM")
    if code != 0:
        raise BenchError(f"issues serve exited with {code} after SIGTERM")


def service(ctx):
    count, round_count = ctx.sizes["service_subscriptions"], ctx.sizes["service_round"]
    idle_s = ctx.sizes["service_idle_s"]
    work = ctx.fresh("service")
    www = os.path.join(work, "www")
    os.makedirs(www)
    with open(os.path.join(www, "ready.txt"), "w") as f:
        f.write("ok\n")
    nginx = Nginx(work, www)
    # One listening address per host, so that the per-host rule (2 at a time, 1 s apart) does not
    # serialise the round: 200 podcasts usually live on 200 hosts.
    nginx.extra_listen = [f"127.0.0.{h}" for h in range(2, round_count + 1)]
    nginx.start()
    try:
        hosts = [f"127.0.0.{1 + n % round_count}" for n in range(count)]
        lines = []
        for n in range(count):
            base = f"http://{hosts[n]}:{nginx.port}"
            with open(os.path.join(www, f"feed-{n:04d}.xml"), "wb") as f:
                f.write(small_feed(n, base))
            lines.append(f'<outline type="rss" text="Feed {n}" xmlUrl="{base}/feed-{n:04d}.xml"/>')
        opml = os.path.join(work, "feeds.opml")
        with open(opml, "w") as f:
            f.write('<?xml version="1.0"?><opml version="2.0"><head><title>bench</title></head><body>'
                    + "".join(lines) + "</body></opml>")
        lib = os.path.join(work, "library")
        r = ctx.run(ctx.issues_cmd("subscribe", "--opml", opml, "--initial", "0", "--no-download",
                                   "--library", lib)).check("issues subscribe --opml")
        log(f"service: {count} subscriptions made in {r.seconds:.1f} s")
        # One subscription per host for the round: the per-host rule would space two on one host a second apart.
        listed = json.loads(ctx.run(ctx.issues_cmd("subscriptions", "--json", "--library", lib)).check(
            "issues subscriptions").stdout)
        by_host = {}
        for sub in listed:
            by_host.setdefault(urllib.parse.urlsplit(sub["url"]).hostname, sub["id"])
        one_per_host = list(by_host.values())[:round_count]
        if len(one_per_host) < round_count:
            raise BenchError(f"service: only {len(one_per_host)} hosts among the subscriptions")

        idle_rss, idle_hwm, idle_cpu_ms, idle_wakeups, rounds = [], [], [], [], []
        hz = os.sysconf("SC_CLK_TCK")
        for i in range(ctx.runs):
            # Idle: every subscription was just checked, so the next due time is at least 15 minutes away.
            notify = NotifySocket(os.path.join(work, "notify"))
            proc = start_service(ctx, lib, notify.path, os.path.join(work, f"idle-{i}.log"))
            try:
                if not notify.wait_for("READY=1", 60):
                    raise BenchError("issues serve --no-http did not say READY=1 within 60 s")
                time.sleep(2)  # let start-up settle
                cpu0, sw0 = proc_cpu_ticks(proc.pid), proc_switches(proc.pid)
                time.sleep(idle_s)
                cpu1, sw1 = proc_cpu_ticks(proc.pid), proc_switches(proc.pid)
                rss, hwm = proc_rss_kib(proc.pid)
                idle_rss.append(rss)
                idle_hwm.append(hwm)
                idle_cpu_ms.append((cpu1 - cpu0) * 1000 / hz)
                idle_wakeups.append(switches_between(sw0, sw1))
            finally:
                stop_service(proc)
                notify.close()
            log(f"service run {i + 1}/{ctx.runs}: idle {idle_s} s: RSS {fmt_kib(rss)} (peak {fmt_kib(hwm)}), "
                f"CPU {idle_cpu_ms[-1]:.0f} ms, {idle_wakeups[-1]} context switches")

            # A round: the last check of `round_count` subscriptions on as many hosts is forgotten, so all are
            # due at start; every feed answers 304. Timed from READY=1 to the last check's log line.
            status = os.path.join(lib, ".sync")
            for sub_id in one_per_host:
                rm(os.path.join(status, f"{sub_id}.json"))
            notify = NotifySocket(os.path.join(work, "notify"))
            log_path = os.path.join(work, f"round-{i}.log")
            proc = start_service(ctx, lib, notify.path, log_path)
            try:
                if not notify.wait_for("READY=1", 60):
                    raise BenchError("issues serve --no-http did not say READY=1 within 60 s")
                start = time.monotonic()
                deadline = start + 120
                while time.monotonic() < deadline:
                    with open(log_path) as f:
                        done = f.read().count(": unchanged; next check")
                    if done >= round_count:
                        break
                    time.sleep(0.02)
                else:
                    raise BenchError(f"service round: {done} of {round_count} checks in 120 s")
                rounds.append(time.monotonic() - start)
            finally:
                stop_service(proc)
                notify.close()
            log(f"service run {i + 1}/{ctx.runs}: round of {round_count} due feeds (304) {rounds[-1]:.3f} s")
        return dict(count=count, round_count=round_count, idle_s=idle_s, idle_rss=stats(idle_rss),
                    idle_hwm=stats(idle_hwm), idle_cpu_ms=stats(idle_cpu_ms), idle_wakeups=stats(idle_wakeups),
                    round=stats(rounds))
    finally:
        nginx.stop()
        rm(work)


def render(results, report):
    if "service" not in results:
        return
    r = results["service"]
    rss = r["idle_rss"]
    report.row(f"`issues serve --no-http` idle with {r['count']:,} subscriptions: resident memory",
               f"{fmt_kib(rss['median'])} ({fmt_kib(rss['min'])}–{fmt_kib(rss['max'])}); peak {fmt_kib(r['idle_hwm']['max'])}",
               target="≤ 32 MiB", ok=met(rss["max"] <= IDLE_RSS_TARGET_KIB))
    report.row(f"the same, CPU and wake-ups over {r['idle_s']} s idle",
               f"{r['idle_cpu_ms']['median']:.0f} ms CPU, {r['idle_wakeups']['median']:.0f} context switches",
               target="no wake-ups between due times", ok="— (read the figures)")
    st = r["round"]
    report.row(f"a round of {r['round_count']} due feeds on {r['round_count']} hosts, all 304",
               f"{st['median']:.3f} s ({st['min']:.3f}–{st['max']:.3f})", target=f"≤ {ROUND_TARGET_S:.0f} s",
               ok=met(st["median"] <= ROUND_TARGET_S))


NOTES = [
    "- **Service**: 1,000 subscriptions to small RSS feeds (10 items each) on one nginx listening on "
    "127.0.0.1 … 127.0.0.200 (so 200 hosts), made with `issues subscribe --opml --initial 0 --no-download` "
    "(untimed). Idle: `issues serve --no-http` with a `NOTIFY_SOCKET`; from 2 s after READY=1, its CPU time "
    "(utime+stime) and context switches of all its threads over the idle window, then its VmRSS and VmHWM. "
    "Round: the last-checked status of 200 subscriptions on 200 different hosts is deleted, so all are due at "
    "start; timed from READY=1 until the log shows 200 `unchanged` checks (every feed answers 304).",
]
