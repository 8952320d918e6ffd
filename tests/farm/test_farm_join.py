"""Agents join the app's farm: refused without a farm token, served with one (separate processes)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from omni_web.farm.registry import FarmRegistry
from omni_web.farm.tokens import farm_token_store
from omni_web.paths import DataPaths
from tests.fakes.sgl_omni import install_fake_sgl_omni
from tests.farm.farmkit import FarmApp, start_agent, start_farm_app, wait_for

MODEL = "qwen3_tts_0_6b_customvoice"


@pytest.fixture
def farm_app(tmp_path: Path) -> Iterator[FarmApp]:
    paths = DataPaths(root=tmp_path / "app").ensure()
    app = start_farm_app(FarmRegistry(paths, lambda: None))
    yield app
    app.stop()


def test_an_agent_without_a_valid_token_is_refused(farm_app: FarmApp, tmp_path: Path) -> None:
    farm_token_store(farm_app.registry._paths).create("lab")
    agent = start_agent(farm_app.url, "ow_not-a-token", tmp_path / "box1")
    try:
        assert agent.popen.wait(timeout=60) == 1
    finally:
        agent.stop()
    assert "refused this box" in agent.output()
    assert farm_app.registry.boxes() == ()
    anonymous = httpx.post(f"{farm_app.url}/farm/v1/join", json={"name": "x", "agent_url": "http://x:1",
                                                                 "secret": "s"})
    assert anonymous.status_code == 401
    assert farm_app.registry.boxes() == ()


def test_a_joined_box_serves_the_model_it_is_told(farm_app: FarmApp, tmp_path: Path) -> None:
    _token, secret = farm_token_store(farm_app.registry._paths).create("lab")
    agent = start_agent(farm_app.url, secret, tmp_path / "box1", gpus="0,1")
    try:
        box = wait_for(lambda: farm_app.registry.boxes(), "the box to join", 60)[0]
        assert [g["index"] for g in box.gpus] == [0, 1]
        served = farm_app.registry.call_agent(box, "POST", "/serve", {"model": MODEL}, timeout_s=120)
        urls = [w["url"] for w in served["workers"]]
        assert len(urls) == 2 and all(httpx.get(f"{u}/health").status_code == 200 for u in urls)
        assert {w["gpu"] for w in served["workers"]} == {0, 1}
        assert "farm" in farm_app.registry.agent_log(box.id) or farm_app.registry.agent_log(box.id) == ""
        denied = httpx.get(f"{box.agent_url}/status", headers={"Authorization": "Bearer wrong"})
        assert denied.status_code == 401
    finally:
        assert agent.stop() == 0
    assert farm_app.registry.boxes() == ()  # it said it leaves
    assert all(_refused(u) for u in urls)  # and its servers are gone


def _refused(url: str) -> bool:
    try:
        httpx.get(f"{url}/health", timeout=2)
    except httpx.HTTPError:
        return True
    return False


del install_fake_sgl_omni
