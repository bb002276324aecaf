"""Headless Chromium (Debian's `chromium`) driven over the DevTools protocol, to screenshot a page as a
logged-in user: the protocol runs on a pipe (`--remote-debugging-pipe`), so no port is opened."""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest


def _above_4(fd: int) -> int:
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return moved


class Chromium:
    def __init__(self, profile: Path, *, width: int = 1200, height: int = 1400) -> None:
        binary = shutil.which("chromium")
        if binary is None:
            pytest.fail("needs Debian's `chromium` package for the headless screenshots")
        # Chromium reads our commands on fd 3 and answers on fd 4, messages ending with NUL. bash puts the
        # pipe ends there: subprocess passes fds only under their own numbers, and dash takes one digit.
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        to_browser_r, from_browser_w = _above_4(to_browser_r), _above_4(from_browser_w)  # or 3<& may clobber 4
        args = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                "--remote-debugging-pipe", "--lang=en-US",  # date fields take keys in en-US order
                f"--user-data-dir={profile}", f"--window-size={width},{height}"]
        self._proc = subprocess.Popen(
            ["bash", "-c", f'exec "$0" "$@" 3<&{to_browser_r} 4>&{from_browser_w} {to_browser_r}<&- '
             f'{from_browser_w}>&-', binary, *args],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(to_browser_r, from_browser_w), start_new_session=True,  # its helpers go with it
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.width, self.height = width, height
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict[str, Any]] = []

    def _send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._keep(reply)

    def _read(self, timeout_s: float = 60.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while b"\0" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self._proc.poll() is not None:
                raise RuntimeError("Chromium stopped answering on the DevTools pipe")
            if not select.select([self._from_browser], [], [], min(remaining, 1.0))[0]:
                continue
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def _wait_event(self, method: str, session: str) -> None:
        while True:
            for i, event in enumerate(self._events):
                if event.get("method") == method and event.get("sessionId") == session:
                    del self._events[i]
                    return
            self._keep(self._read())

    def _keep(self, event: dict[str, Any]) -> None:
        if event.get("method") == "Page.loadEventFired":  # the only event anything waits for
            self._events.append(event)

    def _forget_loads(self, session: str) -> None:
        """Drop the load events of `session` so far: those of earlier navigations (a form's submit)."""
        self._events = [e for e in self._events if e.get("sessionId") != session]

    def page(self, *, cookies: Sequence[dict[str, Any]] = ()) -> Page:
        """A tab in a new browser context: no cookie carries over from one page to the next."""
        context = self._send("Target.createBrowserContext")["browserContextId"]
        target = self._send("Target.createTarget", {"url": "about:blank", "browserContextId": context})["targetId"]
        session = self._send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session, context)
        page.send("Page.enable")
        page.send("Emulation.setDeviceMetricsOverride",
                  {"width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": False})
        for cookie in cookies:
            page.send("Network.setCookie", cookie)
        return page

    def screenshot(self, url: str, path: Path, *, cookies: Sequence[dict[str, Any]] = (), settle_s: float = 0) -> Path:
        """`settle_s` gives a page that renders after its load event (Airflow's React UI) time to draw."""
        with self.page(cookies=cookies) as page:
            page.goto(url)
            time.sleep(settle_s)
            return page.screenshot(path)

    def close(self) -> None:
        with contextlib.suppress(RuntimeError):  # it may already be gone
            self._send("Browser.close")
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(timeout=20)
        with contextlib.suppress(ProcessLookupError):  # renderers and helpers outlive a stuck browser
            os.killpg(self._proc.pid, signal.SIGKILL)
        self._proc.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Page:
    """One tab: navigate, run JavaScript in it, type and click as a user does, take screenshots."""

    def __init__(self, browser: Chromium, session: str, context: str) -> None:
        self.browser, self.session, self.context = browser, session, context

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.browser._send(method, params, self.session)

    def goto(self, url: str) -> None:
        self.browser._forget_loads(self.session)
        self.send("Page.navigate", {"url": url})
        self.browser._wait_event("Page.loadEventFired", self.session)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (a promise is awaited)."""
        reply = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in reply:
            raise RuntimeError(f"{expression}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def wait_for(self, expression: str, *, timeout_s: float = 60, what: str = "") -> Any:
        """The first truthy value of `expression`: the React UI draws after its load event, and again
        after each click, so the test waits for what it looks for rather than for a fixed time."""
        deadline = time.monotonic() + timeout_s
        probe = f"(() => {{ const v = ({expression}); return v instanceof Node ? true : v; }})()"  # a Node: found
        while not (value := self._probe(probe)):
            if time.monotonic() > deadline:
                raise AssertionError(f"waited {timeout_s:.0f} s for {what or expression}; the page shows:\n"
                                     f"{self.text()[:3000]}")
            time.sleep(0.25)
        return value

    def _probe(self, expression: str) -> Any:
        try:
            return self.evaluate(expression)
        except RuntimeError:  # the page navigated away under it (a click's doing): ask the next one
            return None

    def text(self) -> str:
        return self.evaluate("document.body ? document.body.innerText : ''") or ""

    def type_into(self, selector: str, keys: str) -> None:
        """Click the field `selector` finds and type `keys`, one key at a time, as a user does (a date
        field takes the digits of its locale's order, e.g. 11102026 for 2026-11-10 in en-US)."""
        self.click(selector)
        for key in keys:
            self.send("Input.dispatchKeyEvent", {"type": "keyDown", "key": key, "text": key})
            self.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": key})

    def click(self, selector: str) -> None:
        """Click the element at the centre of what `selector` finds, with the mouse."""
        box = self.evaluate(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return null; "
                            f"e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect(); "
                            f"return [r.x + r.width / 2, r.y + r.height / 2]; }})()")
        assert box, f"nothing to click at {selector} on the page:\n{self.text()[:3000]}"
        for event in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent",
                      {"type": event, "x": box[0], "y": box[1], "button": "left", "clickCount": 1})

    def screenshot(self, path: Path) -> Path:
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        self.browser._send("Target.disposeBrowserContext", {"browserContextId": self.context})

    def __enter__(self) -> Page:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
