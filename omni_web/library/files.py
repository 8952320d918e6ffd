"""The files a finished job reports, restricted to its output folder, with names relative to it
(what the API serves and what notifications link to)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from omni_web.jobs import Job
from omni_web.pipeline import ConvertProgress, ConvertRequest, ConvertResult
from omni_web.pipeline.outputs import job_outputs

__all__ = ["JobFile", "file_kind", "job_files", "reported_files"]


@dataclass(frozen=True, slots=True)
class JobFile:
    """One file of a job: where it is, its name under the output folder, and what it is."""

    path: Path
    rel: str
    kind: str


def file_kind(path: Path, book: str | None) -> str:
    """book (the m4b), chapter, mp3, readalong, subtitles, report or other."""
    if book and path == Path(book).resolve():
        return "book"
    if path.name.endswith((".qa.json", ".levels.json")):
        return "report"
    return {
        ".m4a": "chapter",
        ".mp3": "mp3",
        ".epub": "readalong",
        ".vtt": "subtitles",
        ".srt": "subtitles",
    }.get(path.suffix.lower(), "other")


def reported_files(job: Job) -> list[Path]:
    """Every file the job's result and progress report (see :func:`omni_web.pipeline.outputs.job_outputs`)."""
    return job_outputs(ConvertResult.from_dict(job.result), ConvertProgress.from_dict(job.progress))


def job_files(job: Job, default_output_root: Path) -> list[JobFile]:
    """Every existing file the job reports under its output folder (nothing outside it)."""
    root = (ConvertRequest.read(job.params).output_dir or default_output_root).resolve()
    book = ConvertResult.from_dict(job.result).m4b
    found = []
    for path in reported_files(job):
        full = path.resolve()
        if full.is_file() and full.is_relative_to(root):
            found.append(JobFile(full, full.relative_to(root).as_posix(), file_kind(full, book)))
    return found
