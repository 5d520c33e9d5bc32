"""The kill -9 soak (`make soak`): for a bounded time, rounds of downloads (some segmented), unpacks of
ZIPs, removals, syncs of a feed and prunes run together against a private nginx, and random ones are
killed with SIGKILL at random moments. After each round the library is resumed, every available
issue's files are checked by SHA-256 against what nginx serves, and `issues verify` must be clean.

Prints a summary (rounds, kills, issues and files verified) and exits 1 on any mismatch, a `verify`
that is not clean, an issue left unfinished, a command that crashed (a signal other than our SIGKILL,
an exit status other than 0 or 1) or one that hung. Python standard library only.

Environment / options: SOAK_SECONDS (--seconds, default 600), SOAK_SEED (--seed), --issues BINARY,
--keep (leave the work folder for a look afterwards; it is always kept after a failure).
"""

import argparse
import hashlib
import io
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "bench"))
sys.dont_write_bytecode = True  # no __pycache__ left in bench/
from harness import Nginx, child_env  # noqa: E402

MiB = 1 << 20
PUBLICATION = "Soak"
FEED = "feed.xml"
# A command not killed must end within this long (a hang is a finding, not something to wait out).
COMMAND_LIMIT = 240


def log(message):
    print(f"[soak] {message}", file=sys.stderr, flush=True)


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def file_sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class Content:
    """What nginx serves, and what each URL must become in an issue's folder: a plain file's SHA-256, or
    a ZIP's entries (relative path -> SHA-256)."""

    def __init__(self, www, rng):
        self.www, self.plain, self.zips, self.served = www, {}, {}, {}
        os.makedirs(www, exist_ok=True)
        with open(os.path.join(www, "ready.txt"), "w") as f:
            f.write("ok\n")
        for i in range(3):  # segmented: large enough for four ranges of the 4 MiB minimum
            self._plain(f"big-{i}.bin", rng.randbytes(20 * MiB + rng.randrange(MiB)))
        for i in range(5):
            self._plain(f"plain-{i}.pdf", rng.randbytes(MiB + rng.randrange(2 * MiB)))
        for i in range(4):
            self._zip(f"pages-{i}.zip", rng, i)

    def _plain(self, name, data):
        with open(os.path.join(self.www, name), "wb") as f:
            f.write(data)
        self.plain[name] = self.served[name] = sha256(data)

    def _zip(self, name, rng, seed):
        entries = {}
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as z:
            for j in range(200):
                data = (f"page {j} of {name}\n".encode() * rng.randrange(20, 200)) + rng.randbytes(64)
                path = f"pages/{j % 10}/page-{seed}-{j:03d}.html"
                z.writestr(path, data)
                entries[path] = sha256(data)
            data = rng.randbytes(3 * MiB)
            z.writestr("media/film.bin", data)
            entries["media/film.bin"] = sha256(data)
        with open(os.path.join(self.www, name), "wb") as f:
            f.write(buffer.getvalue())
        self.zips[name] = entries
        self.served[name] = sha256(buffer.getvalue())


def write_feed(www, base_url, items):
    """An RSS 2.0 feed of `items` ((guid, title, day, file name)), replaced whole (nginx never serves half)."""
    entries = "".join(
        f"<item><title>{title}</title><guid>{guid}</guid>"
        f"<pubDate>{time.strftime('%a, %d %b %Y 12:00:00 GMT', time.gmtime(day * 86400))}</pubDate>"
        f'<enclosure url="{base_url}/{name}" length="{os.path.getsize(os.path.join(www, name))}" '
        f'type="application/octet-stream"/></item>'
        for guid, title, day, name in items)
    text = f'<?xml version="1.0"?><rss version="2.0"><channel><title>Soak Feed</title>{entries}</channel></rss>'
    temporary = os.path.join(www, FEED + ".tmp")
    with open(temporary, "w") as f:
        f.write(text)
    os.rename(temporary, os.path.join(www, FEED))


