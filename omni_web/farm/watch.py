"""The farm's steward thread: every few seconds, drop boxes that stopped answering and bring the
others to the model the app's server group serves (a model switch of the group switches every
box at once: the queue's next book, which needs the new model, waits for them all)."""

from __future__ import annotations

import logging
import threading

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
    """Runs :meth:`FarmRegistry.check` and :meth:`FarmRegistry.place_all` every ``interval_s``."""

    def __init__(self, registry: FarmRegistry, *, interval_s: float = 2.0) -> None:
        self._registry = registry
        self._interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="farm-watch", daemon=True)

    def start(self) -> None:
        """Start the thread."""
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread (a placement under way finishes first)."""
        self._stop.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            try:
                self._registry.check()
                self._registry.place_all()
            except (OmniWebError, OSError, ValueError) as exc:
                _log.warning("farm watch: %s", exc)
