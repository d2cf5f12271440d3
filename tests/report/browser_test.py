#!/usr/bin/env python3
"""The DSE report as a person sees it: builds a small report (`ltc report --quick` with a tiny PPA
sweep), opens it in headless Chromium with the network cut off, and fails on any console error or
uncaught exception, any request that is not a local file, a plot whose Vega view drew nothing, a
broken link, or a plot whose hover does not show the reproduce command. Saves full-page and
summary screenshots beside the report.

    tests/report/browser_test.py --ltc build/ltc --out build/tests/report [--chromium chromium]

Talks to Chromium over the DevTools protocol on a pipe (--remote-debugging-pipe): no WebDriver,
no network port.
"""
import argparse
import base64
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))


class Browser:
    """One headless Chromium and one page, driven over the DevTools pipe (fd 3 in, fd 4 out)."""

    def __init__(self, chromium, width=1280, height=900):
        self.profile = tempfile.mkdtemp(prefix="ltc-report-chromium-")
        cmd_r, self.cmd_w = os.pipe()
        self.out_r, out_w = os.pipe()

        def wire():
            # Move both ends out of the way first, then onto 3 and 4.
            a, b = os.dup(cmd_r), os.dup(out_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--no-first-run", "--no-default-browser-check", "--disable-extensions",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
             f"--user-data-dir={self.profile}", f"--window-size={width},{height}",
             "--remote-debugging-pipe", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(3, 4), preexec_fn=wire)
        os.close(cmd_r)
        os.close(out_w)
        self.buf = b""
        self.next_id = 0
        self.events = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget",
                                 {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Page", "Network"):
            self.call(domain + ".enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
                  session=True)

    def _read_message(self, timeout):
        deadline = time.time() + timeout
        while b"\0" not in self.buf:
            if time.time() > deadline:
                raise TimeoutError("Chromium did not answer")
            ready, _, _ = select.select([self.out_r], [], [], 0.5)
            if ready:
                chunk = os.read(self.out_r, 1 << 20)
                if not chunk:
                    raise RuntimeError("Chromium closed the DevTools pipe")
                self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, session=False, timeout=60):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        os.write(self.cmd_w, json.dumps(msg).encode() + b"\0")
        while True:
            m = self._read_message(timeout)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def pump(self, seconds):
        """Collects events for `seconds`."""
        deadline = time.time() + seconds
        while time.time() < deadline:
            try:
                self.events.append(self._read_message(max(0.05, deadline - time.time())))
            except TimeoutError:
                break

    def evaluate(self, expression):
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                           "awaitPromise": True}, session=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"page script failed: {r['exceptionDetails']}")
        return r["result"].get("value")

    def screenshot(self, path, full_page, scale=1.0):
        metrics = self.call("Page.getLayoutMetrics", session=True)
        size = metrics["cssContentSize"] if full_page else metrics["cssLayoutViewport"]
        width = size["width"] if full_page else size["clientWidth"]
        height = size["height"] if full_page else size["clientHeight"]
        x, y = (0, 0) if full_page else (size["pageX"], size["pageY"])
        clip = {"x": x, "y": y, "width": width, "height": height, "scale": scale}
        params = {"format": "png", "captureBeyondViewport": full_page, "clip": clip}
        data = self.call("Page.captureScreenshot", params, session=True, timeout=120)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        try:
            self.call("Browser.close", timeout=10)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


# Runs in the page: what each plot drew, and every link.
PAGE_CHECK = r"""
(function () {
  var plots = Array.prototype.slice.call(document.querySelectorAll('div.plot')).map(function (div) {
    var items = 0;
    div.querySelectorAll('g.role-mark').forEach(function (g) {
      if (g.classList.contains('mark-group')) return;
      if (g.closest('.role-axis, .role-legend, .role-title')) return;
      // Only items that occupy space: a bar at a log scale's 0 exists but draws nothing.
      Array.prototype.forEach.call(g.children, function (item) {
        var box = item.getBBox ? item.getBBox() : {width: 0, height: 0};
        if (box.width > 0 || box.height > 0) items++;
      });
    });
    return {id: div.id, rendered: div.getAttribute('data-rendered') === 'yes',
            svg: !!div.querySelector('svg'), items: items};
  });
  var links = Array.prototype.slice.call(document.querySelectorAll('a[href]')).map(function (a) {
    var href = a.getAttribute('href');
    return {href: href, anchor_ok: href[0] !== '#' || !!document.getElementById(href.slice(1))};
  });
  return {state: window.ltcReport || null, plots: plots, links: links,
          title: document.title, sections: document.querySelectorAll('section').length};
})()
"""

# A point of the calibration plot's centre, to hover.
HOVER_TARGET = r"""
(function () {
  var div = document.querySelector('div.plot[id^="plot-calibration"]');
  if (!div) return null;
  var p = div.querySelector('g.mark-symbol.role-mark path');
  if (!p) return null;
  p.scrollIntoView({block: 'center'});
  var r = p.getBoundingClientRect();
  return {x: r.left + r.width / 2, y: r.top + r.height / 2};
})()
"""


