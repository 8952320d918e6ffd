"""Remove models from the HF cache: plan first (what goes, how much it frees), then execute.

The plan wraps huggingface_hub's own ``DeleteCacheStrategy`` (``HFCacheInfo.delete_revisions``),
which deletes refs and snapshot links before blobs so an interruption leaves no dangling link.
A repo folder the cache scan rejects (a download cancelled before its first file finished) is
removed as a whole folder. Executing first calls ``stop_server_hosting(key)`` for every model in
the plan, so a managed server never loses its weights while it runs.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from huggingface_hub import scan_cache_dir
from huggingface_hub.utils import DeleteCacheStrategy

from omni_web.backend.disk import format_bytes
from omni_web.catalog import CatalogEntry, get_entry
from omni_web.errors import ModelError
from omni_web.models.cache import CachedModel, cached_models, hub_cache_dir

__all__ = ["RemovalItem", "RemovalPlan", "StopServerHosting", "plan_removal"]

# Called with a catalog key before its files go; stops a managed server hosting that model.
StopServerHosting = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class RemovalItem:
    """One model the plan removes."""

    key: str
    repo_id: str
    label: str
    repo_path: Path
    size_bytes: int
    complete: bool

    @property
    def size_str(self) -> str:
        """``4.5 GB``."""
        return format_bytes(self.size_bytes)


@dataclass(frozen=True, slots=True)
class RemovalPlan:
    """What :meth:`execute` will delete; building it deletes nothing."""

    items: tuple[RemovalItem, ...]
    not_installed: tuple[str, ...]
    cache_dir: Path
    expected_freed_bytes: int
    strategy: DeleteCacheStrategy | None = field(default=None, repr=False)
    whole_folders: tuple[Path, ...] = ()

    @property
    def expected_freed_str(self) -> str:
        """``6.9 GB``."""
        return format_bytes(self.expected_freed_bytes)

    @property
    def keys(self) -> tuple[str, ...]:
        """The keys of the models that will be removed."""
        return tuple(item.key for item in self.items)

    @property
    def is_empty(self) -> bool:
        """True when nothing is cached for any of the requested keys."""
        return not self.items

    @property
    def summary(self) -> str:
        """``Remove 2 models (Qwen3-TTS 0.6B Base, ZONOS2), freeing 14.5 GB.``"""
        if not self.items:
            return "Nothing to remove."
        plural = "model" if len(self.items) == 1 else "models"
        labels = ", ".join(item.label for item in self.items)
        return f"Remove {len(self.items)} {plural} ({labels}), freeing {self.expected_freed_str}."

    def execute(self, *, stop_server_hosting: StopServerHosting | None = None) -> int:
        """Stop servers hosting the models (when given a way to), delete the files; return bytes freed.

        Raises:
            ModelError: a file could not be deleted (permissions); the message names it.
        """
        if stop_server_hosting is not None:
            for item in self.items:
                stop_server_hosting(item.key)
        try:
            if self.strategy is not None:
                self.strategy.execute()
            # Folders the scan rejected, and anything the strategy left (refs, tree listings), so
            # a removed model never looks partially cached.
            for folder in (*self.whole_folders, *(item.repo_path for item in self.items)):
                if folder.exists():
                    shutil.rmtree(folder)
        except OSError as exc:
            raise ModelError(
                f"Could not delete {exc.filename or 'a cached file'}: {exc.strerror or exc}. "
                "Check the cache folder's permissions and remove again."
            ) from exc
        return self.expected_freed_bytes


def _folder_size(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file() and not path.is_symlink())


def plan_removal(
    keys: Iterable[str],
    *,
    cache_dir: Path | str | None = None,
    lookup: Callable[[str], CatalogEntry] = get_entry,
) -> RemovalPlan:
    """Plan removing every cached revision of each model in ``keys`` (complete or partial).

    ``lookup`` finds a key's entry (key, repo_id, label): the catalog's by default; the QA
    speech-recognition models pass their own (omni_web/qa/asr_models.py).

    Raises:
        UnknownModel: a key is not in the catalog.
    """
    entries = [lookup(key) for key in dict.fromkeys(keys)]
    cache = hub_cache_dir(cache_dir)
    cached: dict[str, CachedModel] = {
        model.key: model for model in cached_models(cache_dir=cache, entries=entries)
    }
    items, missing = [], []
    for entry in entries:
        model = cached.get(entry.key)
        if model is None:
            missing.append(entry.key)
            continue
        items.append(RemovalItem(entry.key, entry.repo_id, entry.label, model.repo_path, 0, model.complete))
    if not items:
        return RemovalPlan((), tuple(missing), cache, 0)
    info = scan_cache_dir(cache)
    wanted = {item.repo_path.resolve() for item in items}
    revisions = [
        revision.commit_hash
        for repo in info.repos
        if repo.repo_path.resolve() in wanted
        for revision in repo.revisions
    ]
    strategy = info.delete_revisions(*revisions) if revisions else None
    scanned = {repo.repo_path.resolve(): repo.size_on_disk for repo in info.repos}
    whole = tuple(item.repo_path for item in items if item.repo_path.resolve() not in scanned)
    sized = tuple(
        RemovalItem(
            item.key,
            item.repo_id,
            item.label,
            item.repo_path,
            scanned.get(item.repo_path.resolve()) or _folder_size(item.repo_path),
            item.complete,
        )
        for item in items
    )
    freed = (strategy.expected_freed_size if strategy else 0) + sum(_folder_size(path) for path in whole)
    return RemovalPlan(sized, tuple(missing), cache, freed, strategy, whole)
