"""What the user does to a farm box: drain, resume, remove, pin to a model (a pool per model).

The agents are stand-ins (``call_agent`` answers as an agent would) and the router is a stand-in
that keeps its worker list, so each test can say which workers take requests.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import omni_web.farm.registry as registry_module
from omni_web.errors import FarmBoxNotFound, UnknownModel
from omni_web.farm import FarmWatcher, farm_action, farm_token_store
from omni_web.farm.registry import FarmBox, FarmRegistry
from omni_web.paths import DataPaths
from tests.farm.farmkit import wait_for

MODEL, OTHER = "qwen3_tts_0_6b_customvoice", "qwen3_tts_0_6b_base"
ROUTER = "http://router:8000"


class Router:
    """The router's worker list: url -> routable (False: drained)."""

    def __init__(self) -> None:
        self.workers: dict[str, bool] = {}

    def add(self, _router: str, url: str) -> None:
        self.workers.setdefault(url, True)

    def drain(self, _router: str, url: str) -> bool:
        if url in self.workers:
            self.workers[url] = False
        return url in self.workers

    def remove(self, _router: str, url: str) -> bool:
        return self.workers.pop(url, None) is not None

    def routable(self) -> set[str]:
        return {url for url, ok in self.workers.items() if ok}

    def health(self, _router: str, **_options: object) -> SimpleNamespace:
        return SimpleNamespace(workers=[SimpleNamespace(url=url) for url in self.workers])


class Agents(FarmRegistry):
    """Stand-in agents: each box serves one worker per model asked, at a URL naming box and model."""

    def __init__(self, paths: DataPaths, target: list[tuple[str, str] | None]) -> None:
        super().__init__(paths, lambda: target[0])
        self.calls: list[tuple[str, str]] = []
        self.serving: dict[str, str] = {}  # box id -> model its servers run
        self.down: set[str] = set()
        self.between_crash_and_restart: set[str] = set()  # boxes whose worker died and is not back yet
        self.during_serve: Callable[[FarmBox], None] = lambda _box: None

    def call_agent(self, box: FarmBox, method: str, path: str, body: dict[str, Any] | None = None, *,
                   timeout_s: float) -> dict[str, Any]:
        if box.id in self.down:
            raise registry_module.ServerError(f"The agent of box {box.name} does not answer.")
        self.calls.append((box.id, path))
        if path == "/serve":
            self.during_serve(box)
            self.serving[box.id] = str(body["model"] if body else "")
        elif path == "/stop":
            self.serving.pop(box.id, None)
        model = self.serving.get(box.id)
        if not model or box.id in self.between_crash_and_restart:
            return {"workers": []}
        return {"workers": [{"url": _url(box.id, model), "gpu": 0, "model_key": model}]}


def _url(box_id: str, model: str) -> str:
    return f"http://{box_id}-{model}:30100"


@pytest.fixture
def router(monkeypatch) -> Router:
    fake = Router()
    monkeypatch.setattr(registry_module, "add_worker", fake.add)
    monkeypatch.setattr(registry_module, "drain_worker", fake.drain)
    monkeypatch.setattr(registry_module, "remove_worker", fake.remove)
    monkeypatch.setattr(registry_module, "read_router_health", fake.health)
    return fake


@pytest.fixture
def target() -> list[tuple[str, str] | None]:
    return [(ROUTER, MODEL)]


@pytest.fixture
def farm(tmp_path: Path, target) -> Agents:
    agents = Agents(DataPaths(root=tmp_path).ensure(), target)
    for n, name in enumerate(("lab-1", "lab-2")):
        agents._save(FarmBox(id=f"b{n + 1}", name=name, agent_url=f"http://10.0.0.{n + 1}:30090", secret="s",
                             joined_at=float(n)))
    return agents


def _serves(farm: Agents) -> dict[str, tuple[str, str]]:
    return {box.id: (box.state, box.model_key) for box in farm.boxes()}


