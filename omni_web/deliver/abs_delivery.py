"""Deliver a finished book to Audiobookshelf: one item per (book, narrator version).

A step after the book, never a condition of it: :func:`deliver_after_job` catches everything and
records the outcome in the :class:`DeliveryStore` (shown on the job, with a Retry). The book
folder of the library layout (omni_web/deliver/layout.py) maps one to one onto an ABS item:
``<Author>/<Series>/<Vol N - Title {Voice, Model}>`` is both our folder and the ``author``,
``series`` and ``title`` form fields of an upload (which ABS turns into the same path), or the
path written under the library folder in folder mode.

The first delivery of a folder is picked up as a new item (by ABS's watcher after an upload, by a
library scan in folder mode). A later delivery of the same folder is a rebuilt book (a
regenerated chunk, a lexicon change): its files are rewritten in place, which ABS's watcher
ignores, so exactly one ``POST /api/items/<id>/scan`` follows.
"""

from __future__ import annotations

import contextlib
import json
import logging
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from omni_web.deliver.abs_client import AbsClient
from omni_web.deliver.abs_config import AbsConfig
from omni_web.deliver.sidecars import DESC_TXT, METADATA_JSON, READER_TXT
from omni_web.errors import DeliveryError, OmniWebError, internal_error_message
from omni_web.files import atomic_path, locked, write_atomic
from omni_web.paths import DataPaths

# How long a delivery waits for Audiobookshelf's scan to show a new book, how often it looks, and
# after how long it asks for the scan again (a request made while a scan runs is dropped).
SCAN_WAIT_S, SCAN_POLL_S, SCAN_AGAIN_S = 60.0, 1.0, 5.0

__all__ = [
    "DeliveryRecord",
    "DeliveryStore",
    "book_files",
    "deliver_after_job",
    "deliver_book",
    "delivery_text",
    "publish_folder",
]

log = logging.getLogger(__name__)

ClientFactory = Callable[[AbsConfig], AbsClient]


@dataclass(frozen=True, slots=True)
class DeliveryRecord:
    """The last delivery of one book folder. ``state``: delivered | failed."""

    folder: str
    rel_path: str
    state: str
    mode: str = ""
    library_id: str = ""
    item_id: str = ""
    job_id: str = ""
    error: str = ""
    deliveries: int = 0  # successful ones; the second and later rescan the item
    updated_at: float = 0.0

    @property
    def failed(self) -> bool:
        """True when the last attempt failed (the job shows Retry)."""
        return self.state == "failed"


@dataclass(frozen=True, slots=True)
class DeliveryStore:
    """``state/deliveries.json``: one record per book folder; every read and write holds its lock."""

    path: Path

    @classmethod
    def for_paths(cls, paths: DataPaths) -> DeliveryStore:
        """The store of a data root."""
        return cls(paths.state_dir / "deliveries.json")

    def get(self, folder: Path | str) -> DeliveryRecord | None:
        """The record of a book folder, if it was ever delivered."""
        with self._locked():
            doc = self._read().get(str(folder))
        return DeliveryRecord(**doc) if doc else None

    def for_job(self, job_id: str) -> DeliveryRecord | None:
        """The record a job's delivery left, if any."""
        with self._locked():
            docs = [d for d in self._read().values() if d.get("job_id") == job_id]
        return DeliveryRecord(**docs[-1]) if docs else None

    def put(self, record: DeliveryRecord) -> DeliveryRecord:
        """Store (replace) a folder's record."""
        with self._locked():
            docs = self._read()
            docs[record.folder] = asdict(record)
            write_atomic(self.path, json.dumps(docs, indent=1, ensure_ascii=False))
        return record

    def _locked(self) -> contextlib.AbstractContextManager[None]:
        return locked(self.path)

    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            doc = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("Ignoring unreadable delivery records %s: %s", self.path, exc)
            return {}
        return {k: v for k, v in doc.items() if isinstance(v, dict)} if isinstance(doc, dict) else {}


