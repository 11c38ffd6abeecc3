"""The web frontend in Debian's headless Chromium (driven by Playwright, no browser downloaded), against the
whole stack as real processes with a litecoind and the Tron double, their watchers, and GPU test hosts.

Every test saves a screenshot of each step under var/browser-screenshots/<test>/.
"""

import re
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from infra.local.isolation import running_stack
from infra.local.stack import ROOT
from tests.e2e.conftest import running_devnet

NETWORKS = ("litecoin", "tron")
SCREENSHOTS = ROOT / "var" / "browser-screenshots"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# A page waits for the services (a login hashes with argon2): on a loaded 2-core machine that can take seconds.
expect.set_options(timeout=15_000)


@pytest.fixture(scope="session")
def devnet(tmp_path_factory):
    with running_devnet(tmp_path_factory.mktemp("devnet"), NETWORKS) as devnet:
        yield devnet


@pytest.fixture(scope="session")
def stack(devnet, tmp_path_factory):
    if set(devnet.up) != set(NETWORKS):
        pytest.fail(f"the browser tests need litecoind and the Tron double: {devnet.skipped}")
    with running_stack(Path(tmp_path_factory.mktemp("browser-stack")), "kd_web", devnet.env(), devnet.up) as stack:
        yield stack


@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as playwright:
        # --no-sandbox: the tests run as root in a container, where Chromium's sandbox cannot start.
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        yield browser
        browser.close()


class Steps:
    """Screenshots of a test's steps, numbered in order."""

    def __init__(self, name: str):
        self.dir = SCREENSHOTS / re.sub(r"[^\w.-]+", "_", name)
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)
        self.count = 0

    def shot(self, page: Page, what: str) -> None:
        self.count += 1
        page.screenshot(path=self.dir / f"{self.count:02d}-{what}.png", full_page=True)


@pytest.fixture
def steps(request) -> Steps:
    return Steps(request.node.name)


def new_page(browser: Browser, stack, language: str = "en", width: int = 1280) -> Page:
    """A fresh browser (its own cookies) showing the frontend in `language`."""
    context = browser.new_context(
        base_url=stack.url, locale=language, viewport={"width": width, "height": 900}, color_scheme="light"
    )
    context.set_default_timeout(15_000)
    page = context.new_page()
    page.goto("/")
    return page


@pytest.fixture
def page(browser, stack):
    page = new_page(browser, stack)
    yield page
    page.context.close()