def test_old_farm_records_without_pin_or_drain_still_load(tmp_path: Path) -> None:
    paths = DataPaths(root=tmp_path).ensure()
    row = {"id": "b1", "name": "lab-1", "agent_url": "http://10.0.0.1:30090", "secret": "s", "gpus": [],
           "model_key": MODEL, "worker_urls": ["http://10.0.0.1:30100"], "state": "serving",
           "joined_at": 1.0, "message": ""}
    (paths.state_dir / "farm.json").write_text(json.dumps([row]), encoding="utf-8")
    (box,) = FarmRegistry(paths, lambda: None).boxes()
    assert (box.pinned_model, box.drained, box.worker_urls) == ("", False, ("http://10.0.0.1:30100",))


def test_a_drained_box_takes_no_requests_and_stays_out_until_resumed(farm: Agents, router: Router) -> None:
    farm.place_all()
    assert router.routable() == {_url("b1", MODEL), _url("b2", MODEL)}
    message = farm_action(farm, "drain", "lab-1")
    assert "Drained box lab-1 (b1)" in message and "server farm resume b1" in message
    assert router.routable() == {_url("b2", MODEL)} and _url("b1", MODEL) in router.workers
    asked = len(farm.calls)
    farm.check()
    farm.place_all()
    assert farm.box("b1").state == "drained" and router.routable() == {_url("b2", MODEL)}
    assert [c for c in farm.calls[asked:] if c[1] != "/status"] == []  # not re-placed
    assert "Resumed box lab-1 (b1)" in farm_action(farm, "resume", "b1")
    farm.place_all()
    assert router.routable() == {_url("b1", MODEL), _url("b2", MODEL)}
    assert _serves(farm)["b1"] == ("serving", MODEL)
    assert "was not drained" in farm_action(farm, "resume", "b1")


def test_a_box_drained_while_it_boots_is_not_routed_when_the_boot_ends(
    farm: Agents, router: Router, target: list
) -> None:
    cli = FarmRegistry(farm._paths, lambda: target[0])  # another process's view: the same record
    farm.during_serve = lambda box: cli.drain(box.id) if box.id == "b1" else None
    farm.place_all()
    assert router.routable() == {_url("b2", MODEL)}
    assert (farm.box("b1").state, farm.box("b1").worker_urls) == ("drained", (_url("b1", MODEL),))


def test_a_box_whose_wanted_model_changed_while_it_booted_is_not_routed_with_the_old_one(
    farm: Agents, router: Router, target: list
) -> None:
    def switch_group(box: FarmBox) -> None:
        target[0] = (ROUTER, OTHER)  # the queue's next book needs OTHER while b1 boots MODEL

    farm.during_serve = switch_group
    farm.place("b1")
    assert router.workers == {} and _serves(farm)["b1"] == ("standby", MODEL)
    farm.during_serve = lambda _box: None
    farm.place_all()
    assert _serves(farm) == {"b1": ("serving", OTHER), "b2": ("serving", OTHER)}
    assert router.routable() == {_url("b1", OTHER), _url("b2", OTHER)}


def test_remove_drains_stops_the_agent_and_forgets_the_box(farm: Agents, router: Router) -> None:
    farm.place_all()
    message = farm_action(farm, "remove", "lab-2")
    assert "Removed box lab-2 (b2)" in message
    assert ("b2", "/stop") in farm.calls and "b2" not in farm.serving
    assert router.workers == {_url("b1", MODEL): True}
    assert [b.id for b in farm.boxes()] == ["b1"]
    farm.down.add("b1")  # an agent that cannot be reached is forgotten all the same, and the message says so
    message = farm_action(farm, "remove", "b1")
    assert farm.boxes() == () and router.workers == {}
    assert "could not be told to stop its servers (The agent of box lab-1 does not answer)" in message


