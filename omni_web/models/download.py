"""Download a catalog model's weights into the HF cache with ``huggingface_hub.snapshot_download``.

Progress comes from an injected ``tqdm_class``: snapshot_download feeds every file's bytes into two
aggregate byte bars (network transfer and bytes written) and counts finished files on a third;
our class turns those updates into :class:`DownloadProgress` events, and checks the cancel event
on every update, raising to abort. What huggingface_hub 2.4 keeps after an interruption: every
file that finished (a re-run skips it, so a model resumes file by file) and, within one run, the
bytes of a file whose connection broke (it retries with an HTTP Range request). A file cut short
by a cancel is discarded: 2.4 downloads into a per-process temporary name and removes it on
failure.

This module is the one place huggingface_hub's network errors become omni-web errors.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from huggingface_hub import constants as hf_constants
from huggingface_hub import snapshot_download
from huggingface_hub.errors import (
    DryRunError,
    GatedRepoError,
    HfHubHTTPError,
    LocalEntryNotFoundError,
    OfflineModeIsEnabled,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)
from tqdm.auto import tqdm as base_tqdm

from omni_web.backend.disk import check_disk_space, format_bytes
from omni_web.catalog import CatalogEntry, model_label
from omni_web.errors import (
    DiskFullError,
    DownloadCancelled,
    DownloadError,
    GatedModel,
    OmniWebError,
    exception_detail,
)
from omni_web.files import is_disk_full
from omni_web.models.cache import hub_cache_dir

__all__ = [
    "DownloadPlan",
    "DownloadProgress",
    "ProgressCallback",
    "download_model",
    "plan_download",
]

# Progress events at most this often, except the ones that finish a file or the download.
_MIN_EVENT_INTERVAL_S = 0.1


@dataclass(frozen=True, slots=True)
class DownloadProgress:
    """One progress event of one model download; bytes include files cached before it started."""

    key: str
    repo_id: str
    downloaded_bytes: int
    total_bytes: int
    files_done: int
    files_total: int
    finished: bool = False

    @property
    def fraction(self) -> float:
        """0.0-1.0 by bytes (1.0 for an empty repo)."""
        return min(1.0, self.downloaded_bytes / self.total_bytes) if self.total_bytes else 1.0

    @property
    def downloaded_str(self) -> str:
        """``1.2 GB``."""
        return format_bytes(self.downloaded_bytes)

    @property
    def total_str(self) -> str:
        """``4.5 GB``."""
        return format_bytes(self.total_bytes)

    @property
    def summary(self) -> str:
        """``Qwen3-TTS 0.6B Base: 1.2 GB / 2.5 GB, 3/9 files`` (the model by name, not by key)."""
        files = f"{self.files_done}/{self.files_total} files"
        return f"{model_label(self.key)}: {self.downloaded_str} / {self.total_str}, {files}"


ProgressCallback = Callable[[DownloadProgress], None]


@dataclass(frozen=True, slots=True)
class DownloadPlan:
    """What a download of one model would fetch (from the hub's listing; nothing downloaded)."""

    key: str
    repo_id: str
    commit_hash: str | None
    total_bytes: int
    cached_bytes: int
    files_total: int
    files_cached: int

    @property
    def to_download_bytes(self) -> int:
        """Bytes still missing from the cache."""
        return max(0, self.total_bytes - self.cached_bytes)

    @property
    def to_download_str(self) -> str:
        """``2.5 GB``."""
        return format_bytes(self.to_download_bytes)

    @property
    def total_str(self) -> str:
        """``2.5 GB``."""
        return format_bytes(self.total_bytes)


def _endpoint_str(endpoint: str | None) -> str:
    return (endpoint or hf_constants.ENDPOINT).rstrip("/")


def _translate(exc: BaseException, entry: CatalogEntry, endpoint: str | None) -> OmniWebError | None:
    """Map a huggingface_hub / network / disk error to ours; None for anything unexpected."""
    where = _endpoint_str(endpoint)
    name = f"{entry.label} ({entry.repo_id})"
    if isinstance(exc, DryRunError):
        # The dry run hides the hub's answer in __cause__ (gated, not found, no connection).
        inner = _translate(exc.__cause__, entry, endpoint) if exc.__cause__ is not None else None
        return inner or DownloadError(
            f"{name}: could not reach the hub at {where}. Check the network, HF_ENDPOINT and HF_HUB_OFFLINE."
        )
    if isinstance(exc, GatedRepoError):
        return GatedModel(
            f"{name} is a gated repository: the hub at {where} refused the download. Visit "
            f"{where}/{entry.repo_id} to ask for access, then log in (hf auth login, or set HF_TOKEN) "
            "and install again."
        )
    if isinstance(exc, RevisionNotFoundError):
        return DownloadError(f"{name}: the hub at {where} has no such revision ({exc}).")
    if isinstance(exc, RepositoryNotFoundError):
        return DownloadError(
            f"{name} was not found at {where}. Check the network, HF_ENDPOINT, and, for a private "
            "repository, that you are logged in."
        )
    if isinstance(exc, HfHubHTTPError):
        status = getattr(getattr(exc, "response", None), "status_code", "?")
        return DownloadError(f"{name}: the hub at {where} answered HTTP {status}. Try again later.")
    if isinstance(exc, (LocalEntryNotFoundError, OfflineModeIsEnabled)):
        return DownloadError(
            f"{name}: could not reach the hub at {where} and the files are not cached. Check the network "
            "(and HF_ENDPOINT / HF_HUB_OFFLINE); a new attempt keeps the files already downloaded."
        )
    if is_disk_full(exc):
        return DiskFullError(
            f"The disk filled up while downloading {name}: free some space and install again."
        )
    if type(exc).__module__.split(".")[0] in ("httpx", "httpx2", "httpcore"):
        return DownloadError(
            f"{name}: could not reach the hub at {where} ({exception_detail(exc)}). Check the network, "
            "HF_ENDPOINT and HF_HUB_OFFLINE, then install again; finished files are kept."
        )
    if isinstance(exc, OSError):
        return DownloadError(
            f"Downloading {name} from {where} failed: {exc}. Install again to resume; finished files are "
            "kept."
        )
    return None


class _Tracker:
    """Turns updates from snapshot_download's progress bars into events; raises on cancel."""

    def __init__(
        self,
        entry: CatalogEntry,
        plan: DownloadPlan,
        progress: ProgressCallback | None,
        cancel: threading.Event | None,
    ) -> None:
        self.entry, self.plan, self.progress, self.cancel = entry, plan, progress, cancel
        self.lock = threading.RLock()
        self.byte_bars: list[Any] = []
        self.file_bars: list[Any] = []
        self.last_event = 0.0
        self.last_files = -1

    def snapshot(self, *, finished: bool = False) -> DownloadProgress:
        fetched = max((bar.n for bar in self.byte_bars), default=0)
        files = max((bar.n for bar in self.file_bars), default=self.plan.files_cached)
        done = (
            self.plan.total_bytes
            if finished
            else min(self.plan.total_bytes, self.plan.cached_bytes + int(fetched))
        )
        return DownloadProgress(
            key=self.entry.key,
            repo_id=self.entry.repo_id,
            downloaded_bytes=done,
            total_bytes=self.plan.total_bytes,
            files_done=self.plan.files_total if finished else int(files),
            files_total=self.plan.files_total,
            finished=finished,
        )

    def check_cancel(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise DownloadCancelled(self.entry.key, self.entry.repo_id)

    def changed(self, bar: Any = None, n: float = 0) -> None:
        """Count ``n`` more units on ``bar`` (worker threads share the aggregate bars, so under the
        lock), emit an event now and then, and raise if the download was cancelled."""
        self.check_cancel()
        with self.lock:
            if bar is not None:
                bar.n += n
            if self.progress is None:
                return
            event = self.snapshot()
            now = time.monotonic()
            if event.files_done == self.last_files and now - self.last_event < _MIN_EVENT_INTERVAL_S:
                return
            self.last_event, self.last_files = now, event.files_done
            # Emitted under the lock so events arrive in order; callbacks must be quick.
            self.progress(event)

    def tqdm_class(self) -> type[base_tqdm]:
        tracker = self

        class _TrackedBar(base_tqdm):
            """A silent bar: snapshot_download's updates go to the tracker, nothing is printed."""

            def __init__(self, *args: Any, **kwargs: Any) -> None:
                kwargs.pop("name", None)
                kwargs["disable"] = True
                super().__init__(*args, **kwargs)
                with tracker.lock:
                    (tracker.byte_bars if kwargs.get("unit") == "B" else tracker.file_bars).append(self)

            def update(self, n: float | None = 1) -> bool | None:
                # A disabled tqdm does not count, so the tracker does; a negative n rolls back a restart.
                tracker.changed(self, n or 0)
                return None

        return _TrackedBar


def _silent_tqdm() -> type[base_tqdm]:
    class _Silent(base_tqdm):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.pop("name", None)
            kwargs["disable"] = True
            super().__init__(*args, **kwargs)

    return _Silent


def plan_download(
    entry: CatalogEntry,
    *,
    cache_dir: Path | str | None = None,
    endpoint: str | None = None,
    token: str | bool | None = None,
) -> DownloadPlan:
    """Ask the hub what a download of ``entry`` involves (a ``snapshot_download`` dry run).

    Raises:
        GatedModel, DownloadError: as for :func:`download_model`.
    """
    try:
        files = snapshot_download(
            entry.repo_id,
            cache_dir=str(hub_cache_dir(cache_dir)),
            endpoint=endpoint,
            token=token,
            dry_run=True,
            tqdm_class=_silent_tqdm(),
        )
    except Exception as exc:
        translated = _translate(exc, entry, endpoint)
        if translated is None:
            raise
        raise translated from exc
    sizes = [(info.file_size or 0, info.is_cached) for info in files]
    return DownloadPlan(
        key=entry.key,
        repo_id=entry.repo_id,
        commit_hash=files[0].commit_hash if files else None,
        total_bytes=sum(size for size, _ in sizes),
        cached_bytes=sum(size for size, cached in sizes if cached),
        files_total=len(sizes),
        files_cached=sum(1 for _, cached in sizes if cached),
    )


def download_model(
    entry: CatalogEntry,
    *,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
    cache_dir: Path | str | None = None,
    endpoint: str | None = None,
    token: str | bool | None = None,
    max_workers: int = 8,
) -> Path:
    """Fetch every file of ``entry.repo_id`` into the HF cache; return the snapshot folder.

    Files already cached are skipped, so calling it again after an interruption fetches only
    what is missing. The disk is checked first against the exact missing size.

    Args:
        entry: the catalog model.
        progress: called with byte and file counts as the download advances (and once finished).
        cancel: set it to abort; the call raises DownloadCancelled soon after (at the next chunk).
        cache_dir: the HF cache; huggingface_hub's default (``HF_HUB_CACHE``) when None.
        endpoint: the hub URL; ``HF_ENDPOINT`` (or huggingface.co) when None.
        token: passed to huggingface_hub (None: the saved login or ``HF_TOKEN``).
        max_workers: files downloaded in parallel.

    Raises:
        GatedModel: the repository is gated and this account has no access.
        DownloadError: the hub could not be reached or answered with an error.
        DiskFullError: the missing files do not fit, or the disk filled up.
        DownloadCancelled: ``cancel`` was set.
    """
    cache = hub_cache_dir(cache_dir)
    if cancel is not None and cancel.is_set():
        raise DownloadCancelled(entry.key, entry.repo_id)
    plan = plan_download(entry, cache_dir=cache, endpoint=endpoint, token=token)
    disk = check_disk_space(cache, plan.to_download_bytes, purpose=f"Downloading {entry.key}")
    if not disk.fits:
        raise DiskFullError(disk.message)
    tracker = _Tracker(entry, plan, progress, cancel)
    tracker.changed()
    try:
        folder = snapshot_download(
            entry.repo_id,
            cache_dir=str(cache),
            endpoint=endpoint,
            token=token,
            tqdm_class=tracker.tqdm_class(),
            max_workers=max_workers,
        )
    except OmniWebError:
        raise
    except Exception as exc:
        translated = _translate(exc, entry, endpoint)
        if translated is None:
            raise
        raise translated from exc
    if progress is not None:
        progress(tracker.snapshot(finished=True))
    return Path(folder)
