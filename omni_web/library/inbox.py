"""The watched inbox: a book dropped into a folder becomes a job with the inbox's preset.

A file is taken only once its size and mtime have not changed for ``settle_s`` (10 s): a copy in
progress is never read. Taken files move to ``taken/``; refused ones to ``failed/`` with a
``<name>.txt`` beside them saying why. Hidden files and partial downloads (``.part``,
``.crdownload``, ``.tmp``) are left alone.

Polling, not inotify: the stability rule needs a clock check on every candidate anyway, and
polling works where inotify sees nothing (NFS and SMB shares, many container bind mounts), with no
extra dependency. A scan every 2 s of one folder's top level costs nothing.
"""

from __future__ import annotations

import logging
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from omni_web.errors import OmniWebError

__all__ = ["InboxWatcher", "Outcome", "inbox_refusals"]

log = logging.getLogger(__name__)

TAKEN, FAILED = "taken", "failed"
_SKIPPED_SUFFIXES = (".part", ".crdownload", ".tmp", ".partial", ".download")


def inbox_refusals(folder: Path | None, *, limit: int = 5) -> list[tuple[str, str]]:
    """The newest refused files of the inbox ``folder``: ``(file name, why)``, newest first."""
    if folder is None:
        return []
    try:
        notes = sorted((folder / FAILED).glob("*.txt"), key=lambda p: p.stat().st_mtime, reverse=True)[:limit]
        found = []
        for note in notes:
            lines = [line for line in note.read_text(encoding="utf-8").splitlines()[1:] if line.strip()]
            found.append((note.name.removesuffix(".txt"), " ".join(lines)))
        return found
    except OSError:  # a folder that went away between two looks: nothing to show
        return []


@dataclass(frozen=True, slots=True)
class Outcome:
    """What became of one settled file: the job it made, or why it was refused."""

    name: str
    moved_to: Path
    job_id: str = ""
    error: str = ""


def _unique(folder: Path, name: str) -> Path:
    target = folder / name
    stem, suffix, n = Path(name).stem, Path(name).suffix, 2
    while target.exists():
        target = folder / f"{stem} ({n}){suffix}"
        n += 1
    return target


class InboxWatcher:
    """Scans ``folder()`` and hands each settled book to ``take`` (which returns the job id).

    ``take`` raises OmniWebError to refuse a book (its message goes into the ``.txt``). ``folder``
    is re-read on every scan (None: the inbox is off), so a change in Settings needs no restart.
    """

    def __init__(
        self,
        folder: Callable[[], Path | None],
        take: Callable[[Path], str],
        *,
        settle_s: float = 10.0,
        poll_s: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._folder = folder
        self._take = take
        self._settle_s = settle_s
        self._poll_s = poll_s
        self._clock = clock
        self._seen: dict[Path, tuple[int, int, float]] = {}  # path -> (size, mtime_ns, unchanged since)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def scan(self) -> list[Outcome]:
        """One pass: note every candidate's size and mtime, take the ones settled long enough."""
        folder = self._folder()
        if folder is None:
            return []
        folder.mkdir(parents=True, exist_ok=True)
        now, outcomes, present = self._clock(), [], set()
        for path in sorted(folder.iterdir()):
            if (
                not path.is_file()
                or path.name.startswith(".")
                or path.name.lower().endswith(_SKIPPED_SUFFIXES)
            ):
                continue
            present.add(path)
            stat = path.stat()
            facts = (stat.st_size, stat.st_mtime_ns)
            before = self._seen.get(path)
            if before is None or before[:2] != facts:
                self._seen[path] = (*facts, now)  # new, or still being written: the wait starts again
                continue
            if now - before[2] >= self._settle_s and stat.st_size > 0:
                outcomes.append(self._handle(folder, path))
                self._seen.pop(path, None)
        for gone in set(self._seen) - present:
            self._seen.pop(gone, None)
        return outcomes

    def _handle(self, folder: Path, path: Path) -> Outcome:
        try:
            job_id = self._take(path)
        except OmniWebError as exc:
            return self._refuse(folder, path, str(exc))
        except Exception as exc:  # a bug must not stop the watcher; the file says what happened
            log.exception("The inbox could not take %s", path)
            return self._refuse(folder, path, f"Internal error: {exc!r}. See the app's log.")
        target = _unique(folder / TAKEN, path.name)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(path, target)
        log.info("Inbox: %s became job %s", path.name, job_id)
        return Outcome(path.name, target, job_id=job_id)

    def _refuse(self, folder: Path, path: Path, reason: str) -> Outcome:
        target = _unique(folder / FAILED, path.name)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(path, target)
        target.with_name(target.name + ".txt").write_text(
            f"{path.name} was not queued.\n\n{reason}\n", encoding="utf-8"
        )
        log.warning("Inbox: refused %s: %s", path.name, reason)
        return Outcome(path.name, target, error=reason)

    def start(self) -> None:
        """Scan every ``poll_s`` in a background thread until :meth:`stop`."""
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="omni-web-inbox", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop scanning (a file being taken is finished first)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)

    def _run(self) -> None:
        while not self._stop.wait(self._poll_s):
            try:
                self.scan()
            except OSError as exc:  # the folder vanished or is unreadable: say so, try again later
                log.warning("Inbox scan failed: %s", exc)