def book_files(folder: Path) -> list[Path]:
    """What a library item gets from a book folder: the audio (m4b, else the MP3 tracks), the cover,
    the read-along EPUB (the item's ebook) and the sidecars; reports and subtitles stay home."""
    folder = Path(folder)
    audio = sorted(folder.glob("*.m4b")) or sorted(folder.glob("*.mp3"))
    extra = [*sorted(folder.glob("cover.*")), *sorted(folder.glob("*.readalong.epub")),
             *sorted(folder.glob("*.opf"))]
    sidecars = [folder / name for name in (METADATA_JSON, DESC_TXT, READER_TXT)]
    return [p for p in [*audio, *extra, *sidecars] if p.is_file() and not p.name.startswith(".")]


def publish_folder(files: list[Path], target: Path) -> bool:
    """Copy ``files`` into ``target`` so a watcher never sees a half-written one; True if it is new.

    A new folder is filled under a dot-name beside it (watchers skip dot-names) and renamed into
    place whole; in an existing one each file is copied to a dot-name and renamed over the old.
    """
    target = Path(target)
    if not target.is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(target) as staging:
            staging.mkdir()
            for path in files:
                shutil.copyfile(path, staging / path.name)
        return True
    for path in files:
        with atomic_path(target / path.name) as staged:
            shutil.copyfile(path, staged)
    return False


def _parts(rel_path: str) -> tuple[str, str, str]:
    """(author, series, title) of ``Author/Series/Title``, ``Author/Title`` or ``Title`` (no author)."""
    parts = Path(rel_path).parts
    if len(parts) == 3:
        return parts[0], parts[1], parts[2]
    if len(parts) == 2:
        return parts[0], "", parts[1]
    if len(parts) == 1:
        return "", "", parts[0]
    raise DeliveryError(
        f"The book folder '{rel_path}' is not in the library layout ([Author/[Series/]]Title), "
        "so it cannot become one Audiobookshelf item. Move it with: python -m omni_web outputs migrate"
    )