def test_boxes_are_named_by_id_or_name(farm: Agents, router: Router) -> None:
    assert farm.find("b2").name == "lab-2" and farm.find("lab-1").id == "b1"
    with pytest.raises(FarmBoxNotFound, match=r"No farm box is called 'lab-9'.*lab-1 \(b1\), lab-2 \(b2\)"):
        farm_action(farm, "drain", "lab-9")
    farm._save(FarmBox(id="b3", name="lab-1", agent_url="http://10.0.0.3:30090", secret="s", joined_at=3.0))
    with pytest.raises(FarmBoxNotFound, match="Several farm boxes are named 'lab-1'"):
        farm.find("lab-1")
    assert farm.find("b3").agent_url == "http://10.0.0.3:30090"


def test_a_pinned_box_is_a_pool_routed_only_while_the_group_serves_its_model(
    farm: Agents, router: Router, target: list
) -> None:
    message = farm_action(farm, "pin", "lab-2", OTHER)
    assert "Pinned box lab-2 (b2)" in message and "waits ready, outside the router" in message
    farm.place_all()
    assert _serves(farm) == {"b1": ("serving", MODEL), "b2": ("standby", OTHER)}
    assert router.routable() == {_url("b1", MODEL)}
    booted = farm.calls.count(("b2", "/serve"))
    target[0] = (ROUTER, OTHER)  # the queue's next book needs OTHER: the group switched
    farm.place_all()
    assert _serves(farm) == {"b1": ("serving", OTHER), "b2": ("serving", OTHER)}
    assert router.routable() == {_url("b1", OTHER), _url("b2", OTHER)}
    assert farm.calls.count(("b2", "/serve")) == booted  # warm already: routed without a boot
    target[0] = (ROUTER, MODEL)
    farm.place_all()
    assert _serves(farm) == {"b1": ("serving", MODEL), "b2": ("standby", OTHER)}
    assert router.routable() == {_url("b1", MODEL)}
    assert "follows the server group's model" in farm_action(farm, "pin", "b2", "")
    farm.place_all()
    assert _serves(farm)["b2"] == ("serving", MODEL) and farm.box("b2").pinned_model == ""


def test_a_pinned_box_serves_its_model_even_when_no_group_runs(farm: Agents, router: Router, target) -> None:
    target[0] = None
    farm.pin("b1", OTHER)
    farm.place_all()
    assert _serves(farm) == {"b1": ("standby", OTHER), "b2": ("joined", "")}
    assert router.workers == {}


def test_pinning_to_a_model_not_in_the_catalog_is_refused(farm: Agents) -> None:
    with pytest.raises(UnknownModel):
        farm_action(farm, "pin", "b1", "no_such_model")
    assert farm.box("b1").pinned_model == ""


def test_a_box_that_joins_again_keeps_its_pin_and_drain(farm: Agents, router: Router) -> None:
    _token, secret = farm_token_store(farm._paths).create("lab")
    farm.pin("b1", OTHER)
    farm.drain("b1")
    again = farm.join(secret, name="lab-1", agent_url="http://10.0.0.1:30090/", secret="new", gpus=())
    assert (again.pinned_model, again.drained, again.state) == (OTHER, True, "drained")
    assert [b.name for b in farm.boxes()] == ["lab-2", "lab-1"]


def test_a_drained_box_that_was_lost_comes_back_drained(farm: Agents, router: Router) -> None:
    farm.place_all()
    farm.drain("b1")
    farm.down.add("b1")
    farm.check()
    assert (farm.box("b1").state, farm.box("b1").worker_urls) == ("lost", ())
    assert router.workers == {_url("b2", MODEL): True}
    farm.down.clear()
    farm.check()
    farm.place_all()
    assert farm.box("b1").state == "drained" and router.routable() == {_url("b2", MODEL)}


