"""Debian's `chromium`, headless, driven through Debian's `chromium-driver` by Selenium (W3C WebDriver): a
user's clicks and keys, the page's DOM read with JavaScript, screenshots kept as the run's artifacts."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from selenium.common.exceptions import JavascriptException, StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

#: drawn: laid out with an area on the page (a rect the browser did not render has none)
_DRAWN = "(e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; })"


class Browser:
    """One headless chromium (a module's tests share it: `forget` signs the previous user out)."""

    def __init__(self, *, width: int = 1800, height: int = 1300) -> None:
        chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
        if chromium is None or driver is None:
            pytest.fail("the browser tests need Debian's `chromium` and `chromium-driver` packages "
                        "(sudo apt-get install -y chromium chromium-driver)")
        options = webdriver.ChromeOptions()
        options.binary_location = chromium
        for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                    "--lang=en-US",  # date fields take keys in en-US order
                    f"--window-size={width},{height}"):
            options.add_argument(arg)
        # the driver Debian ships for this chromium: Selenium's own manager would download one
        self.driver = webdriver.Chrome(options=options, service=Service(executable_path=driver))

    def goto(self, url: str) -> None:
        self.driver.get(url)  # returns once the page's load event fired

    def sign_in(self, url: str, token: str) -> None:
        """Airflow's session cookie for `url` (a page of the site must be open to set it)."""
        self.goto(f"{url}/api/v2/version")
        self.driver.add_cookie({"name": "_token", "value": token, "path": "/", "httpOnly": True})

    def forget(self, url: str) -> None:
        """Every cookie and stored value of the site: the next page is a stranger's."""
        self.driver.execute_cdp_cmd("Storage.clearDataForOrigin", {"origin": url, "storageTypes": "all"})
        self.goto("about:blank")

    def evaluate(self, expression: str) -> Any:
        return self.driver.execute_script(f"return ({expression});")

    def wait_for(self, expression: str, *, timeout_s: float = 60, what: str = "") -> Any:
        """The first truthy value of `expression`: the React UI draws after its load event, and again after
        each click, so the test waits for what it looks for rather than for a fixed time."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                if value := self.evaluate(expression):
                    return value
            except (JavascriptException, StaleElementReferenceException):  # the page changed under it
                pass
            except TimeoutException:  # the page's renderer busy past WebDriver's script timeout: no answer yet
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"waited {timeout_s:.0f} s for {what or expression}; the page shows:\n"
                                     f"{self.text()[:3000]}")
            time.sleep(0.25)

    def drawn(self, selector: str, *, in_frame: bool = False) -> int:
        """How many elements `selector` finds that the browser laid out with an area; `in_frame`: in the
        page's drawn iframe (a page of the same site), none while there is none."""
        return self.evaluate(_drawn_js(selector, in_frame))

    def wait_drawn(self, selector: str, *, in_frame: bool = False, what: str = "") -> int:
        """`drawn(selector)` once it finds any: a page, or a frame, draws after its load event."""
        return self.wait_for(_drawn_js(selector, in_frame), what=what or selector)

    def text(self) -> str:
        return self.evaluate("document.body ? document.body.innerText : ''") or ""

    def type_into(self, selector: str, keys: str) -> None:
        """Click the field and type `keys` as a user does (a date field takes the digits of its locale's
        order, e.g. 11102026 for 2026-11-10 in en-US)."""
        field = self.driver.find_element(By.CSS_SELECTOR, selector)
        field.click()
        field.send_keys(keys)

    def click(self, selector: str) -> None:
        self.driver.find_element(By.CSS_SELECTOR, selector).click()

    def screenshot(self, path: Path) -> Path:
        assert self.driver.save_screenshot(str(path)), f"no screenshot taken into {path}"
        return path

    def close(self) -> None:
        self.driver.quit()  # the driver ends its chromium and the browser's helpers


def _drawn_js(selector: str, in_frame: bool) -> str:
    found = f"querySelectorAll({json.dumps(selector)})"
    if not in_frame:
        return f"[...document.{found}].filter({_DRAWN}).length"
    return (f"[...document.querySelectorAll('iframe')].filter({_DRAWN})"
            f".flatMap(f => f.contentDocument ? [...f.contentDocument.{found}] : []).filter({_DRAWN}).length")


def filled(colour: str) -> str:
    """The timeline chart's shapes filled with `colour`: its bars and its legend's swatch."""
    return f'svg.hudi-timeline rect[fill="{colour}"]'
