"""Which catalog models are in the Hugging Face cache, read from the disk every time.

The app keeps no list of installed models: the standard HF cache (``HF_HUB_CACHE``, by default
``~/.cache/huggingface/hub``) is the truth, shared with ``hf download`` and with the server. A
model counts as installed when one cached revision holds every file of that revision's tree
listing (``snapshot_download`` stores the listing under ``trees/<commit>.json`` before it fetches
anything); a revision cached without a listing (an older hub client) counts when it has files
and no download is left half-written. Anything less is reported as partial, so the UI can offer
to finish or remove it.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from huggingface_hub import constants as hf_constants
from huggingface_hub import scan_cache_dir
from huggingface_hub.utils import CachedRepoInfo, CachedRevisionInfo

from omni_web.backend.disk import format_bytes
from omni_web.catalog import CATALOG, CatalogEntry

__all__ = [
    "CachedModel",
    "cached_models",
    "hub_cache_dir",
    "installed_keys",
    "installed_models",
]


def hub_cache_dir(cache_dir: Path | str | None = None) -> Path:
    """``cache_dir`` if given, else the HF cache huggingface_hub uses (``HF_HUB_CACHE``/``HF_HOME``)."""
    return Path(cache_dir if cache_dir is not None else hf_constants.HF_HUB_CACHE).expanduser()


@dataclass(frozen=True, slots=True)
class CachedModel:
    """A catalog model with something in the HF cache."""

    key: str
    repo_id: str
    label: str
    repo_path: Path
    size_on_disk_bytes: int
    complete: bool
    revisions: tuple[str, ...]  # cached commit hashes
    snapshot_path: Path | None  # the complete snapshot (None while partial)
    last_modified: float
    detail: str = ""  # why it is partial

    @property
    def size_str(self) -> str:
        """``4.5 GB``."""
        return format_bytes(self.size_on_disk_bytes)

    @property
    def last_modified_str(self) -> str:
        """Local date and time of the newest cached file."""
        return datetime.datetime.fromtimestamp(self.last_modified).strftime("%Y-%m-%d %H:%M")

    @property
    def status_str(self) -> str:
        """``installed`` or ``partial``."""
        return "installed" if self.complete else "partial"


def _cached_tree(repo: CachedRepoInfo, commit: str, cache_dir: Path) -> set[str] | None:
    """The file paths of the revision's tree listing, if the cache holds one."""
    try:
        from huggingface_hub import get_cached_repo_tree
        from huggingface_hub.errors import CachedRepoTreeNotFoundError
    except ImportError:  # hub clients before the tree cache existed
        return None
    try:
        return {
            item.path for item in get_cached_repo_tree(repo.repo_id, revision=commit, cache_dir=cache_dir)
        }
    except (CachedRepoTreeNotFoundError, OSError, ValueError):
        return None


def _has_incomplete_blobs(repo_path: Path) -> bool:
    return any((repo_path / "blobs").glob("*.incomplete"))


def _incomplete_bytes(repo_path: Path) -> int:
    return sum(path.stat().st_size for path in (repo_path / "blobs").glob("*.incomplete") if path.is_file())


def _revision_complete(
    repo: CachedRepoInfo, revision: CachedRevisionInfo, cache_dir: Path
) -> tuple[bool, str]:
    expected = _cached_tree(repo, revision.commit_hash, cache_dir)
    present = {file.file_path.relative_to(revision.snapshot_path).as_posix() for file in revision.files}
    if expected is not None:
        missing = expected - present
        if missing:
            return False, f"{len(missing)} of {len(expected)} files not downloaded yet"
        return True, ""
    if not present:
        return False, "no files downloaded yet"
    if _has_incomplete_blobs(repo.repo_path):
        return False, "a file download did not finish"
    return True, ""


def _from_scanned(entry: CatalogEntry, repo: CachedRepoInfo, cache_dir: Path) -> CachedModel:
    complete_revisions: list[CachedRevisionInfo] = []
    details = []
    for revision in repo.revisions:
        ok, why = _revision_complete(repo, revision, cache_dir)
        if ok:
            complete_revisions.append(revision)
        else:
            details.append(why)
    # Prefer the revision the default branch points at.
    complete_revisions.sort(key=lambda rev: ("main" not in rev.refs, -rev.last_modified))
    chosen = complete_revisions[0] if complete_revisions else None
    return CachedModel(
        key=entry.key,
        repo_id=entry.repo_id,
        label=entry.label,
        repo_path=repo.repo_path,
        size_on_disk_bytes=repo.size_on_disk + _incomplete_bytes(repo.repo_path),
        complete=chosen is not None,
        revisions=tuple(sorted(rev.commit_hash for rev in repo.revisions)),
        snapshot_path=chosen.snapshot_path if chosen else None,
        last_modified=repo.last_modified,
        detail="" if chosen else "; ".join(details) or "download did not finish",
    )


def _from_unscannable(entry: CatalogEntry, repo_path: Path) -> CachedModel | None:
    """A repo folder ``scan_cache_dir`` rejected (a download cancelled before its first file)."""
    files = [path for path in repo_path.rglob("*") if path.is_file() and not path.is_symlink()]
    blob_bytes = sum(path.stat().st_size for path in files if path.parent.name == "blobs")
    if blob_bytes == 0:
        # Only refs or a tree listing (a dry run writes those): nothing worth reporting.
        return None
    snapshots = repo_path / "snapshots"
    revisions = tuple(sorted(p.name for p in snapshots.iterdir())) if snapshots.is_dir() else ()
    return CachedModel(
        key=entry.key,
        repo_id=entry.repo_id,
        label=entry.label,
        repo_path=repo_path,
        size_on_disk_bytes=sum(path.stat().st_size for path in files),
        complete=False,
        revisions=revisions,
        snapshot_path=None,
        last_modified=max(path.stat().st_mtime for path in files),
        detail="download did not finish",
    )


def _repo_folders(cache_dir: Path) -> dict[str, Path]:
    """Model repo folders by lower-cased repo id (``models--Org--Name`` → ``org/name``)."""
    folders = {}
    for path in cache_dir.iterdir():
        if path.is_dir() and path.name.startswith("models--"):
            folders[path.name[len("models--") :].replace("--", "/").lower()] = path
    return folders


def cached_models(
    *, cache_dir: Path | str | None = None, entries: Iterable[CatalogEntry] = CATALOG
) -> list[CachedModel]:
    """Every catalog model with anything in the cache, complete or partial, in catalog order."""
    cache = hub_cache_dir(cache_dir)
    if not cache.is_dir():
        return []
    info = scan_cache_dir(cache)
    scanned = {repo.repo_id.lower(): repo for repo in info.repos if repo.repo_type == "model"}
    folders = _repo_folders(cache)
    found = []
    for entry in entries:
        wanted = entry.repo_id.lower()
        if wanted in scanned:
            found.append(_from_scanned(entry, scanned[wanted], cache))
        elif wanted in folders:
            model = _from_unscannable(entry, folders[wanted])
            if model is not None:
                found.append(model)
    return found


def installed_models(
    *, cache_dir: Path | str | None = None, entries: Iterable[CatalogEntry] = CATALOG
) -> list[CachedModel]:
    """The catalog models whose weights are completely in the cache."""
    return [model for model in cached_models(cache_dir=cache_dir, entries=entries) if model.complete]


def installed_keys(*, cache_dir: Path | str | None = None) -> set[str]:
    """Catalog keys of the completely cached models."""
    return {model.key for model in installed_models(cache_dir=cache_dir)}
