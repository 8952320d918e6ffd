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
from omni_web.farm import FarmRegistry, FarmWatcher, farm_token_store, group_target
from omni_web.models import installed_keys
from omni_web.paths import DataPaths
from omni_web.pipeline import ConvertRequest
from omni_web.pipeline.serving import convert_served
from omni_web.server.router import read_router_health
from omni_web.services import build_server_manager
from omni_web.settings import Settings
from tests.conftest import DATA_DIR
from tests.contract.setup_env import ContractVenv
from tests.fakes.fake_hf_hub import FakeHub, FakeRepo
from tests.fakes.sgl_omni import free_port, install_fake_sgl_omni, install_router
from tests.farm.farmkit import AgentProcess, fake_backend_wheel, start_agent, start_farm_app, wait_for

pytestmark = [pytest.mark.contract, pytest.mark.slow]

MODEL = "qwen3_tts_0_6b_customvoice"
BOOK = DATA_DIR / "wasteland.epub"


@pytest.fixture
def app_home(
    data_paths: DataPaths, contract_venv: ContractVenv, monkeypatch: pytest.MonkeyPatch
) -> DataPaths:
    """The app's data root: one fake GPU's backend and the real router; quick fake generations."""
    install_fake_sgl_omni(data_paths.backend_venv)
    install_router(data_paths.backend_venv, contract_venv.python)
    monkeypatch.setenv("FAKE_SGL_SECONDS_PER_WORD", "0.004")
    monkeypatch.setenv("FAKE_SGL_SLOTS", "4")
    monkeypatch.setenv("FAKE_SGL_LATENCY_S", "0.05")
    return data_paths


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
    app_home: DataPaths, tmp_path: Path
) -> None:
    secret = farm_token_store(app_home).create("lab")[1]  # a farm token: one GPU is served behind the router
    settings = Settings(server_port=free_port(), gpus="0", start_timeout_s=120.0, qa_level="off")
    manager = build_server_manager(app_home, settings)
    entry = get_entry(MODEL)
    serving = manager.ensure_serving(entry)
    registry = FarmRegistry(app_home, group_target(manager))
    app = start_farm_app(registry)
    watcher = FarmWatcher(registry, interval_s=0.5)
    watcher.start()
    box_home = tmp_path / "bare-box"
    wheels = tmp_path / "wheels"
    fake_backend_wheel(wheels)
    agents: list[AgentProcess] = []
    joined = threading.Event()
    with FakeHub([FakeRepo(entry.repo_id, {"config.json": b'{"model_type": "tts"}'})]) as hub:

        def progress(doc) -> None:
            if doc.chunks_done < 10 or agents:
                return
            # Mid-book, the one command on the bare box; the book goes on while it sets itself up.
            agents.append(start_agent(app.url, secret, box_home, env=_bare_box_env(box_home, wheels, hub),
                                      bare=True))
            threading.Thread(target=_wait_routable, args=(serving.endpoint.base_url, agents[0], joined),
                             daemon=True).start()

        def slow_until_joined(doc) -> None:
            progress(doc)
            if agents and doc.chunks_done >= 20:
                # Hold the book here until the box serves, so it is still in progress when it does.
                assert joined.wait(timeout=300), agents[0].output()[-3000:]

        try:
            request = ConvertRequest(book_path=BOOK, model_key=entry.key, voice=VoiceChoice.speaker("Vivian"))
            result = convert_served(request, serving, paths=app_home, settings=manager.settings,
                                    progress=slow_until_joined)
            assert result.m4b is not None and len(probe_chapters(result.m4b)) == 5
            assert _lines(box_home / "requests.jsonl") > 0  # the new box rendered part of this book
            box_paths = DataPaths(root=box_home)
            assert probe_backend(box_paths).ready  # it installed the backend itself
            assert entry.key in installed_keys(cache_dir=box_home / "hf-cache")  # and fetched the model
            assert hub.gets_of(entry.repo_id, "config.json")
            (box,) = registry.boxes()
            assert box.state == "serving" and box.model_key == MODEL
        finally:
            for agent in agents:
                agent.stop()
            watcher.stop()
            app.stop()
            manager.stop()


def _wait_routable(router_url: str, agent: AgentProcess, joined: threading.Event) -> None:
    def two_routable() -> bool:
        if agent.popen.poll() is not None:
            raise AssertionError(f"the agent exited: {agent.output()[-3000:]}")
        health = read_router_health(router_url, timeout_s=2)
        return health is not None and health.routable_workers >= 2

    wait_for(two_routable, "the bare box's worker to be routable", 280)
    joined.set()
