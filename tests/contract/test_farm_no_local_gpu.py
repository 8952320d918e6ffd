"""An app on a machine without a GPU (GPUs: none) renders a book on its farm's boxes alone: its
router (the REAL one) starts with the workers the boxes serve for the book's model."""

from __future__ import annotations

from pathlib import Path

import pytest

from omni_web.assemble import probe_chapters
from omni_web.catalog import get_entry
from omni_web.client import VoiceChoice
from omni_web.errors import ServerStartError
from omni_web.farm import FarmRegistry, FarmWatcher, farm_token_store, group_target
from omni_web.paths import DataPaths
from omni_web.pipeline import ConvertRequest, convert_served
from omni_web.server.router import read_router_health
from omni_web.services import build_server_manager
from omni_web.settings import Settings
from tests.conftest import DATA_DIR
from tests.contract.setup_env import ContractVenv
from tests.fakes.sgl_omni import free_port, install_fake_sgl_omni, install_router
from tests.farm.farmkit import AgentProcess, start_agent, start_farm_app, wait_for

pytestmark = [pytest.mark.contract, pytest.mark.slow]

MODEL = "qwen3_tts_0_6b_customvoice"
BOOK = DATA_DIR / "wasteland.epub"


@pytest.fixture
def app_home(
    data_paths: DataPaths, contract_venv: ContractVenv, monkeypatch: pytest.MonkeyPatch
) -> DataPaths:
    """The app's data root: its backend venv with the router (and an sgl-omni it never runs)."""
    install_fake_sgl_omni(data_paths.backend_venv, companions=False)
    install_router(data_paths.backend_venv, contract_venv.python)
    monkeypatch.setenv("FAKE_SGL_SECONDS_PER_WORD", "0.004")
    monkeypatch.setenv("FAKE_SGL_SLOTS", "4")
    monkeypatch.setenv("FAKE_SGL_LATENCY_S", "0.05")
    return data_paths


def _settings() -> Settings:
    return Settings(server_port=free_port(), gpus="none", start_timeout_s=120.0, qa_level="off")


def test_without_a_box_the_start_says_what_to_do(app_home: DataPaths) -> None:
    farm_token_store(app_home).create("lab")
    manager = build_server_manager(app_home, _settings())
    with pytest.raises(ServerStartError, match="serves no GPU .* Join a GPU box"):
        manager.ensure_serving(get_entry(MODEL))
    assert manager.group.record() is None


def test_a_machine_without_a_gpu_renders_a_book_on_its_boxes(app_home: DataPaths, tmp_path: Path) -> None:
    secret = farm_token_store(app_home).create("lab")[1]
    manager = build_server_manager(app_home, _settings())
    registry = FarmRegistry(app_home, group_target(manager))
    app = start_farm_app(registry)
    watcher = FarmWatcher(registry, interval_s=0.5)
    logs = [tmp_path / f"box{n}-requests.jsonl" for n in range(2)]
    agents: list[AgentProcess] = []
    try:
        agents += [start_agent(app.url, secret, tmp_path / f"box{n}", env={"FAKE_SGL_REQUEST_LOG": str(log)})
                   for n, log in enumerate(logs)]
        wait_for(lambda: len(registry.boxes()) == 2, "both boxes to join", 60)
        watcher.start()
        serving = manager.ensure_serving(get_entry(MODEL))
        assert manager.group.record().workers == ()  # no worker of its own: the router fronts the boxes
        health = read_router_health(serving.endpoint.base_url)
        assert health.routable_workers == 2
        request = ConvertRequest(book_path=BOOK, model_key=MODEL, voice=VoiceChoice.speaker("Vivian"))
        result = convert_served(request, serving, paths=app_home, settings=manager.settings)
        assert result.m4b is not None and len(probe_chapters(result.m4b)) == 5
        counts = [len(log.read_text(encoding="utf-8").splitlines()) for log in logs]
        assert min(counts) > 10, counts  # both boxes carried the book
        wait_for(lambda: {b.state for b in registry.boxes()} == {"serving"}, "the watcher to mark them", 30)
    finally:
        for agent in agents:
            agent.stop()
        watcher.stop()
        app.stop()
        manager.stop()
