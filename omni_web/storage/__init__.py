"""Storage: what the data root and the output folder hold, and pruning what finished books no
longer need::

    report = storage_report(paths, settings)          # sizes by kind and by book
    plan = prune_plan(paths, settings)                # nothing removed yet
    print(plan.summary())                             # "Pruning frees 4.4 GB: ..."
    result = plan.execute()                           # jobs read again; busy books kept

The UI's Settings tab and ``python -m omni_web storage`` are thin over these two calls.
"""

from __future__ import annotations

from pathlib import Path

from omni_web.jobs import JobStore
from omni_web.paths import DataPaths
from omni_web.pipeline import ConvertRequest
from omni_web.settings import Settings
from omni_web.storage.measure import BookUsage, KindUsage, StorageReport, measure
from omni_web.storage.prune import PrunePlan, PruneResult, plan_prune
from omni_web.storage.survey import Survey, survey

__all__ = [
    "BookUsage",
    "KindUsage",
    "PrunePlan",
    "PruneResult",
    "StorageReport",
    "prune_plan",
    "storage_report",
    "take_survey",
]


def _parts_roots(paths: DataPaths, settings: Settings, store: JobStore) -> list[Path]:
    """``.parts`` of the output folder and of every other folder a job wrote to."""
    roots = {settings.output_path(paths).expanduser().resolve()}
    for job in store.list(limit=1_000_000):
        own = ConvertRequest.read(job.params).output_dir
        if own:
            roots.add(own.expanduser().resolve())
    return [root / ".parts" for root in sorted(roots)]


def take_survey(paths: DataPaths, settings: Settings) -> Survey:
    """The jobs and the book work folders, read now."""
    store = JobStore(paths.jobs_db)
    return survey(store, _parts_roots(paths, settings, store))


def storage_report(paths: DataPaths, settings: Settings) -> StorageReport:
    """The data root and the output folder measured by kind and by book."""
    return measure(paths, settings.output_path(paths).expanduser().resolve(), take_survey(paths, settings))


def prune_plan(paths: DataPaths, settings: Settings) -> PrunePlan:
    """What pruning would remove now; ``.execute()`` does it (see :mod:`omni_web.storage.prune`)."""
    return plan_prune(take_survey(paths, settings), chunk_cache=paths.chunk_cache_dir,
                      converted_dir=paths.state_dir / "converted",
                      resurvey=lambda: take_survey(paths, settings))