def test_a_long_boot_of_one_box_does_not_hold_back_another_box(farm: Agents, router: Router) -> None:
    farm.place_all()
    farm.drain("b2")
    farm.pin("b1", OTHER)
    booting, release = threading.Event(), threading.Event()

    def slow_boot(box: FarmBox) -> None:
        if box.id == "b1":
            booting.set()
            release.wait(60)

    farm.during_serve = slow_boot
    watcher = FarmWatcher(farm, interval_s=0.05)
    watcher.start()
    try:
        assert booting.wait(30)
        farm.resume("b2")  # resumed while b1 boots OTHER: routed again without waiting for that boot
        wait_for(lambda: farm.box("b2").state == "serving", "the resumed box to be placed", 30)
        assert router.routable() == {_url("b2", MODEL)} and farm.box("b1").state == "switching"
        release.set()
        wait_for(lambda: farm.box("b1").state == "standby", "the pinned box to finish its boot", 30)
        assert farm.calls.count(("b1", "/serve")) == 2  # once for MODEL, once for OTHER: not again meanwhile
    finally:
        release.set()
        watcher.stop()


def test_the_watcher_routes_serving_boxes_again_when_the_group_restarted_its_router(
    farm: Agents, router: Router
) -> None:
    farm.place_all()
    farm.drain("b2")
    router.workers.clear()  # the router died and the group started a new one with its own workers
    asked = len(farm.calls)
    watcher = FarmWatcher(farm, interval_s=0.05)
    watcher.start()
    try:
        wait_for(lambda: router.routable() == {_url("b1", MODEL)}, "b1's worker to be routed again", 30)
    finally:
        watcher.stop()
    assert [c for c in farm.calls[asked:] if c[1] == "/serve"] == []  # no boot: added back as it was
    assert _serves(farm) == {"b1": ("serving", MODEL), "b2": ("drained", MODEL)}  # b2 stays out


def test_a_lost_box_back_on_another_port_is_the_same_box(farm: Agents, router: Router) -> None:
    """An agent that restarted after a reboot may listen on another port: it is the box that was
    lost (same name, same host), with the pin the user gave it, not a second box."""
    _token, secret = farm_token_store(farm._paths).create("lab")
    farm.pin("b1", OTHER)
    farm.down.add("b1")
    farm.check()
    assert farm.box("b1").state == "lost"
    again = farm.join(secret, name="lab-1", agent_url="http://10.0.0.1:30091", secret="new", gpus=())
    assert again.pinned_model == OTHER
    assert [b.name for b in farm.boxes()] == ["lab-2", "lab-1"]
    # A box of the same name on another host, or one still answering, stays a box of its own.
    other = farm.join(secret, name="lab-2", agent_url="http://10.0.0.9:30090", secret="s2", gpus=())
    assert len(farm.boxes()) == 3 and other.pinned_model == ""


def test_a_worker_seen_gone_between_its_crash_and_its_restart_is_routed_again(
    farm: Agents, router: Router
) -> None:
    farm.place_all()
    farm.drain("b2")
    farm.between_crash_and_restart.add("b1")
    farm.check()
    assert router.routable() == set()  # a dead worker leaves the router at once
    farm.between_crash_and_restart.clear()  # the agent started it again on its port
    farm.check()
    assert router.routable() == {_url("b1", MODEL)}
    assert farm.box("b1").worker_urls == (_url("b1", MODEL),)
    assert _serves(farm) == {"b1": ("serving", MODEL), "b2": ("drained", MODEL)}  # b2 stays out


def test_a_restarted_worker_is_not_taken_back_into_a_box_that_switches_model(
    farm: Agents, router: Router
) -> None:
    farm.place_all()
    farm.between_crash_and_restart.add("b1")
    farm.check()
    farm._update("b1", lambda box: replace(box, state="switching", model_key=OTHER, worker_urls=()))
    farm.between_crash_and_restart.clear()
    farm.check()
    assert _url("b1", MODEL) not in router.workers  # the placement under way owns the box now
    assert farm.box("b1").state == "switching"