def build_report(ltc, out):
    shutil.rmtree(out, ignore_errors=True)
    sweep = os.path.join(HERE, "tiny-shapes.json")
    cmd = [ltc, "report", "--out", out, "--quick", "--sweeps", sweep, "-j", "2"]
    print("+", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr[-4000:])
        raise SystemExit(f"ltc report failed with exit {r.returncode}")
    return os.path.join(out, "index.html")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ltc", required=True)
    ap.add_argument("--out", required=True, help="folder for the report and the screenshots")
    ap.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    ap.add_argument("--page", help="check this page instead of building one")
    a = ap.parse_args()
    if not shutil.which(a.chromium) and not os.path.exists(a.chromium):
        raise SystemExit(f"{a.chromium}: not found (scripts/setup installs Debian's chromium)")

    page = os.path.abspath(a.page or build_report(a.ltc, os.path.join(a.out, "report")))
    report_dir = os.path.dirname(page)
    failures = []
    browser = Browser(a.chromium)
    try:
        browser.call("Page.navigate", {"url": "file://" + urllib.parse.quote(page)}, session=True)
        deadline = time.time() + 120
        while time.time() < deadline:
            browser.pump(0.5)
            if browser.evaluate("!!(window.ltcReport && window.ltcReport.done)"):
                break
        else:
            failures.append("the plots did not finish rendering within 120 s")
        browser.pump(1.0)
        check = browser.evaluate(PAGE_CHECK)
        state = check["state"] or {}
        if not check["plots"]:
            failures.append("the page has no plots")
        for p in check["plots"]:
            if not (p["rendered"] and p["svg"] and p["items"] > 0):
                failures.append(f"plot {p['id']}: empty Vega view (rendered={p['rendered']}, "
                                f"svg={p['svg']}, marks={p['items']})")
        for l in check["links"]:
            href = l["href"]
            if href.startswith("#"):
                if not l["anchor_ok"]:
                    failures.append(f"broken link {href}: no element with that id")
            elif "://" in href or href.startswith("//"):
                failures.append(f"link {href} leaves the report folder")
            elif not os.path.exists(os.path.join(report_dir, urllib.parse.unquote(href))):
                failures.append(f"broken link {href}: no such file beside the page")
        # Hover a calibration point: the tooltip shows its parameters and reproduce command.
        target = browser.evaluate(HOVER_TARGET)
        if target is None:
            failures.append("no calibration point to hover")
        else:
            browser.pump(0.3)
            target = browser.evaluate(HOVER_TARGET)
            for kind in ("mouseMoved",):
                browser.call("Input.dispatchMouseEvent",
                             {"type": kind, "x": target["x"], "y": target["y"]}, session=True)
            browser.pump(0.5)
            tip = browser.evaluate(
                "(document.getElementById('vg-tooltip-element') || {}).innerText || ''")
            if "reproduce" not in tip or "ltc gemm" not in tip:
                failures.append(f"hovering a calibration point shows no reproduce command: {tip!r}")
            # Numbers on hover are formatted: four significant digits, not a double's 17.
            lines = [l.strip() for l in tip.splitlines() if l.strip()]
            shown = dict(zip(lines[0::2], lines[1::2]))  # "key", "value" lines in turn
            for key in ("measured_ms", "estimated_ms"):
                digits = shown.get(key, "").replace(",", "").replace(".", "").lstrip("0")
                if not digits.isdigit() or len(digits) > 4:
                    failures.append(f"hover shows {key} unformatted: {shown.get(key)!r}")
            browser.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": 1, "y": 1},
                         session=True)
        browser.evaluate("window.scrollTo(0, 0)")
        browser.pump(0.3)
        os.makedirs(a.out, exist_ok=True)
        # The first screen at 3/4 size: the README's picture (docs/report-summary.png).
        browser.screenshot(os.path.join(a.out, "report-summary.png"), full_page=False, scale=0.75)
        browser.screenshot(os.path.join(a.out, "report-full-page.png"), full_page=True)
        for ev in browser.events:
            m, p = ev.get("method"), ev.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                text = " ".join(str(x.get("value", x.get("description", ""))) for x in p["args"])
                failures.append(f"console error: {text}")
            elif m == "Runtime.exceptionThrown":
                failures.append(f"uncaught exception: {p['exceptionDetails'].get('text')} "
                                f"{p['exceptionDetails'].get('exception', {}).get('description', '')}")
            elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
                failures.append(f"browser error: {p['entry'].get('text')} {p['entry'].get('url', '')}")
            elif m == "Network.requestWillBeSent":
                url = p["request"]["url"]
                if not url.startswith(("file:", "data:", "about:", "blob:")):
                    failures.append(f"the page loads {url} from the network")
        print(f"{check['title']}: {check['sections']} sections, {len(check['plots'])} plots "
              f"({state.get('rendered')} rendered), {len(check['links'])} links; screenshots in "
              f"{a.out}")
    finally:
        browser.close()
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
