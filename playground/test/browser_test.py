"""The playground in headless Chromium, driven by Selenium: the page served by a local static
server, a filter typed, its verdict, cost range and highlighted span checked against the CLI's
JSON, the witness built and its cost compared with the CLI's, a malformed event refused clearly,
the sample flow pasted with its compound-timeout finding at 11:16, the fix applied, and the shared
link reopened with the same state. A screenshot of each state at a laptop's and a phone's width
goes to the output folder (first argument, default target/playground-test/); the timings of
BENCHMARKS.md (first load, keystroke to verdict on the 1 KiB benchmark expression) go to
timings.json there.

Run through playground/test/run.sh, which builds the module and provides Selenium."""

import functools
import http.server
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "target/playground-test")
OZCHECK = os.environ.get("OZCHECK_BIN", str(ROOT / "target/debug/ozcheck"))
FILTER = "event.attributes.a.exists(x, event.attributes.b.exists(y, x == y))"
SAMPLE_FLOW = "corpus/plugins/sample/flows/ci-watch.yaml"
LAPTOP = (1366, 900)
PHONE = (390, 844)


def cli(*args):
    """The CLI's JSON answer, whatever its exit status."""
    done = subprocess.run([OZCHECK, *args], cwd=ROOT, capture_output=True, text=True, check=False)
    return json.loads(done.stdout)


def serve():
    """A static server for playground/ on a free port of 127.0.0.1."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(ROOT / "playground"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def browser(profile):
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for flag in [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={profile}",
    ]:
        options.add_argument(flag)
    service = Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"))
    return webdriver.Chrome(service=service, options=options)


class Page:
    def __init__(self, driver):
        self.d = driver
        self.wait = WebDriverWait(driver, 30)

    def find(self, css):
        return self.d.find_element(By.CSS_SELECTOR, css)

    def open(self, url):
        self.d.get("about:blank")
        self.d.get(url)
        self.wait.until(lambda d: d.execute_script("return document.body.dataset.ready === 'true'"))

    def shots(self, name):
        """One screenshot at each width, the page's full height."""
        for label, (width, height) in (("laptop", LAPTOP), ("phone", PHONE)):
            self.d.set_window_size(width, height)
            full = self.d.execute_script("return document.documentElement.scrollHeight")
            self.d.set_window_size(width, max(height, min(full + 140, 4000)))
            self.d.save_screenshot(str(OUT / f"{name}-{label}.png"))
        self.d.set_window_size(*LAPTOP)

    def set_value(self, css, text):
        """Sets a field as a paste would and fires its input event."""
        self.d.execute_script(
            "const e = document.querySelector(arguments[0]); e.value = arguments[1];"
            "e.dispatchEvent(new Event('input', {bubbles: true}));",
            css,
            text,
        )


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    server = serve()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    with tempfile.TemporaryDirectory() as profile:
        driver = browser(profile)
        try:
            run(Page(driver), url)
        finally:
            driver.quit()
            server.shutdown()
    print(f"playground test passed; screenshots in {OUT}")


