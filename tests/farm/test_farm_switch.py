"""A model switch of the farm switches every box at once: each is idle one boot, not one per box
before it (the agents here are stand-ins that take a 'boot' to answer /serve)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

import omni_web.farm.registry as registry_module
from omni_web.farm.registry import FarmBox, FarmRegistry
from omni_web.paths import DataPaths

OLD, NEW = "qwen3_tts_0_6b_customvoice", "qwen3_tts_0_6b_base"


class _SlowBootAgents(FarmRegistry):
    """Every /serve waits until all boxes are booting at once (a barrier): switching them one after
    another would break the barrier, and that box would fail."""

    def __init__(self, paths: DataPaths, boxes: int) -> None:
        super().__init__(paths, lambda: ("http://router", NEW))
        self.booting = threading.Barrier(boxes, timeout=30)
        self.asked: list[tuple[str, str]] = []

    def call_agent(self, box: FarmBox, method: str, path: str, body: dict[str, Any] | None = None, *,
                   timeout_s: float) -> dict[str, Any]:
        assert (method, path) == ("POST", "/serve")
        self.asked.append((box.id, body["model"] if body else ""))
        self.booting.wait()
        return {"workers": [{"url": f"http://{box.id}:30000", "gpu": 0}]}


@pytest.mark.parametrize("boxes", [1, 3])
def test_a_model_switch_boots_every_box_at_once(tmp_path: Path, monkeypatch, boxes: int) -> None:
    routed: list[str] = []
    monkeypatch.setattr(registry_module, "add_worker", lambda _router, url: routed.append(url))
    monkeypatch.setattr(registry_module, "drain_worker", lambda _router, _url: None)
    monkeypatch.setattr(registry_module, "remove_worker", lambda _router, _url: None)
    farm = _SlowBootAgents(DataPaths(root=tmp_path).ensure(), boxes)
    for n in range(boxes):
        farm._save(FarmBox(id=f"box{n}", name=f"box{n}", agent_url=f"http://box{n}:7000", secret="s",
                           model_key=OLD, worker_urls=(f"http://box{n}:30000",), state="serving",
                           joined_at=float(n)))
    placed = farm.place_all()
    assert [(b.state, b.model_key) for b in placed] == [("serving", NEW)] * boxes
    assert sorted(routed) == sorted(f"http://box{n}:30000" for n in range(boxes))
    assert farm.place_all() == farm.boxes() and len(farm.asked) == boxes  # already serving: not asked again
