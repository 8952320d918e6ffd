"""The farm's steward threads: one drops boxes that stopped answering every few seconds, the other
brings the boxes to the model the app's server group serves (a model switch of the group switches
every box at once: the queue's next book, which needs the new model, waits for them all).

They are apart because a placement can take long (a box's first boot, or its model download), and
a box that dies meanwhile must still leave the router within seconds. For the same reason each box
is placed on a thread of its own: one box's boot must not hold back another box's placement (one
that joined, was resumed or pinned to another model meanwhile).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from omni_web.errors import OmniWebError
from omni_web.farm.registry import FarmRegistry, RouterTarget
from omni_web.server import ServerManager

__all__ = ["FarmWatcher", "group_target"]

_log = logging.getLogger(__name__)


def group_target(manager: ServerManager) -> RouterTarget:
    """The router and model of the manager's running group, read afresh on each call."""

    def target() -> tuple[str, str] | None:
        record = manager.group.running_record()
        if record is None or record.router is None:
            return None
        return record.router.base_url, record.model_key

    return target


class FarmWatcher:
    """Runs :meth:`FarmRegistry.check` every ``interval_s`` on a thread, and every ``interval_s``
    places each box that is not being placed already, on a thread per box."""

    def __init__(self, registry: FarmRegistry, *, interval_s: float = 2.0) -> None:
        self._registry = registry
        self._interval_s = interval_s
        self._stop = threading.Event()
        self._placing: dict[str, threading.Thread] = {}  # box id -> its placement (the place loop's own)
        self._threads = [
            threading.Thread(target=self._every, args=(registry.check,), name="farm-check", daemon=True),
            threading.Thread(target=self._every, args=(self._place_each,), name="farm-place", daemon=True),
        ]

    def start(self) -> None:
        """Start the threads."""
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        """Stop the threads (a placement under way finishes first)."""
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=30)
        for thread in list(self._placing.values()):  # the place loop, which changes it, has ended
            thread.join(timeout=30)

    def _every(self, step: Callable[[], object]) -> None:
        while not self._stop.wait(self._interval_s):
            try:
                step()
            except (OmniWebError, OSError, ValueError) as exc:
                _log.warning("farm watch: %s", exc)

    def _place_each(self) -> None:
        """Route again what a restarted router lost, then start a placement for every box that has
        none under way (a model switch of the group still switches every box at once: all start
        in the same round)."""
        self._registry.route_missing()
        self._placing = {box_id: t for box_id, t in self._placing.items() if t.is_alive()}
        for box in self._registry.boxes():
            if box.id in self._placing:
                continue
            thread = threading.Thread(target=self._place, args=(box.id,), name=f"farm-place-{box.id}",
                                      daemon=True)
            self._placing[box.id] = thread
            thread.start()

    def _place(self, box_id: str) -> None:
        try:
            self._registry.place(box_id)
        except (OmniWebError, OSError, ValueError) as exc:
            _log.warning("farm watch: placing box %s: %s", box_id, exc)
