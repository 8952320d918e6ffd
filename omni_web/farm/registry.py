"""The app's side of the farm: boxes that joined with a farm token, and their workers in the router.

The record (``state/farm.json``, owner-only because it holds each agent's call-back secret) lists
every box: its agent URL, GPUs, model and worker URLs. The app's job store stays the only
orchestrator and the router the data plane: this class only tells agents what to serve and keeps
the router's worker list equal to the workers that answer.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import httpx

from omni_web.errors import FarmRefused, ServerError
from omni_web.farm.tokens import farm_token_store
from omni_web.files import write_atomic
from omni_web.paths import DataPaths
from omni_web.server import add_worker, drain_worker, remove_worker

__all__ = ["FARM_RECORD_NAME", "FarmBox", "FarmRegistry", "RouterTarget"]

FARM_RECORD_NAME = "farm.json"

# (router base URL, model key) of the group the farm serves, or None when no group runs.
RouterTarget = Callable[[], "tuple[str, str] | None"]

# A /serve call covers the box's model download when its HF cache lacks the model (tens of GB on a
# home line), so it may take hours beyond the boot timeout.
DOWNLOAD_ALLOWANCE_S = 6 * 3600.0


@dataclass(frozen=True, slots=True)
class FarmBox:
    """One box that joined: where its agent listens, its GPUs, and what it serves."""

    id: str
    name: str
    agent_url: str
    secret: str = field(repr=False)
    gpus: tuple[dict[str, Any], ...] = ()
    model_key: str = ""
    worker_urls: tuple[str, ...] = ()
    state: str = "joined"  # joined | starting | serving | switching | failed | lost
    joined_at: float = 0.0
    message: str = ""

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FarmBox:
        """From the record's JSON."""
        gpus = tuple(data.get("gpus", ()))
        return cls(**{**data, "gpus": gpus, "worker_urls": tuple(data.get("worker_urls", ()))})


