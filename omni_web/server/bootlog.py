"""Reading the server's boot log while it starts: new lines, and the port lines that matter.

sglang-omni 0.1.9 checks its port before loading any model (``find_available_port`` in
``sglang_omni/serve/launcher.py``). On a busy port it warns ``Port X is already in use on H.`` and
``Using port Y instead.`` and serves on Y, where no client looks; with ``SGLANG_OMNI_STRICT_PORT=1``
it raises ``RuntimeError("port X is already in use on H and SGLANG_OMNI_STRICT_PORT=1 forbids
falling back")`` and exits 1. :class:`BootLogWatcher` spots both so the boot can be aborted with
a message that names the ports.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["BootLogWatcher", "PortEvent", "came_up", "parse_port_event"]

_FALLBACK_RE = re.compile(r"Using port (\d+) instead\.")
_IN_USE_RE = re.compile(r"Port (\d+) is already in use on (\S+?)\.?$")
_STRICT_RE = re.compile(r"port (\d+) is already in use on (\S+) and SGLANG_OMNI_STRICT_PORT=1")


_LISTENING = "Uvicorn running on http"  # uvicorn's line once the port listens, after the models load
_WARMUP_FAILED = "Server warmup failed"  # sglang-omni's, when its warmup request to itself fails


def came_up(log_text: str) -> bool:
    """True when one start's log shows the server got through its boot: its port listened (the
    models loaded) and its warmup did not fail. A crash after that is the work's, not the boot's."""
    return _LISTENING in log_text and _WARMUP_FAILED not in log_text


@dataclass(frozen=True, slots=True)
class PortEvent:
    """A port line from the boot log: the busy port, and where the server moved (None if strict)."""

    busy_port: int | None
    fallback_port: int | None
    host: str = ""
    strict: bool = False


def parse_port_event(line: str) -> PortEvent | None:
    """Recognise one of the launcher's port lines; None for any other line."""
    if match := _STRICT_RE.search(line):
        return PortEvent(busy_port=int(match.group(1)), fallback_port=None, host=match.group(2), strict=True)
    if match := _FALLBACK_RE.search(line):
        return PortEvent(busy_port=None, fallback_port=int(match.group(1)))
    if match := _IN_USE_RE.search(line.rstrip()):
        return PortEvent(busy_port=int(match.group(1)), fallback_port=None, host=match.group(2))
    return None


class BootLogWatcher:
    """Follows a log file from a byte offset, returning whole new lines on each :meth:`poll`.

    It also remembers the port lines seen so far: ``fallback_port`` is set once ``Using port Y
    instead.`` appeared, ``strict_refusal`` once the strict-mode error appeared.
    """

    def __init__(self, path: Path, *, offset: int = 0) -> None:
        self.path = path
        self._offset = offset
        self._partial = b""
        self.busy_port: int | None = None
        self.fallback_port: int | None = None
        self.strict_refusal: PortEvent | None = None

    def poll(self, *, final: bool = False) -> list[str]:
        """New complete lines since the last call (``final`` also returns an unterminated last line)."""
        try:
            with open(self.path, "rb") as handle:
                handle.seek(self._offset)
                data = handle.read()
        except OSError:
            data = b""
        self._offset += len(data)
        data = self._partial + data
        *complete, self._partial = data.split(b"\n")
        if final and self._partial:
            complete.append(self._partial)
            self._partial = b""
        lines = [raw.decode("utf-8", errors="replace").rstrip("\r") for raw in complete]
        for line in lines:
            self._note(line)
        return lines

    def _note(self, line: str) -> None:
        event = parse_port_event(line)
        if event is None:
            return
        if event.strict:
            self.strict_refusal = event
        elif event.fallback_port is not None:
            self.fallback_port = event.fallback_port
        elif event.busy_port is not None:
            self.busy_port = event.busy_port
