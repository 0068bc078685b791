"""Fixtures for the robots.txt Tester: the server in a thread, a headless Chromium.

The browser is Debian's ``chromium`` driven through ``chromium-driver`` by
Selenium; CI installs both (``apt-get install -y chromium chromium-driver``).
A machine without them fails these tests: they never skip.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from commands.conftest import command_path  # noqa: F401 (scrapy robots --serve)

from scrapy_rep.tools.tester.server import TesterConfig, TesterServer, make_server

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
APT_LINE = "apt-get install -y chromium chromium-driver"
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--window-size=1280,1000",
)
DOCS_STATIC = Path(__file__).resolve().parents[3] / "docs" / "_static"


@dataclass
class Running:
    server: TesterServer

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def token(self) -> str:
        return self.server.config.token

    def call(
        self,
        path: str,
        data: dict[str, Any] | None = None,
        *,
        token: str | None = "",
        headers: dict[str, str] | None = None,
    ) -> tuple[int, dict[str, Any]]:
        """One API call: (status, JSON answer); ``token=None`` sends none."""
        sent = dict(headers or {})
        if token is not None:
            sent["X-Tester-Token"] = token or self.token
        body = None
        if data is not None:
            body = json.dumps(data).encode()
            sent.setdefault("Content-Type", "application/json")
        request = urllib.request.Request(self.url + path.lstrip("/"), body, sent)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            with error:
                return error.code, json.loads(error.read() or b"{}")


@pytest.fixture
def start_tester() -> Iterator[Callable[..., Running]]:
    """``start_tester(host=..., **TesterConfig fields)`` -> a running tester
    (on 127.0.0.1 unless ``host`` says otherwise; tests connect over loopback)."""
    running: list[tuple[TesterServer, threading.Thread]] = []

    def start(host: str = "127.0.0.1", **fields: Any) -> Running:
        server = make_server(TesterConfig(**fields), host, 0)
        thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        thread.start()
        running.append((server, thread))
        return Running(server)

    yield start
    for server, thread in running:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless Chromium with a fresh profile; fails (never skips) without one."""
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        pytest.fail(f"{CHROMIUM} and {CHROMEDRIVER} are needed: {APT_LINE}")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="tester-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.rep_profile = profile
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def wait_ready(driver: Any, runs: int = 1, timeout: float = 20) -> None:
    """Until the page has shown the answers of ``runs`` tests."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, timeout).until(
        lambda d: int(d.execute_script("return Number(document.body.dataset.runs || 0)")) >= runs
    )


def rows(driver: Any) -> list[dict[str, str]]:
    """The results table as the page shows it: one dict per row, from its data-*."""
    found: list[dict[str, str]] = driver.execute_script(
        "return Array.from(document.querySelectorAll('#results tbody tr')).map(tr => ({"
        "url: tr.dataset.url, agent: tr.dataset.agent, verdict: tr.dataset.verdict,"
        "line: tr.dataset.line, group: tr.dataset.group}))"
    )
    return found


def lit(driver: Any) -> list[int]:
    """The editor's lines lit as deciding the selected result."""
    found: list[int] = driver.execute_script(
        "return Array.from(document.querySelectorAll('#editor-lines .ln.decides'))"
        ".map(l => Number(l.dataset.line))"
    )
    return found


PHONE_HEIGHT = 900


@contextmanager
def narrow(driver: Any, width: int) -> Iterator[None]:
    """The page as a phone ``width`` px wide shows it. Headless Chromium makes
    no window narrower than 500 px; this emulates the screen (DevTools'
    ``Emulation.setDeviceMetricsOverride``), as a phone, which honours the
    page's viewport meta (and lays a page without one out 980 px wide)."""
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": PHONE_HEIGHT, "deviceScaleFactor": 1, "mobile": True},
    )
    try:
        yield
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def screenshot(driver: Any, name: str, width: int = 1280) -> Path:
    """The whole page as a PNG, or below 1280 px (inside ``narrow``) the
    phone's screen as it is: into docs/_static with ``REP_TESTER_SCREENSHOTS=docs``
    (to refresh docs/tester.md's pictures), else into a temporary directory, so
    that a test run leaves the tree as it found it."""
    docs = os.environ.get("REP_TESTER_SCREENSHOTS") == "docs"
    where = DOCS_STATIC if docs else Path(driver.rep_profile) / "shots"  # removed with it
    where.mkdir(parents=True, exist_ok=True)
    path = where / f"tester-{name}.png"
    height = int(driver.execute_script("return document.documentElement.scrollHeight"))
    if width < 1280:
        assert driver.execute_script("return window.innerWidth") == width  # see narrow()
        driver.save_screenshot(str(path))
    else:
        driver.set_window_size(1280, min(max(height + 140, 800), 2400))
        driver.save_screenshot(str(path))
        driver.set_window_size(1280, 1000)
    assert path.read_bytes().startswith(b"\x89PNG")
    return path
