"""Library delivery in the real app: Settings → Library delivery tests a (fake, real-HTTP)
Audiobookshelf and saves it; the running webapp.py serves /opds only with the UI's login."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.fakes.fake_abs import FakeAbs, serve_fake_abs
from tests.ui.browser_kit import expect, serve_webapp, shot, tab
from tests.ui.helpers import AppProcess

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppProcess]:
    yield from serve_webapp(tmp_path_factory, "browser-delivery", {})


def _login(app: AppProcess) -> tuple[str, str]:
    match = re.search(r"Login: user '([^']+)', password '([^']+)'", app.output())
    assert match, app.output()
    return match.group(1), match.group(2)


def _wait_for_settings_load(page) -> None:
    """The page's load event fills every Settings field at once, this line among them."""
    expect(page.locator("#settings-web-port-now")).to_contain_text(
        "This app is running on port", timeout=60_000
    )


def _type(field, text: str) -> None:
    """Type into a field of the just-opened accordion until the text stays: a full run once saw
    the URL emptied right after it was typed, while the token typed next stayed."""
    for _ in range(3):
        field.fill(text)
        try:
            expect(field).to_have_value(text, timeout=5_000)
            return
        except AssertionError:
            continue
    expect(field).to_have_value(text)


def test_the_shelf_needs_the_login(app) -> None:
    base = app.url.rstrip("/")
    assert httpx.get(f"{base}/opds/", timeout=30).status_code == 401
    assert httpx.get(f"{base}/opds/", auth=("nobody", "guess"), timeout=30).status_code == 401
    answer = httpx.get(f"{base}/opds/", auth=_login(app), timeout=30)
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("application/atom+xml")
    assert b"<feed" in answer.content


def test_settings_test_lists_the_libraries_and_save_keeps_them(page, app, tmp_path: Path) -> None:
    fake = FakeAbs(tmp_path / "abs")
    with serve_fake_abs(fake) as url:
        tab(page, "Settings")
        _wait_for_settings_load(page)  # else the saved (empty) fields could land over what is typed
        page.locator("#settings-abs").get_by_text("Library delivery").click()
        url_field = page.locator("#settings-abs-url input, #settings-abs-url textarea").first
        _type(url_field, url)
        _type(page.locator("#settings-abs-token input"), fake.token)
        _type(url_field, url)  # still there after the token was typed
        page.locator("#settings-abs-test").click()
        expect(page.locator("#settings-abs-status")).to_contain_text(
            "Audiobooks (book, 1 folder)", timeout=30_000
        )
        page.locator("#settings-abs-enabled input").check()
        page.locator("#settings-abs-save").click()
        expect(page.locator("#settings-abs-status")).to_contain_text("Delivery: on", timeout=30_000)
        shot(page, "settings-delivery")
    page.reload()
    tab(page, "Settings")
    _wait_for_settings_load(page)
    page.locator("#settings-abs").get_by_text("Library delivery").click()
    expect(page.locator("#settings-abs-url input, #settings-abs-url textarea").first).to_have_value(url)
