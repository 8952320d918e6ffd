"""Farm boxes whose servers crash: the agent starts them again on their GPU and port (and gives a GPU
up when its restarts never come up), and a poison chunk is found once for the farm, not once per
box. The app serves its one GPU behind the REAL router; the boxes are agent processes."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from huggingface_hub import constants as hf_constants

from omni_web.catalog import get_entry
from omni_web.client import SpeechRequest, VoiceChoice
from omni_web.client.requests import build_speech_payload
from omni_web.farm import FarmRegistry, farm_token_store
from omni_web.farm.box import MAX_UNPROVEN_RESTARTS, BoxGpu, BoxServers, BoxWorker
from omni_web.paths import DataPaths
from omni_web.pipeline import ConvertRequest, convert_served
from omni_web.server.router import read_router_health
from omni_web.services import build_server_manager
from omni_web.settings import Settings
from tests.conftest import DATA_DIR
from tests.contract.test_router_group import group_home  # noqa: F401 - the fixture
from tests.fakes.sgl_omni import free_port, install_fake_sgl_omni
from tests.farm.farmkit import farm_beside, start_agent, wait_for
from tests.test_serving_faults import check_book_without, poison_phrase
from tests.ui.helpers import cache_model

pytestmark = [pytest.mark.contract, pytest.mark.slow]

MODEL = "qwen3_tts_0_6b_customvoice"
HEFTY = DATA_DIR / "hefty-water.epub"


@pytest.fixture
def box_servers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[BoxServers]:
    """One box's servers on one fake GPU, with the fake backend and the model cached."""
    paths = DataPaths(root=tmp_path / "box").ensure()
    install_fake_sgl_omni(paths.backend_venv)
    monkeypatch.setattr(hf_constants, "HF_HUB_CACHE", str(tmp_path / "hf-cache"))  # read when asked
    cache_model(tmp_path / "hf-cache", MODEL)
    servers = BoxServers(paths, [BoxGpu(0)], host="127.0.0.1", advertise_host="127.0.0.1",
                         first_port=free_port())
    yield servers
    servers.stop()


def _kill(pid: int) -> None:
    os.killpg(pid, signal.SIGKILL)
    wait_for(lambda: _gone(pid), f"pid {pid} to exit", 30)


def _gone(pid: int) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
        os.kill(pid, 0)
    except (ChildProcessError, ProcessLookupError):
        return True
    return False


def test_a_crashed_server_starts_again_on_its_port_and_a_boot_loop_is_given_up(
    box_servers: BoxServers, monkeypatch: pytest.MonkeyPatch
) -> None:
    (first,) = box_servers.serve(MODEL, timeout_s=60)
    _kill(first.pid)
    crashes = box_servers.tend()
    assert [(c.gpu, c.pid) for c in crashes] == [(0, first.pid)]
    (again,) = box_servers.workers()
    assert again.url == first.url and again.pid != first.pid
    wait_for(lambda: box_servers.tend() == () and box_servers._unproven[0] == 0, "the restart to be healthy",
             60)
    # From now on every boot dies: the restarts never answer healthy, so the GPU is given up.
    monkeypatch.setenv("FAKE_SGL_CRASH_DURING_BOOT", "1")
    _kill(again.pid)
    wait_for(lambda: (box_servers.tend(), box_servers.given_up())[1], "the GPU to be given up", 120)
    assert len(box_servers.crashes()) == 2 + MAX_UNPROVEN_RESTARTS  # two kills, then every failed restart
    assert box_servers.workers() == ()
    assert "exited 4 times in a row before answering healthy" in box_servers.given_up()[0]


