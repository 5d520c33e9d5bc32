#!/usr/bin/env python3
"""`make browser-test`: `issues serve` in headless Chromium (Debian's chromium + chromium-driver, Selenium).

Starts the sample publisher (Samples/publisher, served by sample-server, throttled so that a download's
progress can be watched) and `issues serve` on a temporary library, then, as a person would: subscribes
through the page, sees the new issue appear live on the shelf (Server-Sent Events, no reload), watches
its progress bar move, opens the issue and its file, removes it. Asserts no console errors and no
serious or critical axe violation; saves screenshots at desktop and phone width under
.build/browser-artifacts/. Waits for conditions (WebDriverWait), never sleeps a fixed time.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("BIN_DIR", ROOT / ".build" / "debug"))
ARTIFACTS = ROOT / ".build" / "browser-artifacts"
RATE = os.environ.get("BROWSER_TEST_RATE", str(4 * 1024 * 1024))  # the podcast episode takes ~12 s

passed = 0
failed = 0


def check(condition, what):
    global passed, failed
    if condition:
        passed += 1
        print(f"ok: {what}")
    else:
        failed += 1
        print(f"FAILED: {what}")


def wait_for_line(path, pattern, process, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"{process.args[0]} exited: {Path(path).read_text()}")
        text = Path(path).read_text() if Path(path).exists() else ""
        match = re.search(pattern, text)
        if match:
            return match
        time.sleep(0.05)
    raise SystemExit(f"no {pattern!r} in {path} within {timeout} s")


def start(args, log):
    return subprocess.Popen(args, stdout=open(log, "w"), stderr=subprocess.STDOUT, start_new_session=True)


def stop(process):
    if process and process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            return process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            return process.wait()
    return process.returncode if process else None


def axe_check(driver, page):
    from axe_selenium_python import Axe

    axe = Axe(driver)
    axe.inject()
    results = axe.run()
    bad = [v for v in results["violations"] if v.get("impact") in ("serious", "critical")]
    for violation in bad:
        print(f"  axe {violation['impact']}: {violation['id']}: {violation['help']} ({len(violation['nodes'])} nodes)")
        for node in violation["nodes"][:3]:
            print(f"    {node.get('target')}: {node.get('failureSummary', '')[:200]}")
    check(not bad, f"axe on {page}: {len(results['violations'])} violations, {len(bad)} serious or critical")


def console_errors(driver):
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def screenshot(driver, name):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for label, (width, height) in (("desktop", (1280, 900)), ("phone", (390, 844))):
        driver.set_window_size(width, height)
        WebDriverWait(driver, 5).until(lambda d: d.execute_script("return document.readyState") == "complete")
        driver.save_screenshot(str(ARTIFACTS / f"{name}-{label}.png"))
    driver.set_window_size(1280, 900)


def main():
    work = Path(tempfile.mkdtemp(prefix="issues-browser-"))
    library = work / "library"
    publisher = work / "publisher"
    processes = []
    driver = None
    try:
        subprocess.run([sys.executable, ROOT / "Samples/publisher/make_publisher.py", "--out", publisher], check=True,
                       stdout=subprocess.DEVNULL)
        sample = start([BIN / "sample-server", "--root", publisher, "--port-file", work / "sample.port", "--rate", RATE],
                       work / "sample.log")
        processes.append(sample)
        deadline = time.monotonic() + 10
        while not (work / "sample.port").exists() or not (work / "sample.port").read_text().strip():
            if time.monotonic() > deadline:
                raise SystemExit("sample-server wrote no port")
            time.sleep(0.05)
        base = f"http://127.0.0.1:{(work / 'sample.port').read_text().strip()}"
        subprocess.run([sys.executable, ROOT / "Samples/publisher/make_feeds.py", "--publisher", publisher, "--base", base],
                       check=True, stdout=subprocess.DEVNULL)
        env = dict(os.environ, ISSUES_LIBRARY=str(library))
        for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
            env.pop(name, None)
        serve = subprocess.Popen([BIN / "issues", "serve", "--listen", "127.0.0.1:0"], stdout=subprocess.DEVNULL,
                                 stderr=open(work / "serve.log", "w"), env=env, start_new_session=True)
        processes.append(serve)
        url = wait_for_line(work / "serve.log", r"on (http://127\.0\.0\.1:\d+)/", serve).group(1)
        print(f"issues serve at {url}, sample publisher at {base}")

        options = Options()
        options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
        for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--window-size=1280,900", "--autoplay-policy=user-gesture-required"):
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options)
        wait = WebDriverWait(driver, 60, poll_frequency=0.1)

        driver.get(url + "/")
        check("Shelf" in driver.title, "the shelf loads")
        screenshot(driver, "shelf-empty")
        shelf = driver.current_window_handle
        # Two filtered shelves listen too: a new issue is unread, so it belongs on the first and not the second.
        filtered = {}
        for status in ("new", "read"):
            driver.switch_to.new_window("tab")
            driver.get(url + "/?status=" + status)
            filtered[status] = driver.current_window_handle

        # Subscribe in a second tab; the first keeps listening.
        driver.switch_to.new_window("tab")
        driver.get(url + "/subscriptions")
        axe_check(driver, "subscriptions (empty)")
        field = driver.find_element(By.NAME, "url")
        field.send_keys(base + "/feeds/podcast.rss")
        field.submit()
        wait.until(lambda d: "subscribed to" in d.find_element(By.CSS_SELECTOR, ".notice").text)
        check("Loopback Podcast" in driver.page_source, "the subscription is listed")
        screenshot(driver, "subscriptions")

        driver.switch_to.window(shelf)
        card = wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#shelf .card"))
        check(len(card) == 1, "the new issue appeared live on the shelf (no reload)")
        name = driver.find_element(By.CSS_SELECTOR, "#shelf .card .name").text
        print(f"new issue: {name}")
        driver.switch_to.window(filtered["new"])
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#shelf .card"))
        check(True, "the new issue appeared live on the shelf filtered to new issues")
        driver.switch_to.window(filtered["read"])
        time.sleep(1)  # the event reached the other tabs already; give this one the same time
        check(not driver.find_elements(By.CSS_SELECTOR, "#shelf .card"), "the shelf filtered to read issues stayed empty")
        driver.switch_to.window(shelf)
        bar = wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#shelf .card progress"))
        first = wait.until(lambda d: float(bar.get_attribute("value") or 0) > 0 and float(bar.get_attribute("value")))
        moved = wait.until(lambda d: float(bar.get_attribute("value") or 0) > first and float(bar.get_attribute("value")))
        check(moved > first, f"the progress bar moved ({first:.0f} → {moved:.0f} bytes)")
        screenshot(driver, "shelf-downloading")
        axe_check(driver, "shelf")

        driver.find_element(By.CSS_SELECTOR, "#shelf .card .name").click()
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "article.issue"))
        # The page reloads itself when the download's issue.available arrives.
        link = wait.until(lambda d: [a for a in d.find_elements(By.CSS_SELECTOR, ".assets a") if a.text.startswith("open ")])
        check(True, "the download finished and the issue page shows the file")
        screenshot(driver, "issue")
        axe_check(driver, "issue")
        href = link[0].get_attribute("href")
        status = driver.execute_async_script(
            "var done = arguments[arguments.length - 1];"
            "fetch(arguments[0], {headers: {Range: 'bytes=0-99'}}).then(function (r) {"
            " r.arrayBuffer().then(function (b) { done([r.status, b.byteLength, r.headers.get('Content-Type')]); }); });",
            href)
        check(status[0] == 206 and status[1] == 100, f"the file answers a Range request: {status}")
        driver.get(href)
        check(driver.execute_script("return document.contentType") in ("audio/mpeg", "text/html"), "the file opens in the browser")
        driver.back()

        wait.until(lambda d: d.find_elements(By.LINK_TEXT, "Remove…"))
        driver.find_element(By.LINK_TEXT, "Remove…").click()
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "button.danger"))
        screenshot(driver, "remove-confirm")
        driver.find_element(By.CSS_SELECTOR, "button.danger").click()
        wait.until(lambda d: d.find_elements(By.ID, "shelf"))
        check(not driver.find_elements(By.CSS_SELECTOR, "#shelf .card"), "the issue is removed")

        errors = []
        for handle in driver.window_handles:
            driver.switch_to.window(handle)
            errors += console_errors(driver)
        for entry in errors:
            print(f"  console: {entry['message']}")
        check(not errors, f"no console errors ({len(errors)})")
    except Exception:
        if driver:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            driver.save_screenshot(str(ARTIFACTS / "failure.png"))
            (ARTIFACTS / "failure.html").write_text(driver.page_source)
            print(f"failed at {driver.current_url}; screenshot and page in {ARTIFACTS}/failure.*")
        raise
    finally:
        if driver:
            driver.quit()
        codes = [stop(process) for process in reversed(processes)]
        if codes:
            check(codes[0] == 0, f"issues serve stopped on SIGTERM with exit status {codes[0]}")
        print(f"artefacts in {ARTIFACTS}")
        shutil.rmtree(work, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