def run(page, url):
    timings = {"load_ms": []}
    for _ in range(3):
        page.open(url)
        timings["load_ms"].append(page.d.execute_script("return window.ozTimings.loadMs"))
    page.d.set_window_size(*LAPTOP)
    page.shots("01-loaded")

    # Type a filter; the verdict follows as you type.
    expr = page.find("#expr")
    expr.send_keys(Keys.CONTROL, "a")
    expr.send_keys(Keys.DELETE)
    expr.send_keys(FILTER)
    page.wait.until(lambda d: d.find_element(By.ID, "verdict").get_attribute("data-verdict"))
    expected = cli("filter", "--format", "json", "--", FILTER)
    assert page.find("#verdict").get_attribute("data-verdict") == expected["verdict"]
    shown = (page.find("#cost-min").text, page.find("#cost-max").text)
    want = (f"{expected['cost']['min']:,}", f"{expected['cost']['max']:,}")
    assert shown == want, (shown, want)
    # The highlighted sub-expression is the one the CLI's cost diagnostic points at.
    span = expected["diagnostics"][0]["span"]
    assert page.find("#backdrop").get_attribute("data-span") == f"{span['start']}-{span['end']}"
    assert page.find("#dominant").text == FILTER[span["start"] : span["end"]]
    assert page.find("#would-pass-list").text
    page.shots("02-refused-filter")

    # A would-pass bound re-checks at once.
    page.find("#would-pass-list button").click()
    page.wait.until(lambda d: d.find_element(By.ID, "verdict").get_attribute("data-verdict") == "accepted")
    max_attributes = page.find("#maxAttributes").get_attribute("value")
    page.shots("03-would-pass-applied")

    # The witness, its metered cost beside the CLI's.
    page.find("#build-witness").click()
    page.wait.until(lambda d: d.find_elements(By.ID, "witness-metered"))
    with tempfile.NamedTemporaryFile(suffix=".json") as witness:
        expected = cli("filter", "--format", "json", "--max-attributes", max_attributes,
                       "--witness", witness.name, "--", FILTER)
        event_file = json.loads(Path(witness.name).read_text())
    assert page.find("#witness-metered").text == f"{expected['witness_cost']:,}"
    assert json.loads(page.find("#event").get_attribute("value")) == event_file
    page.find("#evaluate").click()
    page.wait.until(lambda d: d.find_elements(By.ID, "eval-value") or d.find_elements(By.ID, "eval-error"))
    assert page.find("#eval-value").text == "false"
    page.shots("04-witness-evaluated")
    state_event = page.find("#event").get_attribute("value")

    # A malformed event gets a clear error.
    page.set_value("#event", '{"id": ')
    page.find("#evaluate").click()
    page.wait.until(lambda d: d.find_elements(By.ID, "eval-error"))
    assert "not valid JSON" in page.find("#eval-error").text
    page.shots("05-malformed-event")
    page.set_value("#event", state_event)

    # Keystroke to verdict on the 1 KiB benchmark expression: the time from the input event's
    # timestamp to the verdict rendered, read by the page itself.
    bench = json.loads((ROOT / "corpus/events/expressions.json").read_text())["expr_1024"]
    page.set_value("#expr", bench[:-1])
    samples = []
    for _ in range(21):
        page.find("#expr").send_keys(Keys.END, bench[-1])
        samples.append(page.d.execute_script("return window.ozTimings.keyToVerdictMs"))
        page.find("#expr").send_keys(Keys.BACKSPACE)
    timings["key_to_verdict_ms"] = samples
    page.set_value("#expr", FILTER)

    # The YAML tab: the sample flow pasted, its compound-timeout finding at 11:16, the fix.
    page.find("#tab-yaml").click()
    page.set_value("#yaml-path", "flows/ci-watch.yaml")
    page.set_value("#yaml", (ROOT / SAMPLE_FLOW).read_text())
    page.wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, ".finding[data-code='compound-timeout']"))
    finding = page.find(".finding[data-code='compound-timeout']")
    assert finding.get_attribute("data-at") == "11:16", finding.get_attribute("data-at")
    page.shots("06-yaml-findings")
    page.find("#apply-fix").click()
    page.wait.until(lambda d: not d.find_elements(By.CSS_SELECTOR, ".finding[data-code='compound-timeout']"))
    fixed_yaml = page.find("#yaml").get_attribute("value")
    assert "timeout: 1h30m" not in fixed_yaml
    page.shots("07-yaml-fixed")

    # The shared link reopens the same state.
    state = {
        key: page.find(f"#{key}").get_attribute("value")
        for key in ("expr", "maxAttributes", "limit", "event", "yaml", "yaml-path")
    }
    link = page.find("#share").get_attribute("href")
    page.open(link)
    for key, value in state.items():
        assert page.find(f"#{key}").get_attribute("value") == value, key
    assert page.find("#panel-yaml").is_displayed()
    page.shots("08-reopened-from-link")
    page.find("#tab-filter").click()
    page.wait.until(lambda d: d.find_element(By.ID, "verdict").get_attribute("data-verdict") == "accepted")
    page.shots("09-reopened-filter")

    (OUT / "timings.json").write_text(json.dumps(timings, indent=1) + "\n")
    print(
        "first load (ms): median", round(statistics.median(timings["load_ms"]), 1),
        "| keystroke to verdict, 1 KiB expression (ms): median",
        round(statistics.median(samples), 2), "max", round(max(samples), 2),
    )


if __name__ == "__main__":
    main()
