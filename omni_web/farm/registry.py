"""The app's side of the farm: boxes that joined with a farm token, and their workers in the router.

The record (``state/farm.json``, owner-only because it holds each agent's call-back secret) lists
every box: its agent URL, GPUs, model and worker URLs, and what the user decided for it (a model
it is pinned to, or drained). The app's job store stays the only orchestrator and the router the
data plane: this class only tells agents what to serve and keeps the router's worker list equal to
the workers that answer and that the user wants routed.

The app (its watcher and its pages) and a CLI run change the record at the same time, so every
change re-reads the record under a lock (:func:`omni_web.files.locked`) and changes only its box;
agents and the router are called outside it, except the quick router calls that must agree with
the record (a box drained while it booted is never routed when the boot ends).
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any
from urllib.parse import urlsplit

import httpx

from omni_web.catalog import get_entry
from omni_web.errors import FarmBoxNotFound, FarmRefused, ServerError
from omni_web.farm.tokens import farm_token_store
from omni_web.files import locked, write_atomic
from omni_web.paths import DataPaths
from omni_web.server import add_worker, drain_worker, read_router_health, remove_worker

__all__ = ["FARM_RECORD_NAME", "FarmBox", "FarmRegistry", "RouterTarget"]

FARM_RECORD_NAME = "farm.json"

# (router base URL, model key) of the group the farm serves, or None when no group runs.
RouterTarget = Callable[[], "tuple[str, str] | None"]

# A /serve call covers the box's model download when its HF cache lacks the model (tens of GB on a
# home line), so it may take hours beyond the boot timeout.
DOWNLOAD_ALLOWANCE_S = 6 * 3600.0

# States in which a box's workers run its model: "serving" in the router, "standby" outside it
# (a box pinned to another model than the router's: a warm pool for when the queue needs it).
_UP_STATES = ("serving", "standby")


@dataclass(frozen=True, slots=True)
class FarmBox:
    """One box that joined: where its agent listens, its GPUs, what it serves and what the user decided."""

    id: str
    name: str
    agent_url: str
    secret: str = field(repr=False)
    gpus: tuple[dict[str, Any], ...] = ()
    model_key: str = ""
    worker_urls: tuple[str, ...] = ()
    # joined | starting | switching | serving | standby | drained | resuming | removing | failed | lost
    state: str = "joined"
    joined_at: float = 0.0
    message: str = ""
    pinned_model: str = ""  # "": it follows the server group's model; else it serves this one only
    drained: bool = False  # the user drained it: nothing places or routes it until resumed
    crashes: int = 0  # its servers' exits that nobody asked for (the agent started them again)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FarmBox:
        """From the record's JSON (rows written before a field existed take its default)."""
        known = {f.name for f in fields(cls)}
        row = {key: value for key, value in data.items() if key in known}
        row["gpus"] = tuple(data.get("gpus", ()))
        row["worker_urls"] = tuple(data.get("worker_urls", ()))
        return cls(**row)

    @property
    def label(self) -> str:
        """How messages name the box: ``lab-1 (a1b2c3d4)``."""
        return f"{self.name} ({self.id})"


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
    def paths(self) -> DataPaths:
        """The app's data root."""
        return self._paths

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

    def find(self, ref: str) -> FarmBox:
        """The box whose id or name is ``ref`` (ids first: two boxes may share a host name).

        Raises:
            FarmBoxNotFound: no box has it, or several boxes have that name.
        """
        boxes = self.boxes()
        by_id = [b for b in boxes if b.id == ref]
        named = by_id or [b for b in boxes if b.name == ref]
        if len(named) == 1:
            return named[0]
        raise FarmBoxNotFound(ref, [b.label for b in boxes], ambiguous=len(named) > 1)

    def _write(self, box: FarmBox | None, *, drop: str = "") -> None:
        """Replace (or drop) one row; the caller holds both locks."""
        kept = [b for b in self.boxes() if b.id not in (drop, box.id if box else "")]
        rows = [asdict(b) for b in ([*kept, box] if box else kept)]
        rows.sort(key=lambda row: row["joined_at"])
        write_atomic(self.path, json.dumps(rows, indent=2) + "\n", mode=0o600)

    def _save(self, box: FarmBox | None, *, drop: str = "") -> None:
        with self._lock, locked(self.path):
            self._write(box, drop=drop)

    def _update(self, box_id: str, change: Callable[[FarmBox], FarmBox | None]) -> FarmBox | None:
        """Apply ``change`` to the box's current row (None from it drops the row); None if it is gone."""
        with self._lock, locked(self.path):
            box = self.box(box_id)
            if box is None:
                return None
            changed = change(box)
            if changed != box:  # the watcher's checks mostly change nothing: no rewrite then
                self._write(changed, drop=box_id)
            return changed

    # --- joining and leaving --------------------------------------------------------------------

    def join(self, token: str | None, *, name: str, agent_url: str, secret: str,
             gpus: tuple[dict[str, Any], ...]) -> FarmBox:
        """Record a box whose agent presented ``token``; a box at the same agent URL, or a lost one
        of the same name on the same host (an agent that restarted, perhaps on another port after a
        reboot), is replaced: it keeps the pin and drain the user gave it.

        Raises:
            FarmRefused: ``token`` is not a live farm token.
        """
        if farm_token_store(self._paths).verify(token) is None:
            raise FarmRefused(agent_url)
        box = FarmBox(id=secrets.token_hex(4), name=name, agent_url=agent_url.rstrip("/"), secret=secret,
                      gpus=tuple(gpus), joined_at=time.time())
        host = urlsplit(box.agent_url).hostname
        for old in self.boxes():
            if old.agent_url == box.agent_url or (
                old.state == "lost" and old.name == name and urlsplit(old.agent_url).hostname == host
            ):
                self._unroute(old)
                self._save(None, drop=old.id)
                box = replace(box, pinned_model=old.pinned_model, drained=old.drained,
                              state="drained" if old.drained else box.state)
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

    # --- what the user decides for a box (Server tab, ``server farm``) ---------------------------

    def drain(self, box_id: str) -> FarmBox:
        """Drain the box's workers in the router (in-flight requests finish, no new ones come) and
        keep it out of the farm's placements until :meth:`resume`; its servers keep running.

        Raises:
            FarmBoxNotFound: no such box.
        """
        box = self._mark(box_id, drained=True, state="drained")
        target = self._target()
        if target is not None:
            for url in box.worker_urls:
                drain_worker(target[0], url)
        return box

    def resume(self, box_id: str) -> FarmBox:
        """Undo :meth:`drain`: the next placement (the app's watcher, every few seconds) routes the
        box again, after a boot if the model it should serve changed meanwhile.

        Raises:
            FarmBoxNotFound: no such box.
        """
        current = self._require(box_id)
        return self._mark(box_id, drained=False, state="resuming" if current.drained else current.state)

    def pin(self, box_id: str, model_key: str) -> FarmBox:
        """Pin the box to ``model_key`` (its own pool: it serves that model, and is routed only while
        the server group serves it too); ``""`` unpins it (it follows the group's model again).
        The switch itself is the next placement's (the app's watcher).

        Raises:
            FarmBoxNotFound: no such box.
            UnknownModel: ``model_key`` is not in the catalog.
        """
        if model_key:
            get_entry(model_key)
        box = self._require(box_id)
        return self._update(box_id, lambda current: replace(current, pinned_model=model_key)) or box

    def remove(self, box_id: str) -> FarmBox | None:
        """The user removes a box: drain, remove from the router, ask the agent to stop, forget it.

        Returns the box as it was forgotten, state "removed" (None when it was not in the farm); its
        message says why its agent did not stop its servers when it could not be told to.
        """
        box = self._update(box_id, lambda current: replace(current, drained=True, state="removing"))
        if box is None:
            return None
        self._unroute(box)
        why = ""
        try:
            self.call_agent(box, "POST", "/stop", timeout_s=30.0)
        except ServerError as exc:
            why = str(exc)  # an agent that cannot be reached has nothing routed any more either
        self._save(None, drop=box_id)
        return replace(box, state="removed", message=why)

    def _require(self, box_id: str) -> FarmBox:
        box = self.box(box_id)
        if box is None:
            raise FarmBoxNotFound(box_id, [b.label for b in self.boxes()])
        return box

    def _mark(self, box_id: str, *, drained: bool, state: str) -> FarmBox:
        self._require(box_id)
        box = self._update(box_id, lambda current: replace(current, drained=drained, state=state))
        if box is None:  # it left between the two reads
            raise FarmBoxNotFound(box_id, [b.label for b in self.boxes()])
        return box

    # --- serving --------------------------------------------------------------------------------

    def group_model(self) -> str:
        """The model the server group (and so the farm) serves now; ``""`` when no group runs."""
        target = self._target()
        return target[1] if target is not None else ""

    def wanted(self, box: FarmBox) -> tuple[str, str | None]:
        """(model the box should serve, router to route it into or None); ``""`` for no model."""
        target = self._target()
        model = box.pinned_model or (target[1] if target is not None else "")
        router = target[0] if target is not None and target[1] == model and not box.drained else None
        return model, router

    def place(self, box_id: str) -> FarmBox | None:
        """Make the box serve the model it should (its pin, else the farm's) and route its workers
        when the router serves that model; a drained box and a box with nothing to serve stay.

        A box already serving another model is drained and switched first.
        """
        box = self.box(box_id)
        if box is None or box.drained:
            return box
        model, router = self.wanted(box)
        if not model:
            return box
        if box.model_key == model and box.state in _UP_STATES:
            if (box.state == "serving") == (router is not None):
                return box
            return self._settle(box_id, model, box.worker_urls)  # routed or unrouted, no boot
        self._unroute(box)
        starting = "switching" if box.model_key and box.model_key != model else "starting"
        box = self._update(box_id, lambda current: replace(current, state=starting, model_key=model,
                                                           worker_urls=(), message=""))
        if box is None:
            return None
        urls = self._ask_to_serve(box, model)
        return self.box(box_id) if urls is None else self._settle(box_id, model, urls)

    def _ask_to_serve(self, box: FarmBox, model: str) -> tuple[str, ...] | None:
        """The box's worker URLs once its agent serves ``model``; None (the box marked failed, with
        the agent's answer) when it could not."""
        try:
            asked = {"model": model, "timeout_s": self._timeout_s}
            status = self.call_agent(box, "POST", "/serve", asked,
                                     timeout_s=self._timeout_s + DOWNLOAD_ALLOWANCE_S)
        except ServerError as exc:
            why = str(exc)
            self._update(box.id, lambda current: replace(current, state="failed", message=why))
            return None
        return tuple(str(w["url"]) for w in status.get("workers", ()))

    def _settle(
        self, box_id: str, model: str, urls: tuple[str, ...], *, returning: bool = False
    ) -> FarmBox | None:
        """Record the box's workers and route them if the record and the target, read again now,
        still want it (the user may have drained, removed or re-pinned it while it booted, or the
        group switched model); otherwise the next placement does what is wanted now.

        ``returning``: ``urls`` are workers the agent started again after a crash, added to the
        box's others, and only while the box is still up on ``model`` (a placement under way owns it).
        """

        def settle(current: FarmBox) -> FarmBox:
            nonlocal urls
            if returning:
                if current.state not in _UP_STATES or current.model_key != model:
                    return current
                urls = current.worker_urls + tuple(u for u in urls if u not in current.worker_urls)
            if current.drained:
                return replace(current, model_key=model, worker_urls=urls)
            wanted, router = self.wanted(current)
            # a pin or a group switch meanwhile: never route workers into a router of another model
            if router is None or wanted != model:
                self._unroute(current, only=[u for u in current.worker_urls if u in urls])
                return replace(current, model_key=model, worker_urls=urls, state="standby")
            try:
                for url in urls:
                    add_worker(router, url)
            except ServerError as exc:
                return replace(current, model_key=model, worker_urls=urls, state="failed", message=str(exc))
            return replace(current, model_key=model, worker_urls=urls, state="serving", message="")

        return self._update(box_id, settle)

    def serve_unrouted(self, model_key: str) -> list[str]:
        """Every box that may serve ``model_key`` (not drained, not pinned to another) serves it now,
        all at once; returns their worker URLs, which a group with no GPU of its own starts its
        router with. Each box waits on standby until that router exists; the watcher routes it then.
        """

        def serve(box: FarmBox) -> tuple[str, ...]:
            urls = self._ask_to_serve(box, model_key)
            if urls is None:
                return ()
            self._update(box.id, lambda current: replace(current, state="standby", model_key=model_key,
                                                         worker_urls=urls, message=""))
            return urls

        boxes = [b for b in self.boxes() if not b.drained and b.pinned_model in ("", model_key)]
        if not boxes:
            return []
        with ThreadPoolExecutor(max_workers=len(boxes), thread_name_prefix="farm-serve") as pool:
            return [url for urls in pool.map(serve, boxes) for url in urls]

    def place_all(self) -> tuple[FarmBox, ...]:
        """:meth:`place` every box at once. The farm's model changes when the queue's next book needs
        another one, so every box is idle then: switched together, each waits one boot, not one per
        box before it."""
        self.route_missing()
        boxes = self.boxes()
        if len(boxes) < 2:
            placed = [self.place(box.id) for box in boxes]
        else:
            with ThreadPoolExecutor(max_workers=len(boxes), thread_name_prefix="farm-place") as pool:
                placed = list(pool.map(lambda box: self.place(box.id), boxes))
        return tuple(b for b in placed if b is not None)

    def route_missing(self) -> None:
        """Route again the serving boxes' workers the router does not list: it restarted, or the
        group started a new one for the same model (their boxes need no switch, so no placement
        would add them). One ``/health`` of the router; each box is settled under the record's lock,
        so a box drained or re-pinned meanwhile is not routed."""
        target = self._target()
        health = read_router_health(target[0]) if target is not None else None
        if health is None:
            return
        listed = {w.url for w in health.workers}
        for box in self.boxes():
            if box.state == "serving" and not box.drained and not set(box.worker_urls) <= listed:
                self._settle(box.id, box.model_key, box.worker_urls)

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
            crashes = len(status.get("crashes", ()))
            given_up = " ".join(str(why) for why in dict(status.get("given_up", {})).values())
            if gone or (box.state == "lost" and box.drained) or crashes != box.crashes or (
                given_up and given_up != box.message
            ):
                self._save_unless_changed(box, worker_urls=tuple(u for u in box.worker_urls if u in alive),
                                          state="drained" if box.drained else box.state, crashes=crashes,
                                          message=given_up or box.message)
            # A look between a crash and its restart saw the worker gone and dropped it; the agent
            # runs it again at its URL, so it is taken back (nothing else would route it again).
            back = tuple(str(w["url"]) for w in status.get("workers", ())
                         if w.get("model_key") == box.model_key and str(w["url"]) not in box.worker_urls)
            if back and box.state in _UP_STATES:
                self._settle(box.id, box.model_key, back, returning=True)
        return self.boxes()

    def worker_crashes(self) -> list[str]:
        """An id for every crash of any box's servers (box, GPU, pid), asked of the agents now: a
        renderer counts them as it counts its own workers' deaths, so a chunk that kills every
        server it is sent to is found once, not once per box. A box that does not answer adds none
        (the check drops it from the router)."""
        found = []
        for box in self.boxes():
            try:
                status = self.call_agent(box, "GET", "/status", timeout_s=3.0)
            except ServerError:
                continue
            found += [f"{box.id}:{crash['id']}" for crash in status.get("crashes", ())]
        return found

    def _save_unless_changed(self, seen: FarmBox, **changes: Any) -> None:
        """Save ``seen`` with ``changes`` unless the box changed since it was read (the watcher
        checks and places on two threads, the user drains or pins: the newer record wins)."""
        self._update(seen.id, lambda current: replace(current, **changes) if current == seen else current)

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
