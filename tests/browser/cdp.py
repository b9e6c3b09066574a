"""A small Chrome DevTools Protocol client over ``--remote-debugging-pipe`` (no socket).

Chromium reads commands on fd 3 and writes replies and events on fd 4, each a JSON object
followed by a NUL byte. :func:`open_page` loads a file in a fresh headless Chromium and
observes, from the browser itself, every request the page makes (``Network``), every
exception and console error (``Runtime``) and every browser log error (``Log``: a fetch a
Content-Security-Policy refused lands here), then takes a screenshot.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@dataclass
class PageReport:
    url: str
    requests: list[str] = field(default_factory=list)  # every request but the page itself
    errors: list[str] = field(default_factory=list)  # exceptions, console and log errors
    screenshot: bytes = b""
    values: dict[str, Any] = field(default_factory=dict)  # results of the probe expressions


class _Pipe:
    def __init__(self, proc: subprocess.Popen, write_fd: int, read_fd: int):
        self.proc, self.write_fd, self.read_fd = proc, write_fd, read_fd
        self.buffer = b""
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.write_fd, json.dumps(message).encode() + b"\0")
        wanted = self.next_id
        while True:
            reply = self._read(30)
            if reply.get("id") == wanted:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def pump(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                self.events.append(self._read(left))
            except TimeoutError:
                return

    def wait_event(self, method: str, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while not any(e.get("method") == method for e in self.events):
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no {method} within {seconds}s")
            self.events.append(self._read(left))

    def _read(self, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.read_fd], [], [], max(left, 0))
            if not ready:
                raise TimeoutError("chromium did not answer")
            chunk = os.read(self.read_fd, 1 << 20)
            if not chunk:
                raise RuntimeError(f"chromium exited ({self.proc.poll()})")
            self.buffer += chunk
        raw, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(raw)


def open_page(
    path: Path,
    probes: dict[str, str] | None = None,
    settle: float = 1.5,
    width: int = 1200,
    dark: bool = False,
    hover: str | None = None,
) -> PageReport:
    """Load ``path`` in headless Chromium; ``probes``: name -> JS expression evaluated after
    load and ``settle`` seconds (for charts drawn asynchronously); ``dark``: the page is
    shown as to a reader who prefers a dark colour scheme; ``hover``: a CSS selector whose
    first element the mouse is moved over (real input events) before the probes."""
    to_chrome_r, to_chrome_w = os.pipe()
    from_chrome_r, from_chrome_w = os.pipe()

    def wire():  # in the child: fd 3 reads commands, fd 4 writes replies
        os.dup2(to_chrome_r, 3)
        os.dup2(from_chrome_w, 4)

    profile = tempfile.mkdtemp(prefix="lantide-chromium-")
    proc = subprocess.Popen(
        [
            CHROMIUM,
            "--headless",
            "--remote-debugging-pipe",
            "--no-sandbox",  # CI containers run as root
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            f"--user-data-dir={profile}",
            "about:blank",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=wire,
        pass_fds=(3, 4),
    )
    os.close(to_chrome_r)
    os.close(from_chrome_w)
    pipe = _Pipe(proc, to_chrome_w, from_chrome_r)
    url = path.resolve().as_uri()
    report = PageReport(url)
    try:
        target = pipe.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = pipe.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        for domain in ("Network", "Runtime", "Log", "Page"):
            pipe.send(f"{domain}.enable", session=session)
        pipe.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False},
            session,
        )
        if dark:
            pipe.send(
                "Emulation.setEmulatedMedia",
                {"features": [{"name": "prefers-color-scheme", "value": "dark"}]},
                session,
            )
        pipe.events.clear()
        pipe.send("Page.navigate", {"url": url}, session)
        pipe.wait_event("Page.loadEventFired", 60)
        pipe.pump(settle)
        if hover is not None:
            _hover(pipe, session, hover)
        for name, expression in (probes or {}).items():
            result = pipe.send(
                "Runtime.evaluate", {"expression": expression, "returnByValue": True}, session
            )
            report.values[name] = result.get("result", {}).get("value")
        shot = pipe.send(
            "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}, session
        )
        report.screenshot = base64.b64decode(shot["data"])
        pipe.pump(0.2)
        _collect(pipe.events, report)
        pipe.send("Browser.close")
    finally:
        os.close(to_chrome_w)
        os.close(from_chrome_r)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(profile, ignore_errors=True)
    return report


def _hover(pipe: _Pipe, session: str, selector: str) -> None:
    where = pipe.send(
        "Runtime.evaluate",
        {
            "expression": f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            " if (!e) return null; e.scrollIntoView({block: 'center'});"
            " const r = e.getBoundingClientRect();"
            " return [r.x + r.width / 2, r.y + r.height / 2]; })()",
            "returnByValue": True,
        },
        session,
    )
    point = where.get("result", {}).get("value")
    if not point:
        raise AssertionError(f"nothing matches {selector!r} to hover")
    for dx in (-3, 0):  # a move onto the element, as a mouse arrives
        pipe.send(
            "Input.dispatchMouseEvent",
            {"type": "mouseMoved", "x": point[0] + dx, "y": point[1]},
            session,
        )
    pipe.pump(0.5)


def _collect(events: list[dict[str, Any]], report: PageReport) -> None:
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Network.requestWillBeSent":
            url = params.get("request", {}).get("url", "")
            if url != report.url:
                report.requests.append(url)
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            text = details.get("exception", {}).get("description") or details.get("text")
            report.errors.append(f"exception: {text}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            args = " ".join(str(a.get("value", a.get("description", ""))) for a in params["args"])
            report.errors.append(f"console.{params['type']}: {args}")
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            entry = params["entry"]
            report.errors.append(f"log ({entry.get('source')}): {entry.get('text')}")
