"""The Server tab shows the farm in a real browser: a box (an agent process with the fake backend
and its own data root) joins ``webapp.py`` with a farm token made by the CLI, and the tab lists
it with its GPUs."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from omni_web.farm import FarmRegistry
from omni_web.paths import DataPaths
from tests.farm.farmkit import start_agent, wait_for
from tests.ui.browser_kit import expect, open_page, serve_webapp, tab
from tests.ui.helpers import AppProcess

pytestmark = pytest.mark.browser
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppProcess]:
    yield from serve_webapp(tmp_path_factory, "farm-app", {})


def _app_home(app: AppProcess) -> Path:
    return app.log_path.parent / "home"


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
        wait_for(registry.boxes, "the box to join the app", 60)
        for page in open_page(browser, app):
            tab(page, "Server")
            farm = page.locator("#server-farm-boxes")
            expect(farm).to_contain_text("Farm: 1 box")
            expect(farm).to_contain_text("box gpu-box-1")
            expect(farm).to_contain_text("GPU 1:")
    finally:
        assert agent.stop() == 0
