"""Fixtures for the Playwright browser tests: one headless Debian Chromium per module, a fresh context per test.

Imported by tests/annotation/test_browser.py (not a conftest.py, so the other annotation tests don't pay for it).
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# Playwright's sync API runs an asyncio loop in this thread; the ORM calls the tests make between browser steps
# are still plain synchronous calls, so Django's async-safety guard would refuse them without this.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
__all__ = ["browser", "context", "page", "phone_page", "shots"]

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def browser(django_db_setup: None) -> Iterator[Any]:
    from django.db import connections
    from playwright.sync_api import sync_playwright

    if not CHROMIUM.exists():
        raise RuntimeError(f"{CHROMIUM} is missing: run `make browsers` (apt-get install chromium) first")
    # While Playwright's event loop runs in this thread, Django's thread-critical connection storage switches to
    # its async (context-local) slot, i.e. to fresh connection objects, closed below.
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()
        connections.close_all()  # the loop-context connections: close them before their storage disappears


# Generous: the shared 2-core machine is often under heavy load from other test suites.
TIMEOUT_MS = 30_000


def _failure_shot(request: pytest.FixtureRequest, page: Any, failed_before: int, artifacts_dir: Path) -> None:
    """A failing test leaves a screenshot of where the page was, to see why without rerunning."""
    if request.session.testsfailed > failed_before:
        directory = artifacts_dir / "screenshots"
        directory.mkdir(parents=True, exist_ok=True)
        name = re.sub(r"[^A-Za-z0-9_-]+", "-", request.node.name.removeprefix("test_"))
        try:
            page.screenshot(path=str(directory / f"FAILED-{name}.png"), full_page=True)
        except Exception:  # noqa: BLE001 - a crashed page must not hide the test's own failure
            pass


def _new_page(context: Any) -> Any:
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.js_errors = errors  # checked by tests: a script error must fail the test, not pass silently
    return page


@pytest.fixture
def context(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport=DESKTOP)
    yield context
    context.close()


@pytest.fixture
def page(context: Any, request: pytest.FixtureRequest, artifacts_dir: Path) -> Iterator[Any]:
    failed_before = request.session.testsfailed
    page = _new_page(context)
    yield page
    _failure_shot(request, page, failed_before, artifacts_dir)
    page.close()


@pytest.fixture
def phone_page(browser: Any, request: pytest.FixtureRequest, artifacts_dir: Path) -> Iterator[Any]:
    failed_before = request.session.testsfailed
    context = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True)
    page = _new_page(context)
    yield page
    _failure_shot(request, page, failed_before, artifacts_dir)
    context.close()


class Shots:
    """Saves one screenshot per screen under test-artifacts/screenshots/<test>-<nn>-<screen>.png."""

    def __init__(self, directory: Path, prefix: str) -> None:
        self.directory = directory
        self.prefix = prefix
        self.count = 0
        self.saved: list[Path] = []

    def __call__(self, page: Any, screen: str) -> Path:
        self.count += 1
        path = self.directory / f"{self.prefix}-{self.count:02d}-{screen}.png"
        page.screenshot(path=str(path), full_page=True)
        self.saved.append(path)
        return path


@pytest.fixture
def shots(artifacts_dir: Path, request: pytest.FixtureRequest) -> Shots:
    directory = artifacts_dir / "screenshots"
    directory.mkdir(parents=True, exist_ok=True)
    prefix = re.sub(r"[^A-Za-z0-9_-]+", "-", request.node.name.removeprefix("test_"))
    for old in directory.glob(f"{prefix}-*.png"):
        old.unlink()
    return Shots(directory, prefix)
