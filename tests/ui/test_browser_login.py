"""The login page in Debian's chromium through ``webapp.py``: a wrong password keeps the username
typed (Gradio's own form empties both fields), and the right one then logs in."""

from __future__ import annotations

import pytest

from omni_web.paths import DataPaths
from tests.fakes.sgl_omni import free_port
from tests.ui.browser_kit import VIEWPORT, expect
from tests.ui.helpers import start_webapp

pytestmark = pytest.mark.browser


def test_a_wrong_password_keeps_the_username(browser, tmp_path):
    paths = DataPaths(tmp_path / "home").ensure()
    env = {"OMNI_WEB_AUTH": "reader:pw-123"}
    app = start_webapp(paths, port=free_port(), env=env, log_path=tmp_path / "login.log")
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        page.goto(app.url)
        user, password = page.locator("input[type=text]"), page.locator("input[type=password]")
        user.fill("reader")
        password.fill("wrong")
        page.get_by_role("button", name="Login").click()
        expect(page.get_by_text("Incorrect Credentials")).to_be_visible(timeout=30_000)
        expect(user).to_have_value("reader")
        expect(password).to_have_value("")
        password.fill("wrong again")  # a second refusal too (the message is already shown)
        page.get_by_role("button", name="Login").click()
        expect(password).to_have_value("", timeout=30_000)
        expect(user).to_have_value("reader")
        password.fill("pw-123")  # the kept name is the form's own: only the password is typed again
        page.get_by_role("button", name="Login").click()
        expect(page.get_by_role("tab", name="Generate")).to_be_visible(timeout=60_000)
    finally:
        context.close()
        app.stop()
