"""An app on a machine without a GPU (GPUs: none) renders a book on its farm's boxes alone: its
router (the REAL one) starts with the workers the boxes serve for the book's model (the app's
backend venv holds the router; its fake sgl-omni is never run)."""

from __future__ import annotations

from pathlib import Path

import pytest

from omni_web.assemble import probe_chapters
from omni_web.catalog import get_entry
from omni_web.client import VoiceChoice
from omni_web.errors import ServerStartError
from omni_web.farm import farm_token_store
from omni_web.paths import DataPaths
from omni_web.pipeline import ConvertRequest, convert_served
from omni_web.server.router import read_router_health
from omni_web.services import build_server_manager
from omni_web.settings import Settings
from tests.conftest import DATA_DIR
from tests.contract.test_router_group import group_home  # noqa: F401 - the fixture
from tests.fakes.sgl_omni import free_port
from tests.farm.farmkit import farm_beside, start_agent, wait_for

pytestmark = [pytest.mark.contract, pytest.mark.slow]

MODEL = "qwen3_tts_0_6b_customvoice"
BOOK = DATA_DIR / "wasteland.epub"


def _settings() -> Settings:
    return Settings(server_port=free_port(), gpus="none", start_timeout_s=120.0, qa_level="off")


def test_without_a_box_the_start_says_what_to_do(group_home: DataPaths) -> None:  # noqa: F811
    farm_token_store(group_home).create("lab")
    manager = build_server_manager(group_home, _settings())
    with pytest.raises(ServerStartError, match="serves no GPU .* Join a GPU box"):
        manager.ensure_serving(get_entry(MODEL))
    assert manager.group.record() is None


def test_a_machine_without_a_gpu_renders_a_book_on_its_boxes(
    group_home: DataPaths, tmp_path: Path  # noqa: F811
) -> None:
    secret = farm_token_store(group_home).create("lab")[1]
    manager = build_server_manager(group_home, _settings())
    logs = [tmp_path / f"box{n}-requests.jsonl" for n in range(2)]
    with farm_beside(group_home, manager) as farm:
        farm.agents += [start_agent(farm.app.url, secret, tmp_path / f"box{n}",
                                    env={"FAKE_SGL_REQUEST_LOG": str(log)}) for n, log in enumerate(logs)]
        wait_for(lambda: len(farm.registry.boxes()) == 2, "both boxes to join", 60)
        serving = manager.ensure_serving(get_entry(MODEL))
        assert manager.group.record().workers == ()  # no worker of its own: the router fronts the boxes
        health = read_router_health(serving.endpoint.base_url)
        assert health.routable_workers == 2
        request = ConvertRequest(book_path=BOOK, model_key=MODEL, voice=VoiceChoice.speaker("Vivian"))
        result = convert_served(request, serving, paths=group_home, settings=manager.settings)
        assert result.m4b is not None and len(probe_chapters(result.m4b)) == 5
        counts = [len(log.read_text(encoding="utf-8").splitlines()) for log in logs]
        assert min(counts) > 10, counts  # both boxes carried the book
        wait_for(lambda: {b.state for b in farm.registry.boxes()} == {"serving"}, "the watcher to mark them",
                 30)
