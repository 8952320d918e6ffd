"""The Server tab shows the farm in a real browser: a box (an agent process with the fake backend
and its own data root) joins ``webapp.py`` with a farm token made by the CLI, and the tab lists
it with its GPUs; the page then pins it to a model (the app's watcher makes it serve), drains it
and removes it (its agent really stops its servers, and the box leaves the list)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from omni_web.catalog import get_entry
from omni_web.farm import FarmRegistry
from omni_web.paths import DataPaths
from tests.farm.farmkit import start_agent, wait_for
from tests.ui.browser_kit import LONG_S, expect, open_page, serve_webapp, shot, tab
from tests.ui.conftest import MODEL
from tests.ui.helpers import AppProcess

pytestmark = pytest.mark.browser
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppProcess]:
    yield from serve_webapp(tmp_path_factory, "farm-app", {})


def _app_home(app: AppProcess) -> Path:
    return app.log_path.parent / "home"


def _answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


def _pick(page, elem_id: str, option: str) -> None:
    page.locator(f"#{elem_id} input").click()
    page.get_by_role("option", name=option, exact=True).click()


def _pin_drain_and_remove(page, registry: FarmRegistry, box_id: str) -> None:
    """Switch model (a pin), Drain and Remove, each clicked in the page and checked on the box."""
    notice, farm = page.locator("#server-farm-notice"), page.locator("#server-farm-boxes")
    expect(page.locator("#server-farm-pick input")).to_have_value(re.compile(r"^gpu-box-1 \("))
    _pick(page, "server-farm-model", get_entry(MODEL).label)
    page.locator("#server-farm-switch").click()
    expect(notice).to_contain_text(f"Pinned box gpu-box-1 ({box_id})")
    # no server group runs: the watcher boots the pinned model outside the router, and the list,
    # redrawn by its timer, says so
    expect(farm).to_contain_text(f"standby {MODEL}", timeout=LONG_S * 1000)
    shot(page, "server-farm-standby")
    urls = registry.box(box_id).worker_urls
    assert len(urls) == 2 and all(_answers(url) for url in urls)
    page.locator("#server-farm-drain").click()
    expect(notice).to_contain_text(f"Drained box gpu-box-1 ({box_id})")
    expect(farm).to_contain_text(f"box gpu-box-1 ({registry.box(box_id).agent_url}): drained")
    assert registry.box(box_id).drained and all(_answers(url) for url in urls)  # drained, not stopped
    page.locator("#server-farm-show-log").click()  # the agent's own log, read over its API
    expect(page.locator("#server-farm-log textarea")).to_have_value(re.compile(rf"Joined .* as box {box_id}"))
    page.locator("#server-farm-remove").click()
    expect(notice).to_contain_text(f"Removed box gpu-box-1 ({box_id})")
    expect(farm).to_have_count(0)
    expect(page.locator("#server-farm-controls")).to_be_hidden()
    assert registry.boxes() == () and not any(_answers(url) for url in urls)


def test_the_server_tab_lists_a_box_that_joined(browser, app, tmp_path) -> None:
    home = _app_home(app)
    made = subprocess.run(
        [sys.executable, "-m", "omni_web", "token", "--farm", "create", "lab"], cwd=REPO, capture_output=True,
        text=True, env={**os.environ, "OMNI_WEB_HOME": str(home)}, timeout=120, check=True,
    )
    secret = made.stdout.splitlines()[0]
    agent = start_agent(app.url, secret, tmp_path / "gpu-box-1", gpus="0,1")
    try:
        registry = FarmRegistry(DataPaths(root=home), lambda: None)
        (box,) = wait_for(registry.boxes, "the box to join the app", 60)
        for page in open_page(browser, app):
            tab(page, "Server")
            farm = page.locator("#server-farm-boxes")
            expect(farm).to_contain_text("Farm: 1 box")
            expect(farm).to_contain_text("box gpu-box-1")
            expect(farm).to_contain_text("GPU 1:")
            _pin_drain_and_remove(page, registry, box.id)
        assert agent.popen.poll() is None  # removed, its agent waits: it can join again
    finally:
        assert agent.stop() == 0
