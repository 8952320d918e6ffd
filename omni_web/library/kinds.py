"""What the library's jobs are: a conversion's params beside its request, fixes, and which jobs share a
server."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from omni_web.jobs import Job
from omni_web.paths import DataPaths
from omni_web.pipeline import ConvertRequest
from omni_web.pipeline.fix import FixParams, FixPlan
from omni_web.records import JsonRecord
from omni_web.text.store import lexicon_dir

__all__ = [
    "CATALOG_KEY",
    "CONVERT_JOB",
    "TEXT_FINGERPRINT_KEY",
    "ConvertExtras",
    "fingerprint_or",
    "fix_of",
    "fix_wait_reason",
    "is_fix",
    "same_server_work",
    "text_fingerprint",
]

CONVERT_JOB = "convert"
# Stored beside a conversion's request in the job's params (see Library.find_twin).
TEXT_FINGERPRINT_KEY = "text_fingerprint"
# A library's metadata for the book (authors, series, description), kept beside the request.
CATALOG_KEY = "catalog_metadata"


@dataclasses.dataclass(frozen=True, slots=True)
class ConvertExtras(JsonRecord):
    """What a conversion job's params hold beside its request (the keys above; None: not stored)."""

    text_fingerprint: str | None = None
    catalog_metadata: Mapping[str, Any] | None = None


def text_fingerprint(paths: DataPaths) -> str:
    """Changes whenever a pronunciation lexicon changes (what is spoken, not what is asked)."""
    root = lexicon_dir(paths)
    files = sorted(root.rglob("*")) if root.is_dir() else []
    facts = [(str(p.relative_to(root)), p.stat().st_mtime_ns, p.stat().st_size) for p in files if p.is_file()]
    return hashlib.sha256(repr(facts).encode()).hexdigest()[:16]


def fingerprint_or(job: Job, default: str) -> str:
    """The lexicon fingerprint the job was queued with; ``default`` for a job stored without one."""
    stored = ConvertExtras.from_dict(job.params).text_fingerprint
    return default if stored is None else stored


def same_server_work(running: Job, following: Job) -> bool:
    """Whether ``following`` may start while ``running`` finishes: both convert on the same server
    with the same model, so starting it changes nothing for the running job's last requests."""
    if running.kind != CONVERT_JOB or following.kind != CONVERT_JOB:
        return False
    mine, theirs = ConvertRequest.read(running.params), ConvertRequest.read(following.params)
    return (mine.model_key, mine.api_url) == (theirs.model_key, theirs.api_url)


def fix_of(job: Job) -> FixPlan | None:
    """The fix plan a job carries, or None for an ordinary job."""
    return FixParams.from_dict(job.params).fix


def is_fix(job: Job) -> bool:
    """True for a fix: a few chunks to redo, which may start beside a long job of its server."""
    return fix_of(job) is not None


def fix_wait_reason(
    job: Job,
    running: Sequence[Job],
    *,
    queue_paused: bool,
    shares_server: Callable[[Job, Job], bool] = same_server_work,
) -> str:
    """Why a queued fix has not started (empty when it is about to): a pause, or a running job
    on another server or model, whose end it waits for (it runs before the books in line)."""
    if queue_paused:
        return "The queue is paused: resume it on the Queue tab and this fix runs first."
    if job.paused:
        return "This fix is paused: resume it and it runs first."
    others = [other for other in running if not shares_server(other, job)]
    if not others:
        return ""
    titles = ", ".join(f"'{other.title}'" for other in others)
    return (
        f"It runs next, before the books waiting in line, once {titles} is done: that job uses another "
        "model or server, and only a job on the same server and model can share its batch."
    )