def test_a_server_a_poison_chunk_kills_after_each_restart_is_never_given_up(
    box_servers: BoxServers, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a loaded box the router hands a restart the retried poison chunk the moment it listens
    (its view of that URL still says healthy), before anyone, the agent included, saw it healthy:
    the restart came up, so its crash does not count toward giving the GPU up."""
    monkeypatch.setenv("FAKE_SGL_CRASH_ON_TEXT", "an unsayable line")
    box_servers.serve(MODEL, timeout_s=60)
    monkeypatch.setenv("FAKE_SGL_WARMUP_S", "300")  # every restart listens but never answers healthy
    seen = []
    for _ in range(MAX_UNPROVEN_RESTARTS + 2):
        assert box_servers.given_up() == {}
        (worker,) = box_servers.workers()
        seen.append(_poison(box_servers, worker))
        assert [c.pid for c in box_servers.tend()] == [worker.pid]  # the agent looks only now
    assert seen == [200] + [503] * (MAX_UNPROVEN_RESTARTS + 1)  # no restart was ever seen healthy
    assert box_servers.given_up() == {}
    assert len(box_servers.crashes()) == MAX_UNPROVEN_RESTARTS + 2


def _poison(box_servers: BoxServers, worker: BoxWorker) -> int:
    """Send ``worker`` the chunk that kills it as soon as it listens; the status its /health gave."""
    status = wait_for(lambda: _health_status(worker.url), "the server to listen", 60)
    request = SpeechRequest(text="Now an unsayable line.", voice=VoiceChoice.speaker("Vivian"))
    body = build_speech_payload(get_entry(MODEL), request, inline_reference=True)
    with pytest.raises(httpx.TransportError):  # it dies without an answer
        httpx.post(f"{worker.url}/v1/audio/speech", json=body, timeout=30)
    wait_for(lambda: worker not in box_servers.workers(), "the poison chunk to kill it", 30)
    return int(status)


def _health_status(url: str) -> int | None:
    try:
        return httpx.get(f"{url}/health", timeout=5).status_code
    except httpx.HTTPError:
        return None


def test_a_poison_chunk_is_found_once_for_the_farm_and_the_book_is_delivered(
    group_home: DataPaths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    monkeypatch.setenv("FAKE_SGL_SLOTS", "2")
    secret = farm_token_store(group_home).create("lab")[1]
    settings = Settings(server_port=free_port(), gpus="0", start_timeout_s=120.0, qa_level="off",
                        concurrency=2)
    manager = build_server_manager(group_home, settings)
    request = ConvertRequest(book_path=HEFTY, model_key=MODEL, voice=VoiceChoice.speaker("Vivian"))
    item, phrase = poison_phrase(request, manager.settings, index=12)
    monkeypatch.setenv("FAKE_SGL_CRASH_ON_TEXT", phrase)  # the app's worker and both boxes' inherit it
    serving = manager.ensure_serving(get_entry(MODEL))
    with farm_beside(group_home, manager) as farm:
        farm.agents += [start_agent(farm.app.url, secret, tmp_path / f"box{n}") for n in range(2)]
        wait_for(lambda: _routable(serving.endpoint.base_url) == 3, "both boxes to be routed", 120)
        result = convert_served(request, serving, paths=group_home, settings=manager.settings)
        check_book_without(result, item)  # the book is delivered without that one chunk, named
        box_crashes = len(farm.registry.worker_crashes())
        local_crashes = len(serving.revived)
        # Two crashes in a row set it aside and alone it fails after two more as the first chunk after
        # a restart: a handful in all, counted alike on the app's worker and the boxes' (4-7 seen, 7 in
        # a full run under load; without the boxes' crashes counted it took 11, each box's retries
        # killing servers on their own).
        assert 2 <= box_crashes + local_crashes <= 8, (box_crashes, local_crashes)
        try:
            wait_for(lambda: _routable(serving.endpoint.base_url) == 3, "every crashed server to be back",
                     120)
        except AssertionError as exc:  # say which one stayed out, and what its box says of it
            raise AssertionError(f"{exc}: {_farm_state(serving.endpoint.base_url, farm.registry)}") from None


def _farm_state(router_url: str, registry: FarmRegistry) -> str:
    health = read_router_health(router_url, timeout_s=2)
    workers = [(w.url, w.health_state, w.routable) for w in health.workers] if health else "no answer"
    boxes = [(b.name, b.state, b.worker_urls, b.crashes, b.message) for b in registry.boxes()]
    return f"router workers {workers}; boxes {boxes}"


def _routable(router_url: str) -> int:
    health = read_router_health(router_url, timeout_s=2)
    return health.routable_workers if health is not None else 0
