"""From nothing, one command: a bare box (no backend venv, no model) runs `agent join` while the app
renders a book on its one GPU, installs the backend with pip, downloads the model from the hub,
serves it, and takes part of the book in progress through the app's REAL router."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from omni_web.assemble import probe_chapters
from omni_web.backend import probe_backend
from omni_web.catalog import get_entry
from omni_web.client import VoiceChoice
from omni_web.farm import farm_token_store
from omni_web.models import installed_keys
from omni_web.paths import DataPaths
from omni_web.pipeline import ConvertRequest
from omni_web.pipeline.serving import convert_served
from omni_web.server.router import read_router_health
from omni_web.services import build_server_manager
from omni_web.settings import Settings
from tests.conftest import DATA_DIR
from tests.contract.test_router_group import group_home  # noqa: F401 - the fixture
from tests.fakes.fake_hf_hub import FakeHub, FakeRepo
from tests.fakes.sgl_omni import free_port
from tests.farm.farmkit import AgentProcess, fake_backend_wheel, farm_beside, start_agent, wait_for

pytestmark = [pytest.mark.contract, pytest.mark.slow]

MODEL = "qwen3_tts_0_6b_customvoice"
BOOK = DATA_DIR / "wasteland.epub"


def _bare_box_env(box: Path, wheels: Path, hub: FakeHub) -> dict[str, str]:
    """A box with only this repository: pip finds sglang-omni in ``wheels``, the model is on ``hub``."""
    return {
        "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels),
        "HF_ENDPOINT": hub.url, "HF_HOME": str(box / "hf-home"), "HF_HUB_CACHE": str(box / "hf-cache"),
        "HF_HUB_DISABLE_TELEMETRY": "1", "FAKE_SGL_REQUEST_LOG": str(box / "requests.jsonl"),
    }


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines()) if path.is_file() else 0


def test_a_bare_box_joins_with_one_command_and_renders_the_book_in_progress(
    group_home: DataPaths, tmp_path: Path  # noqa: F811
) -> None:
    # With a farm token made, even one GPU is served behind the router.
    secret = farm_token_store(group_home).create("lab")[1]
    settings = Settings(server_port=free_port(), gpus="0", start_timeout_s=120.0, qa_level="off")
    manager = build_server_manager(group_home, settings)
    entry = get_entry(MODEL)
    serving = manager.ensure_serving(entry)
    box_home = tmp_path / "bare-box"
    wheels = tmp_path / "wheels"
    fake_backend_wheel(wheels)
    joined = threading.Event()
    repo = FakeRepo(entry.repo_id, {"config.json": b'{"model_type": "tts"}'})
    with FakeHub([repo]) as hub, farm_beside(group_home, manager) as farm:

        def slow_until_joined(doc) -> None:
            if doc.chunks_done >= 10 and not farm.agents:
                # Mid-book, the one command on the bare box; the book goes on while it sets itself up.
                env = _bare_box_env(box_home, wheels, hub)
                farm.agents.append(start_agent(farm.app.url, secret, box_home, env=env, bare=True))
                waiting = (serving.endpoint.base_url, farm.agents[0], joined)
                threading.Thread(target=_wait_routable, args=waiting, daemon=True).start()
            if farm.agents and doc.chunks_done >= 20:
                # Hold the book here until the box serves, so it is still in progress when it does.
                assert joined.wait(timeout=300), farm.agents[0].output()[-3000:]

        request = ConvertRequest(book_path=BOOK, model_key=entry.key, voice=VoiceChoice.speaker("Vivian"))
        result = convert_served(request, serving, paths=group_home, settings=manager.settings,
                                progress=slow_until_joined)
        assert result.m4b is not None and len(probe_chapters(result.m4b)) == 5
        assert _lines(box_home / "requests.jsonl") > 0  # the new box rendered part of this book
        assert probe_backend(DataPaths(root=box_home)).ready  # it installed the backend itself
        assert entry.key in installed_keys(cache_dir=box_home / "hf-cache")  # and fetched the model
        assert hub.gets_of(entry.repo_id, "config.json")
        (box,) = farm.registry.boxes()
        assert box.state == "serving" and box.model_key == MODEL


def _wait_routable(router_url: str, agent: AgentProcess, joined: threading.Event) -> None:
    def two_routable() -> bool:
        if agent.popen.poll() is not None:
            raise AssertionError(f"the agent exited: {agent.output()[-3000:]}")
        health = read_router_health(router_url, timeout_s=2)
        return health is not None and health.routable_workers >= 2

    wait_for(two_routable, "the bare box's worker to be routable", 280)
    joined.set()