class Soak:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.work = tempfile.mkdtemp(prefix="issues-soak-")
        self.lib = os.path.join(self.work, "library")
        self.www = os.path.join(self.work, "www")
        self.content = Content(self.www, self.rng)
        self.nginx = Nginx(self.work, self.www)
        self.feed_items = []
        self.day = 20_000  # days since 1970: 2024-10-04, moving on a day per issue
        self.counts = dict(rounds=0, commands=0, kills=0, issues_verified=0, files_verified=0, failed_exits=0,
                           removals_finished=0)
        self.failures = []
        self.killed = {}  # kills by subcommand

    # -- running issues

    def issues(self, *args, check=True):
        try:
            r = subprocess.run([self.args.issues, args[0], "--library", self.lib, *args[1:]], env=child_env(),
                               stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=COMMAND_LIMIT)
        except subprocess.TimeoutExpired:
            self.fail(f"`issues {' '.join(args)}` hung for {COMMAND_LIMIT} s")
            return subprocess.CompletedProcess(args, -1, "", "")
        if check and r.returncode != 0:
            self.fail(f"`issues {' '.join(args)}` exited {r.returncode}: {r.stderr.strip()[-2000:]}")
        return r

    def fail(self, message):
        log(f"FAIL: {message}")
        self.failures.append(message)

    def next_day(self):
        self.day += 1
        return time.strftime("%Y-%m-%d", time.gmtime(self.day * 86400))

    # -- one round

    def new_issues(self, round_number):
        """Adds this round's issues: some with a large file for segments, the others ZIPs and plain files."""
        segmented, plain = [], []
        for k in range(self.rng.randrange(2, 5)):
            name = f"Soak {round_number:04d}-{k}"
            if k == 0:
                urls = [self.nginx.url(f"throttled/big-{self.rng.randrange(3)}.bin")]
                segmented.append(name)
            else:
                urls = [self.nginx.url(self.rng.choice(list(self.content.zips)))]
                if self.rng.random() < 0.6:
                    urls.append(self.nginx.url(self.rng.choice(list(self.content.plain))))
                plain.append(name)
            self.issues("add", name, "--date", self.next_day(), "--publication", PUBLICATION,
                        *[a for url in urls for a in ("--asset", url)])
        # The feed gains an item or two each round: the sync adds them as issues and downloads them.
        for _ in range(self.rng.randrange(1, 3)):
            n = len(self.feed_items)
            name = self.rng.choice(list(self.content.zips) + list(self.content.plain))
            self.feed_items.append((f"soak-item-{n}", f"Feed item {n}", self.day, name))
            self.day += 1
        write_feed(self.www, self.nginx.url("").rstrip("/"), self.feed_items)
        return segmented, plain

    def listed(self):
        r = self.issues("list", "--json")
        try:
            value = json.loads(r.stdout or "[]")
        except json.JSONDecodeError:
            self.fail(f"`issues list --json` printed no JSON: {r.stdout[:500]!r}")
            return []
        return value if isinstance(value, list) else value.get("issues", [])

    def commands(self, segmented, plain):
        names = [i["name"] for i in self.listed()]
        old = [n for n in names if n not in segmented + plain]
        chosen = [
            ["download", "--segments", "4", "--no-covers", *segmented],
            ["download", "--no-covers", "--jobs", "4", *plain],
            ["sync", "--no-covers"],
            ["prune", "--keep", str(self.rng.randrange(4, 9))],
            ["list"],
        ]
        if old:
            chosen.append(["remove", self.rng.choice(old)])
        if self.rng.random() < 0.5:
            chosen.append(["add", f"Soak late {self.day}", "--date", self.next_day(), "--publication", PUBLICATION,
                           "--asset", self.nginx.url(self.rng.choice(list(self.content.zips)))])
        return chosen

    def run_round(self, round_number):
        segmented, plain = self.new_issues(round_number)
        running = []
        for args in self.commands(segmented, plain):
            cmd = [self.args.issues, args[0], "--library", self.lib, *args[1:]]
            p = subprocess.Popen(cmd, env=child_env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
            # Most are meant to be killed, each at a moment of its own in its first seconds (the quick ones
            # often end first).
            kill_at = time.monotonic() + self.rng.uniform(0.05, 3.0) if self.rng.random() < 0.7 else None
            running.append(dict(args=args, proc=p, kill_at=kill_at, killed=False))
            self.counts["commands"] += 1
        deadline = time.monotonic() + COMMAND_LIMIT
        while any(r["proc"].poll() is None for r in running):
            now = time.monotonic()
            for r in running:
                if r["kill_at"] is not None and now >= r["kill_at"] and r["proc"].poll() is None:
                    r["proc"].send_signal(signal.SIGKILL)
                    r["killed"], r["kill_at"] = True, None
                    self.counts["kills"] += 1
                    self.killed[r["args"][0]] = self.killed.get(r["args"][0], 0) + 1
            if now > deadline:
                for r in running:
                    if r["proc"].poll() is None:
                        self.fail(f"`issues {' '.join(r['args'])}` hung for {COMMAND_LIMIT} s")
                        r["proc"].kill()
                break
            time.sleep(0.02)
        for r in running:
            code = r["proc"].wait()
            stderr = r["proc"].stderr.read()
            r["proc"].stderr.close()
            if r["killed"] and code == -signal.SIGKILL:
                continue
            if code < 0 or code not in (0, 1):
                self.fail(f"`issues {' '.join(r['args'])}` ended with {code}: {stderr.strip()[-2000:]}")
            elif code == 1:
                # A removal that lost the race to a prune, a sync that met a killed process's leftovers:
                # counted and shown, not failed (the checks after the round decide).
                self.counts["failed_exits"] += 1
                log(f"exit 1 from `issues {' '.join(r['args'])}`: {stderr.strip().splitlines()[-1:]}")

    # -- after a round

    def recover_and_check(self):
        self.issues("resume", "--no-covers", check=False)
        self.issues("download", "--no-covers")
        # A removal or prune killed after marking its issues leaves them listed as being removed; running
        # `remove` again finishes each, as a person would.
        for issue in self.listed():
            if issue.get("removing"):
                self.counts["removals_finished"] += 1
                self.issues("remove", issue["name"])
        for issue in self.listed():
            self.check_issue(issue)
        r = self.issues("verify", check=False)
        if r.returncode != 0:
            self.fail(f"`issues verify` is not clean (exit {r.returncode}): {(r.stdout + r.stderr).strip()[-3000:]}")
            self.issues("verify", "--repair", check=False)

    def check_issue(self, issue):
        name, status = issue.get("name"), issue.get("status")
        if status != "available":
            self.fail(f"{name!r} is {status!r} after resume and download: {json.dumps(issue)[:1500]}")
            return
        folder = issue.get("directory") or os.path.join(self.lib, issue.get("folder", ""))
        for asset in issue.get("assets", []):
            served = asset["url"].rsplit("/", 1)[-1]
            if asset.get("state") == "unpacked":
                expected = self.content.zips.get(served, {})
                if not expected:
                    self.fail(f"{name!r}: {served} unpacked, but it is not a served ZIP")
                for path, digest in expected.items():
                    self.check_file(name, os.path.join(folder, path), digest)
            elif asset.get("state") == "downloaded":
                # A plain file, or a ZIP kept whole (as a subscription's media policy may say).
                digest = self.content.served.get(served)
                if digest is None:
                    self.fail(f"{name!r}: {served} placed whole, but nginx serves no such file")
                    continue
                self.check_file(name, os.path.join(folder, asset.get("fileName") or ""), digest)
            else:
                self.fail(f"{name!r} is available but its asset {served} is {asset.get('state')!r}")
        self.counts["issues_verified"] += 1

    def check_file(self, issue, path, digest):
        try:
            actual = file_sha256(path)
        except OSError as error:
            self.fail(f"{issue!r}: cannot read {path}: {error}")
            return
        if actual != digest:
            self.fail(f"{issue!r}: {path} has SHA-256 {actual}, served {digest}")
        self.counts["files_verified"] += 1

    # -- the whole soak

    def run(self):
        self.nginx.start()
        start = time.monotonic()
        try:
            write_feed(self.www, self.nginx.url("").rstrip("/"), [])
            self.issues("subscribe", self.nginx.url(FEED), "--name", "Soak Feed", "--keep", "5", "--no-covers")
            while time.monotonic() - start < self.args.seconds:
                self.counts["rounds"] += 1
                self.run_round(self.counts["rounds"])
                self.recover_and_check()
                c = self.counts
                log(f"round {c['rounds']}: {c['kills']} kills so far, {c['issues_verified']} issues verified, "
                    f"{len(self.failures)} failures, {time.monotonic() - start:.0f} s")
        finally:
            self.nginx.stop()
        c = self.counts
        print(f"soak: {c['rounds']} rounds in {time.monotonic() - start:.0f} s (seed {self.args.seed}), "
              f"{c['commands']} commands, {c['kills']} killed with SIGKILL, {c['failed_exits']} exits of 1, "
              f"{c['removals_finished']} interrupted removals finished")
        print("soak: killed: " + ", ".join(f"{k} {n}" for k, n in sorted(self.killed.items())))
        print(f"soak: {c['issues_verified']} available issues verified after the rounds (an issue once per round; "
              f"{c['files_verified']} files by SHA-256), {len(self.failures)} failures")
        if self.failures:
            print(f"soak: FAILED; the work folder is kept: {self.work}")
            for failure in self.failures[:20]:
                print(f"  - {failure[:500]}")
            return 1
        if self.args.keep:
            print(f"soak: the work folder is kept: {self.work}")
        else:
            shutil.rmtree(self.work, ignore_errors=True)
        return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=float(os.environ.get("SOAK_SECONDS", 600)))
    parser.add_argument("--seed", type=int, default=int(os.environ.get("SOAK_SEED", random.randrange(1 << 30))))
    parser.add_argument("--issues", default=os.path.join(REPO, ".build", "debug", "issues"))
    parser.add_argument("--keep", action="store_true", help="keep the work folder after a clean run")
    args = parser.parse_args()
    args.issues = os.path.abspath(args.issues)
    if not os.access(args.issues, os.X_OK):
        parser.error(f"no issues binary at {args.issues} (swift build --product issues, or pass --issues)")
    return Soak(args).run()


if __name__ == "__main__":
    sys.exit(main())