def deliver_book(
    config: AbsConfig,
    folder: Path,
    output_root: Path,
    *,
    store: DeliveryStore,
    job_id: str = "",
    client_factory: ClientFactory | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> DeliveryRecord:
    """Deliver one book folder now; returns the stored record (``failed`` with the message on error).

    Raises nothing for delivery problems: they are recorded.
    """
    folder = Path(folder)
    previous = store.get(folder)
    try:
        rel_path = folder.resolve().relative_to(Path(output_root).resolve()).as_posix()
    except ValueError:
        rel_path = folder.name
    base = previous or DeliveryRecord(folder=str(folder), rel_path=rel_path, state="failed")
    base = replace(
        base, rel_path=rel_path, mode=config.mode, job_id=job_id or base.job_id, updated_at=time.time()
    )
    try:
        author, series, title = _parts(rel_path)
        if not (folder / METADATA_JSON).is_file():
            # Only a library-layout folder is one book: a flat folder holds every narrator version.
            raise DeliveryError(
                f"The book folder {folder} is not in the library layout (no {METADATA_JSON}), so it "
                "cannot become one Audiobookshelf item. Move it with: python -m omni_web outputs migrate"
            )
        files = book_files(folder)
        if not any(p.suffix in (".m4b", ".mp3") for p in files):
            raise DeliveryError(f"The book folder {folder} holds no m4b or MP3 to deliver.")
        make = client_factory or (lambda c: AbsClient(c.url, c.token))
        note = ""
        with make(config) as client:
            library = client.library(config.library)
            rebuilt = previous is not None and previous.deliveries > 0
            if config.mode == "upload":
                client.upload(
                    library,
                    title=title,
                    author=author,
                    series=series,
                    files=files,
                    folder_id=config.folder_id,
                )
            else:
                rebuilt = not publish_folder(files, Path(config.folder_path) / rel_path) or rebuilt
            item_id = base.item_id if base.library_id == library.id else ""
            if rebuilt:
                item_id = item_id or client.find_item(library.id, rel_path) or ""
                if item_id:
                    client.scan_item(item_id)
                else:
                    client.scan_library(library.id)  # the item is not known yet: let a scan find it
            else:
                note = _scan_new(client, library.id, config.mode)
                if not note:  # a scan was asked for: the book is delivered once it has found it
                    item_id = _found_after_scans(client, library.id, rel_path, clock=clock, sleep=sleep)
        record = replace(
            base,
            state="delivered",
            library_id=library.id,
            item_id=item_id,
            error=note,
            deliveries=base.deliveries + 1,
        )
    except OmniWebError as exc:
        record = replace(base, state="failed", error=str(exc))
    except OSError as exc:
        record = replace(
            base, state="failed", error=f"Copying the book into the library folder failed: {exc}"
        )
    return store.put(record)


def _found_after_scans(
    client: AbsClient,
    library_id: str,
    rel_path: str,
    *,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
) -> str:
    """The new item's id once a scan has found it.

    Audiobookshelf answers a scan request made while another scan of the library runs with 200 and
    does nothing ("Already scanning" in its log: two books delivered a second apart), so the item is
    looked for, and the scan asked for again, until it shows (:data:`SCAN_WAIT_S` at most).

    Raises:
        DeliveryError: the item never showed.
    """
    deadline = clock() + SCAN_WAIT_S
    asked = clock()
    while True:
        item_id = client.find_item(library_id, rel_path)
        if item_id:
            return item_id
        now = clock()
        if now > deadline:
            raise DeliveryError(
                f"Audiobookshelf took the files of {rel_path} but its library scans did not show the book "
                f"within {SCAN_WAIT_S:.0f} s. Start a scan of the library in Audiobookshelf, or retry."
            )
        if now - asked >= SCAN_AGAIN_S:
            client.scan_library(library_id)
            asked = now
        sleep(SCAN_POLL_S)


def _scan_new(client: AbsClient, library_id: str, mode: str) -> str:
    """Scan the library for a new item: a library whose folder watcher is off (or a folder written
    directly) shows it only after a scan. An upload-only user may not scan (admins only): the upload
    stands, and the note says so (returned; "" when the scan was requested)."""
    try:
        client.scan_library(library_id)
    except DeliveryError as exc:
        if mode != "upload" or exc.status not in (401, 403):
            raise
        return (
            "The upload is done, but this token may not start a library scan (admins only): the book shows "
            "once "
            "Audiobookshelf's folder watcher or a scan finds it."
        )
    return ""


def deliver_after_job(
    paths: DataPaths,
    config: AbsConfig,
    job_id: str,
    folder: Path | None,
    *,
    output_root: Path,
    client_factory: ClientFactory | None = None,
) -> DeliveryRecord | None:
    """Deliver a finished job's book (``folder``: its result's ``output_dir``) when Audiobookshelf is
    set up; never raises (a bug is logged)."""
    if not config.active or folder is None or not folder.parts:
        return None
    store = DeliveryStore.for_paths(paths)
    try:
        return deliver_book(
            config, folder, output_root, store=store, job_id=job_id, client_factory=client_factory
        )
    except Exception as exc:  # a bug must not fail a finished book
        log.exception("Delivering job %s failed with an internal error", job_id)
        record = DeliveryRecord(
            folder=str(folder),
            rel_path="",
            state="failed",
            job_id=job_id,
            error=internal_error_message(exc),
            updated_at=time.time(),
        )
        try:
            return store.put(record)
        except OSError:
            return record


def delivery_text(record: DeliveryRecord | None) -> str:
    """One line for a job or a run: delivered (where), or failed (why)."""
    if record is None:
        return ""
    if record.failed:
        retry = "The book itself is done; Retry sends it again."
        return f"**Audiobookshelf: not delivered.** {record.error} {retry}"
    how = "uploaded and scanned" if record.mode == "upload" else "written into the library folder and scanned"
    again = f", rescanned after rebuild {record.deliveries - 1}×" if record.deliveries > 1 else ""
    note = f" {record.error}" if record.error else ""
    return f"Audiobookshelf: {how} as `{record.rel_path}`{again}.{note}"
