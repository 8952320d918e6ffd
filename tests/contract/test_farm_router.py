"""The farm against the REAL router: a box that joins is routed, a box that dies leaves the router,
a box told another model is drained and switched. Boxes are agent processes (fake `sgl-omni`)."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from omni_web.catalog import get_entry
from omni_web.client import SpeechClient, SpeechRequest, VoiceChoice
from omni_web.farm import FarmRegistry, farm_action, farm_token_store
from omni_web.paths import DataPaths
from omni_web.server.router import read_router_health
from tests.contract.setup_env import ContractVenv
from tests.fakes.sgl_omni import FakeServer, install_router
from tests.farm.farmkit import FarmApp, RouterProcess, start_agent, start_farm_app, start_router, wait_for

pytestmark = pytest.mark.contract

MODEL = "qwen3_tts_0_6b_customvoice"
OTHER = "qwen3_tts_0_6b_base"


class Target:
    """What the farm serves: the router and model, changeable by the test."""

    def __init__(self) -> None:
        self.value: tuple[str, str] | None = None

    def __call__(self) -> tuple[str, str] | None:
        return self.value


@pytest.fixture
def farm(
    tmp_path: Path, contract_venv: ContractVenv, fake_server
) -> Iterator[tuple[FarmApp, RouterProcess, Target]]:
    local: FakeServer = fake_server(MODEL)  # the app box's own worker
    router_exe = install_router(tmp_path / "router-venv", contract_venv.python)
    router = start_router(router_exe, [local.base_url], tmp_path)
    target = Target()
    target.value = (router.url, MODEL)
    app = start_farm_app(FarmRegistry(DataPaths(root=tmp_path / "app").ensure(), target))
    yield app, router, target
    app.stop()
    router.stop()


def _worker_urls(router: RouterProcess) -> set[str]:
    health = read_router_health(router.url)
    return {w.url for w in health.workers if w.routable} if health is not None else set()


def _serving_box(app: FarmApp):
    def serving() -> list:
        return [b for b in app.registry.boxes() if b.state == "serving"]

    found = wait_for(serving, "the box to serve", 120)
    return found[0]


def test_a_box_joins_gets_requests_and_leaves_the_router_when_it_dies(farm, tmp_path: Path) -> None:
    app, router, _target = farm
    secret = farm_token_store(app.registry._paths).create("lab")[1]
    agent = start_agent(app.url, secret, tmp_path / "box1", gpus="0")
    try:
        box = _serving_box(app)
        assert len(box.worker_urls) == 1
        wait_for(lambda: box.worker_urls[0] in _worker_urls(router), "the box's worker to be routable", 60)
        with SpeechClient(router.url, local_server=False) as client:
            for n in range(8):
                request = SpeechRequest(text=f"Line {n} of the book.", voice=VoiceChoice.speaker("Vivian"))
                assert client.speech(get_entry(MODEL), request).audio[:4] == b"RIFF"
        health = read_router_health(router.url)
        assert health.worker(box.worker_urls[0]).routed_requests > 0
        pids = [w["pid"] for w in app.registry.call_agent(box, "GET", "/status", timeout_s=5)["workers"]]
        for pid in pids:
            os.killpg(pid, signal.SIGKILL)
        os.killpg(agent.popen.pid, signal.SIGKILL)
        app.registry.check()
        assert box.worker_urls[0] not in {w.url for w in read_router_health(router.url).workers}
        assert app.registry.box(box.id).state == "lost"
    finally:
        agent.stop()


def test_a_box_told_another_model_is_drained_and_switched(farm, tmp_path: Path) -> None:
    app, router, target = farm
    secret = farm_token_store(app.registry._paths).create("lab")[1]
    agent = start_agent(app.url, secret, tmp_path / "box1", gpus="0")
    try:
        box = _serving_box(app)
        old_url = box.worker_urls[0]
        target.value = (router.url, OTHER)
        switched = app.registry.place(box.id)
        assert switched.state == "serving" and switched.model_key == OTHER
        models = httpx.get(f"{switched.worker_urls[0]}/v1/models", timeout=10).json()
        assert any("Base" in m["id"] for m in models["data"])
        routed = {w.url for w in read_router_health(router.url).workers}
        assert switched.worker_urls[0] in routed
        assert old_url == switched.worker_urls[0] or old_url not in routed
    finally:
        agent.stop()


def _speak(router: RouterProcess, times: int) -> None:
    with SpeechClient(router.url, local_server=False) as client:
        for n in range(times):
            request = SpeechRequest(text=f"Line {n} of the book.", voice=VoiceChoice.speaker("Vivian"))
            assert client.speech(get_entry(MODEL), request).audio[:4] == b"RIFF"


def test_drain_resume_pin_and_remove_a_box_in_the_real_router(farm, tmp_path: Path) -> None:
    app, router, target = farm
    secret = farm_token_store(app.registry._paths).create("lab")[1]
    agent = start_agent(app.url, secret, tmp_path / "box1", gpus="0")
    try:
        box = _serving_box(app)
        url = box.worker_urls[0]
        wait_for(lambda: url in _worker_urls(router), "the box's worker to be routable", 60)
        assert farm_action(app.registry, "drain", box.name).startswith(f"Drained box {box.name}")
        seen = read_router_health(router.url).worker(url)
        assert seen is not None and seen.disabled and not seen.routable
        app.registry.place_all()  # the watcher's round leaves a drained box alone
        _speak(router, 6)
        assert read_router_health(router.url).worker(url).routed_requests == seen.routed_requests
        farm_action(app.registry, "resume", box.id)
        assert app.registry.place(box.id).state == "serving"
        wait_for(lambda: url in _worker_urls(router), "the resumed worker to be routable again", 60)

        farm_action(app.registry, "pin", box.id, OTHER)  # a pool of OTHER: booted outside the router
        pinned = app.registry.place(box.id)
        assert (pinned.state, pinned.model_key) == ("standby", OTHER)
        assert pinned.worker_urls[0] not in {w.url for w in read_router_health(router.url).workers}
        models = httpx.get(f"{pinned.worker_urls[0]}/v1/models", timeout=10).json()
        assert any("Base" in m["id"] for m in models["data"])
        target.value = (router.url, OTHER)  # the group serves OTHER: the pool is routed, no boot
        routed = app.registry.place(box.id)
        assert routed.state == "serving" and routed.worker_urls == pinned.worker_urls
        pool_url = routed.worker_urls[0]
        wait_for(lambda: pool_url in _worker_urls(router), "the pool's worker to be routable", 60)

        farm_action(app.registry, "remove", box.id)
        assert routed.worker_urls[0] not in {w.url for w in read_router_health(router.url).workers}
        assert app.registry.boxes() == ()
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"{routed.worker_urls[0]}/health", timeout=5)
        assert agent.popen.poll() is None  # removed, not killed: the agent can join again
    finally:
        agent.stop()


def test_a_new_router_for_the_same_model_gets_the_serving_boxes_again(farm, contract_venv, fake_server,
                                                                      tmp_path: Path) -> None:
    app, _router, target = farm
    secret = farm_token_store(app.registry._paths).create("lab")[1]
    agent = start_agent(app.url, secret, tmp_path / "box1", gpus="0")
    fresh = None
    try:
        box = _serving_box(app)
        # The group's router restarted (a new process, here on a new port) with only its own worker.
        local = fake_server(MODEL)
        (tmp_path / "router2").mkdir()
        router_exe = install_router(tmp_path / "router2-venv", contract_venv.python)
        fresh = start_router(router_exe, [local.base_url], tmp_path / "router2")
        target.value = (fresh.url, MODEL)
        app.registry.place_all()
        wait_for(lambda: box.worker_urls[0] in _worker_urls(fresh), "the box's worker in the new router", 60)
        assert app.registry.box(box.id).state == "serving"
    finally:
        agent.stop()
        if fresh is not None:
            fresh.stop()
