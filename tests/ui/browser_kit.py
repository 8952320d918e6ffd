"""What the browser tests share: Debian's chromium through Playwright, the webapp as a user starts
it, logging in, switching tabs, screenshots (``test-artifacts/browser/``).

The ``browser`` and ``page`` fixtures built from these live in ``tests/ui/conftest.py``; each test
module brings its own ``app`` (the webapp with that module's fake-server settings), usually
through :func:`serve_webapp`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from omni_web.paths import REPO_ROOT
from omni_web.server import ServerManager
from omni_web.settings import load_settings
from tests.conftest import DATA_DIR
from tests.fakes.sgl_omni import free_port
from tests.ui.conftest import MODEL
from tests.ui.helpers import AppProcess, cache_model, prepare_root, start_webapp

playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect
# Playwright's assertions wait 5 s by default, tuned to a quiet machine; a loaded 2-core box needs
# more. Every expect() still returns as soon as its condition holds.
expect.set_options(timeout=60_000)

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
ARTIFACTS = REPO_ROOT / "test-artifacts" / "browser"
LONG_S = 180  # generous: CI machines have two cores
VIEWPORT = {"width": 1400, "height": 1000}


def require_chromium() -> None:
    """Skip when Debian's chromium is missing (scripts/test.sh installs it)."""
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (scripts/test.sh installs it)")


def serve_webapp(tmp_path_factory: pytest.TempPathFactory, name: str, env: dict[str, str], *,
                 request_log: bool = False) -> Iterator[AppProcess]:
    """``webapp.py`` over a fresh data root with the fake backend and one cached model; stopped after.

    ``env`` is the fake server's settings (``FAKE_SGL_*``); the Hugging Face cache is added here,
    and with ``request_log`` the fake server's request log, ``requests.jsonl`` beside ``webapp.log``.
    """
    require_chromium()
    base = tmp_path_factory.mktemp(name)
    paths = prepare_root(base / "home", model_keys=(MODEL,))
    cache_model(base / "hf-cache", MODEL)
    full_env = {"HF_HUB_CACHE": str(base / "hf-cache"), **env}
    if request_log:
        full_env["FAKE_SGL_REQUEST_LOG"] = str(base / "requests.jsonl")
    running = start_webapp(
        paths, port=free_port(), host="0.0.0.0", env=full_env, log_path=base / "webapp.log"
    )
    try:
        yield running
    finally:
        running.stop()
        ServerManager(paths, load_settings(paths)).stop(grace_s=5.0)


def launch_chromium() -> Iterator[object]:
    """One headless chromium for a module's tests."""
    with playwright_api.sync_playwright() as driver:
        chromium = driver.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def open_page(browser, app: AppProcess, viewport: dict[str, int] | None = None) -> Iterator[object]:
    """A fresh browser context, logged in to ``app``; closed after."""
    context = browser.new_context(viewport=viewport or VIEWPORT, accept_downloads=True)
    context.set_default_timeout(30_000)
    page = context.new_page()
    log_in(page, app)
    try:
        yield page
    finally:
        context.close()


def log_in(page, app: AppProcess) -> None:
    """Open the printed URL and log in with the printed password."""
    password = app.password()
    assert password, "webapp.py did not print a password on its first start:\n" + app.output()
    page.goto(app.url)
    page.locator("input[type=text]").fill("omni")
    page.locator("input[type=password]").fill(password)
    page.get_by_role("button", name="Login").click()
    expect(page.get_by_role("tab", name="Generate")).to_be_visible(timeout=60_000)


def tab(page, name: str) -> None:
    page.get_by_role("tab", name=name, exact=True).click()


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    # A full-page shot waits for fonts and layout: generous, as a busy 2-core machine needs.
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True, timeout=90_000)


def upload_test_book(page, book: str, title: str) -> None:
    """Upload ``tests/data/<book>`` on Generate and wait for its title."""
    tab(page, "Generate")
    page.locator("#gen-epub input[type=file]").set_input_files(str(DATA_DIR / book))
    expect(page.locator("#gen-book")).to_contain_text(title, timeout=60_000)


def job_badge(page):
    """The selected job's state badge on the Jobs tab."""
    return page.locator("#jobs-detail .ow-status .ow-badge").first