class FarmRegistry:
    """The boxes of the farm and what they serve (lock-guarded; agents are called outside the lock).

    Args:
        paths: the app's data root (record, farm tokens).
        target: which router and model the farm serves now.
    """

    def __init__(self, paths: DataPaths, target: RouterTarget, *, serve_timeout_s: float = 600.0) -> None:
        self._paths = paths
        self._target = target
        self._timeout_s = serve_timeout_s
        self._lock = threading.RLock()

    @property
    def path(self):  # noqa: ANN201 - a Path
        """The record file."""
        return self._paths.state_dir / FARM_RECORD_NAME

    def boxes(self) -> tuple[FarmBox, ...]:
        """Every box in the record, oldest first."""
        if not self.path.is_file():
            return ()
        return tuple(FarmBox.from_json(item) for item in json.loads(self.path.read_text(encoding="utf-8")))

    def box(self, box_id: str) -> FarmBox | None:
        """The box with ``box_id``, or None."""
        return next((b for b in self.boxes() if b.id == box_id), None)

    def _save(self, box: FarmBox | None, *, drop: str = "") -> None:
        with self._lock:
            kept = [b for b in self.boxes() if b.id not in (drop, box.id if box else "")]
            rows = [asdict(b) for b in ([*kept, box] if box else kept)]
            rows.sort(key=lambda row: row["joined_at"])
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(self.path, json.dumps(rows, indent=2) + "\n", mode=0o600)

    # --- joining and leaving --------------------------------------------------------------------

    def join(self, token: str | None, *, name: str, agent_url: str, secret: str,
             gpus: tuple[dict[str, Any], ...]) -> FarmBox:
        """Record a box whose agent presented ``token``; a box at the same agent URL is replaced.

        Raises:
            FarmRefused: ``token`` is not a live farm token.
        """
        if farm_token_store(self._paths).verify(token) is None:
            raise FarmRefused(agent_url)
        for old in self.boxes():
            if old.agent_url == agent_url.rstrip("/"):
                self._unroute(old)
                self._save(None, drop=old.id)
        box = FarmBox(id=secrets.token_hex(4), name=name, agent_url=agent_url.rstrip("/"), secret=secret,
                      gpus=tuple(gpus), joined_at=time.time())
        self._save(box)
        return box

    def leave(self, token: str | None, box_id: str) -> None:
        """A box leaves: its workers are drained and removed from the router, its record dropped.

        Raises:
            FarmRefused: ``token`` is not a live farm token.
        """
        if farm_token_store(self._paths).verify(token) is None:
            raise FarmRefused(box_id)
        box = self.box(box_id)
        if box is not None:
            self._unroute(box)
            self._save(None, drop=box_id)

    def remove(self, box_id: str) -> None:
        """The user removes a box: drain, remove from the router, ask the agent to stop, forget it."""
        box = self.box(box_id)
        if box is None:
            return
        self._unroute(box)
        try:
            self.call_agent(box, "POST", "/stop", timeout_s=30.0)
        except ServerError:
            pass  # an agent that cannot be reached has nothing routed any more either
        self._save(None, drop=box_id)

    # --- serving --------------------------------------------------------------------------------

    def place(self, box_id: str) -> FarmBox | None:
        """Make the box serve the farm's model and route its workers; None when there is no target.

        A box already serving another model is drained and switched first.
        """
        target = self._target()
        box = self.box(box_id)
        if target is None or box is None:
            return box
        router_url, model_key = target
        if box.model_key == model_key and box.state == "serving":
            return box
        self._unroute(box)
        box = replace(box, state="switching" if box.model_key else "starting", model_key=model_key,
                      worker_urls=(), message="")
        self._save(box)
        try:
            asked = {"model": model_key, "timeout_s": self._timeout_s}
            status = self.call_agent(box, "POST", "/serve", asked,
                                     timeout_s=self._timeout_s + DOWNLOAD_ALLOWANCE_S)
        except ServerError as exc:
            box = replace(box, state="failed", message=str(exc))
            self._save(box)
            return box
        urls = tuple(str(w["url"]) for w in status.get("workers", ()))
        for url in urls:
            add_worker(router_url, url)
        box = replace(box, state="serving", worker_urls=urls)
        self._save(box)
        return box

    def place_all(self) -> tuple[FarmBox, ...]:
        """:meth:`place` every box at once. The farm's model changes when the queue's next book needs
        another one, so every box is idle then: switched together, each waits one boot, not one per
        box before it."""
        boxes = self.boxes()
        if len(boxes) < 2:
            placed = [self.place(box.id) for box in boxes]
        else:
            with ThreadPoolExecutor(max_workers=len(boxes), thread_name_prefix="farm-place") as pool:
                placed = list(pool.map(lambda box: self.place(box.id), boxes))
        return tuple(b for b in placed if b is not None)

    def check(self) -> tuple[FarmBox, ...]:
        """Ask each agent how it is; a box that does not answer leaves the router (a split or a
        power cut must never leave a worker routed that the app cannot reach)."""
        for box in self.boxes():
            try:
                status = self.call_agent(box, "GET", "/status", timeout_s=5.0)
            except ServerError as exc:
                if box.worker_urls or box.state != "lost":
                    self._unroute(box)
                    self._save_unless_changed(box, state="lost", worker_urls=(), message=str(exc))
                continue
            alive = {str(w["url"]) for w in status.get("workers", ())}
            gone = [u for u in box.worker_urls if u not in alive]
            if gone:
                self._unroute(box, only=gone)
                self._save_unless_changed(box, worker_urls=tuple(u for u in box.worker_urls if u in alive))
        return self.boxes()

    def _save_unless_changed(self, seen: FarmBox, **changes: Any) -> None:
        """Save ``seen`` with ``changes`` unless a placement changed the box since it was read (the
        watcher checks and places on two threads; the newer record wins)."""
        with self._lock:
            if self.box(seen.id) == seen:
                self._save(replace(seen, **changes))

    def agent_log(self, box_id: str, *, lines: int = 200) -> str:
        """The agent's own log, read over its API."""
        box = self.box(box_id)
        if box is None:
            return ""
        return str(self.call_agent(box, "GET", f"/log?lines={lines}", timeout_s=10.0).get("text", ""))

    def _unroute(self, box: FarmBox, *, only: list[str] | None = None) -> None:
        target = self._target()
        if target is None:
            return
        for url in box.worker_urls if only is None else only:
            drain_worker(target[0], url)
            try:
                remove_worker(target[0], url)
            except ServerError:
                pass  # no router to remove it from: nothing is routed

    def call_agent(self, box: FarmBox, method: str, path: str, body: dict[str, Any] | None = None, *,
              timeout_s: float) -> dict[str, Any]:
        try:
            response = httpx.request(method, box.agent_url + path, json=body, timeout=timeout_s,
                                     headers={"Authorization": f"Bearer {box.secret}"})
        except httpx.HTTPError as exc:
            raise ServerError(
                f"The agent of box {box.name} ({box.agent_url}) does not answer: {exc}."
            ) from exc
        if not response.is_success:
            raise ServerError(f"The agent of box {box.name} answered HTTP {response.status_code}: "
                              f"{response.text[:300]}")
        return dict(response.json())
