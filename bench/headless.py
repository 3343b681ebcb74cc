"""Open a local page in headless Chromium and report what it logged and what it drew.

Used by the HTML report's test and by `python -m bench.headless PAGE --screenshot PNG` (the README's
screenshot). It talks the Chrome DevTools Protocol over `--remote-debugging-pipe` (JSON messages ended
by a NUL byte on file descriptors 3 and 4), so it needs no websocket library and no open port: create a
tab, attach to it, collect console messages, uncaught exceptions and browser log entries (a blocked
network load, a Content-Security-Policy violation) while the page loads, evaluate an expression in the
page, and take a full-page screenshot.

    with Chromium() as browser:
        page = browser.open(Path("report.html"), probe="document.title")
        assert not page.errors
"""

from __future__ import annotations

import argparse
import base64
import itertools
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

__all__ = ["Chromium", "Page", "chromium_path"]

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
TIMEOUT_S = 60.0
"""A safety net only: a page of a few hundred kilobytes loads in well under a second."""


def chromium_path() -> str | None:
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass
class Page:
    errors: list[str] = field(default_factory=list)
    """Console errors, uncaught exceptions and browser log entries of level error."""
    warnings: list[str] = field(default_factory=list)
    probe: Any = None
    """The value of the probe expression, evaluated after the load event."""
    screenshot: bytes = b""


class Chromium:
    """One headless Chromium process for the duration of a `with` block."""

    def __init__(self, executable: str | None = None, width: int = 1200, height: int = 900) -> None:
        found = executable or chromium_path()
        if found is None:
            raise FileNotFoundError("no Chromium found (apt-get install chromium)")
        self.executable = found
        self.width, self.height = width, height
        self._ids = itertools.count(1)
        self._events: list[dict[str, Any]] = []
        self._buffer = b""

    def __enter__(self) -> Chromium:
        self._profile = tempfile.TemporaryDirectory(prefix="shiftbench-chromium-")
        to_browser_read, self._to_browser = os.pipe()
        self._from_browser, from_browser_write = os.pipe()
        arguments = [self.executable, "--headless=new", "--remote-debugging-pipe", "--disable-gpu",
                     "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                     f"--user-data-dir={self._profile.name}", f"--window-size={self.width},{self.height}"]
        if os.geteuid() == 0:
            arguments.append("--no-sandbox")  # Chromium refuses to run as root with its sandbox on

        def wire_pipes() -> None:
            # The protocol's fixed descriptors: the browser reads commands on 3 and writes on 4.
            high_read, high_write = os.dup(to_browser_read), os.dup(from_browser_write)
            os.dup2(high_read, 3)
            os.dup2(high_write, 4)

        self._process = subprocess.Popen(arguments, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL, close_fds=False, preexec_fn=wire_pipes)
        os.close(to_browser_read)
        os.close(from_browser_write)
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self._send("Browser.close")
        except OSError:
            pass
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)
        self._profile.cleanup()

    def open(self, path: Path, probe: str = "null", screenshot: bool = False, max_height: int = 0) -> Page:
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Runtime", "Log", "Page"):
            self.call(f"{domain}.enable", session=session)
        self.call("Emulation.setDeviceMetricsOverride", session=session, width=self.width, height=self.height,
                  deviceScaleFactor=1, mobile=False)
        self._events.clear()
        self.call("Page.navigate", session=session, url=Path(path).resolve().as_uri())
        self._wait_event("Page.loadEventFired", session)
        page = Page()
        result = self.call("Runtime.evaluate", session=session, expression=probe, returnByValue=True)
        page.probe = result.get("result", {}).get("value")
        if screenshot:
            page.screenshot = self._screenshot(session, max_height)
        self._collect(page, session)
        return page

    def _screenshot(self, session: str, max_height: int) -> bytes:
        size = self.call("Page.getLayoutMetrics", session=session)["cssContentSize"]
        height = min(size["height"], max_height) if max_height > 0 else size["height"]
        clip = {"x": 0, "y": 0, "width": size["width"], "height": height, "scale": 1}
        shot = self.call("Page.captureScreenshot", session=session, format="png", clip=clip,
                         captureBeyondViewport=True)
        return base64.b64decode(shot["data"])

    def _collect(self, page: Page, session: str) -> None:
        for event in self._events:
            if event.get("sessionId") != session:
                continue
            method, params = event["method"], event.get("params", {})
            if method == "Runtime.exceptionThrown":
                page.errors.append(f"exception: {params['exceptionDetails'].get('text', '')}")
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                page.errors.append("console: " + " ".join(str(a.get("value", a.get("description", "")))
                                                         for a in params.get("args", [])))
            elif method == "Runtime.consoleAPICalled" and params.get("type") == "warning":
                page.warnings.append(str(params.get("args")))
            elif method == "Log.entryAdded":
                entry = params["entry"]
                target = page.errors if entry.get("level") == "error" else page.warnings
                target.append(f"{entry.get('source')}: {entry.get('text')}")

    # ------------------------------------------------------------------ the protocol

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        ident = self._send(method, session, params)
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            message = self._receive(deadline)
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            self._events.append(message)

    def _wait_event(self, method: str, session: str) -> None:
        if any(e.get("method") == method and e.get("sessionId") == session for e in self._events):
            return
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            message = self._receive(deadline)
            self._events.append(message)
            if message.get("method") == method and message.get("sessionId") == session:
                return

    def _send(self, method: str, session: str | None = None, params: Mapping[str, Any] | None = None) -> int:
        ident = next(self._ids)
        message: dict[str, Any] = {"id": ident, "method": method, "params": dict(params or {})}
        if session is not None:
            message["sessionId"] = session
        os.write(self._to_browser, orjson.dumps(message) + b"\0")
        return ident

    def _receive(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self._from_browser], [], [], remaining)[0]:
                raise TimeoutError(f"Chromium did not answer within {TIMEOUT_S:.0f} s")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise ConnectionError("Chromium closed the DevTools pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = orjson.loads(raw)
        return message


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Load a page in headless Chromium; print its errors.")
    parser.add_argument("page", type=Path)
    parser.add_argument("--screenshot", type=Path, help="write a full-page PNG here")
    parser.add_argument("--width", type=int, default=1200)
    parser.add_argument("--max-height", type=int, default=0, help="cut the screenshot at this height (0: whole)")
    args = parser.parse_args(argv)
    with Chromium(width=args.width) as browser:
        page = browser.open(args.page, screenshot=args.screenshot is not None, max_height=args.max_height)
    for line in page.errors:
        print(f"error: {line}")
    if args.screenshot is not None:
        args.screenshot.write_bytes(page.screenshot)
        print(f"Wrote {args.screenshot} ({len(page.screenshot)} bytes)")
    return 1 if page.errors else 0


if __name__ == "__main__":
    sys.exit(main())
