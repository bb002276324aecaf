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
                "--remote-debugging-pipe", f"--user-data-dir={profile}", f"--window-size={width},{height}"]
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
            self._events.append(reply)

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
            self._events.append(self._read())

    def screenshot(self, url: str, path: Path, *, cookies: list[dict[str, Any]] = (), settle_s: float = 0) -> Path:
        """Each page in a new browser context: no cookie carries over from one screenshot to the next.
        `settle_s` gives a page that renders after its load event (Airflow's React UI) time to draw."""
        context = self._send("Target.createBrowserContext")["browserContextId"]
        target = self._send("Target.createTarget", {"url": "about:blank", "browserContextId": context})["targetId"]
        session = self._send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self._send("Page.enable", session=session)
        self._send("Emulation.setDeviceMetricsOverride",
                   {"width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": False},
                   session=session)
        for cookie in cookies:
            self._send("Network.setCookie", cookie, session=session)
        self._send("Page.navigate", {"url": url}, session=session)
        self._wait_event("Page.loadEventFired", session)
        time.sleep(settle_s)
        data = self._send("Page.captureScreenshot", {"format": "png"}, session=session)["data"]
        path.write_bytes(base64.b64decode(data))
        self._send("Target.disposeBrowserContext", {"browserContextId": context})
        return path

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
