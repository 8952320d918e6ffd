"""Agents join the app's farm: refused without a farm token, served with one (separate processes)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from omni_web.farm.registry import FarmBox, FarmRegistry
from omni_web.farm.tokens import farm_token_store
from omni_web.paths import DataPaths
from tests.farm.farmkit import REPO, FarmApp, start_agent, start_farm_app, wait_for

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


def test_a_bare_box_with_a_wrong_token_is_refused_before_it_installs_anything(
    farm_app: FarmApp, tmp_path: Path
) -> None:
    farm_token_store(farm_app.registry._paths).create("lab")
    home = tmp_path / "bare-box"
    # pip may not reach any index: an install attempt would fail with pip's message, not the refusal
    agent = start_agent(farm_app.url, "ow_mistyped", home, bare=True, env={"PIP_NO_INDEX": "1"})
    try:
        assert agent.popen.wait(timeout=60) == 1
    finally:
        agent.stop()
    assert "refused this box" in agent.output()
    assert not DataPaths(root=home).backend_venv.exists()
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



def test_server_status_lists_the_farm_boxes_gpus_and_workers(tmp_path: Path) -> None:
    home = tmp_path / "app"
    paths = DataPaths(root=home).ensure()
    registry = FarmRegistry(paths, lambda: None)
    box = FarmBox(id="b1", name="lab-1", agent_url="http://10.0.0.5:30090", secret="s",
                  gpus=({"index": 0, "name": "RTX 4090", "compute_capability": [8, 9],
                         "total_memory_bytes": 24 * 1024**3},),
                  model_key=MODEL, worker_urls=("http://10.0.0.5:30100",), state="serving", joined_at=1.0)
    registry._save(box)
    argv = [sys.executable, "-m", "omni_web", "server", "status"]
    env = {**os.environ, "OMNI_WEB_HOME": str(home)}
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    lines = done.stdout.splitlines()
    assert "Farm: 1 box" in lines
    assert f"  box lab-1 (http://10.0.0.5:30090): serving {MODEL}, joined " in done.stdout
    assert "    GPU 0: RTX 4090, cc 8.9, 24.0 GiB" in lines
    assert "      worker http://10.0.0.5:30100: not in the router" in lines


def test_the_join_script_runs_the_agent_from_the_repository(farm_app: FarmApp, tmp_path: Path) -> None:
    """scripts/join.sh (for a box with only a clone): the venv is there, so it goes straight on to
    agent join, which reads the token from OMNI_WEB_FARM_TOKEN; a wrong one is refused."""
    farm_token_store(farm_app.registry._paths).create("lab")
    env = {**os.environ, "OMNI_WEB_HOME": str(tmp_path / "box"), "OMNI_WEB_FARM_TOKEN": "ow_mistyped",
           "PIP_NO_INDEX": "1", "PYTHON": sys.executable}
    done = subprocess.run(["bash", str(REPO / "scripts" / "join.sh"), farm_app.url], capture_output=True,
                          text=True, env=env, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "refused this box" in done.stdout + done.stderr
    assert farm_app.registry.boxes() == ()
