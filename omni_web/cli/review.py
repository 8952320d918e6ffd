"""``review`` and ``regenerate``: the flagged chunks of a book's QA report, and redoing one.

    python -m omni_web review OUTPUT_OR_JOB [--all] [--accept CHAPTER:CHUNK]
    python -m omni_web regenerate OUTPUT_OR_JOB --chapter N --chunk M [--text "..."]

``regenerate`` sends the chunk to the server again (a new take, or the edited text) and rebuilds
only that chapter's audio and the book files, mastered as the book was (it says so when the whole
book must be mastered again); the managed server is started for it when needed.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from omni_web.book import load_book
from omni_web.catalog import get_entry
from omni_web.cli.convert import render_request
from omni_web.errors import JobNotFound, ReviewError
from omni_web.jobs import JobStore
from omni_web.paths import DataPaths, data_root_from_env
from omni_web.pipeline import serving_for
from omni_web.pipeline.fix import plan_fix
from omni_web.pipeline.review import (
    ReviewTarget,
    accept_chunk,
    job_review_target,
    open_review,
    prepare_regenerate,
    review_rows,
)
from omni_web.qa import Verdict, marks_plain
from omni_web.services import build_server_manager
from omni_web.settings import load_settings

__all__ = ["register", "resolve_target"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``review`` and ``regenerate``."""
    review = subparsers.add_parser(
        "review", help="list the chunks QA flagged in a book",
        description="List the flagged chunks of a book's QA report (<Title>.qa.json), or accept one.",
    )
    review.add_argument("target", metavar="OUTPUT_OR_JOB", help="book folder, m4b, .qa.json or job id")
    review.add_argument("--all", action="store_true", help="list every chunk, not only the flagged ones")
    review.add_argument("--accept", metavar="CHAPTER:CHUNK", help="accept a flagged chunk as it is")
    review.set_defaults(handler=_review)
    regen = subparsers.add_parser(
        "regenerate",
        help="redo one chunk and rebuild its chapter and the book",
        description="Request one chunk again (optionally with edited text); rebuild only its chapter and the "
                    "book.",
    )
    regen.add_argument("target", metavar="OUTPUT_OR_JOB", help="book folder, m4b, .qa.json or job id")
    regen.add_argument(
        "--chapter", type=int, required=True, metavar="N", help="chapter number (as review lists it)"
    )
    regen.add_argument(
        "--chunk", type=int, required=True, metavar="M", help="chunk number within the chapter"
    )
    regen.add_argument("--text", metavar="TEXT", help="speak this instead (a misread name or number)")
    regen.add_argument("--api-url", metavar="URL", help="use this sgl-omni server instead of the managed one")
    regen.set_defaults(handler=_regenerate)


def resolve_target(target: str, paths: DataPaths) -> ReviewTarget:
    """A book folder, m4b or report path, else a job id of this data root."""
    path = Path(target).expanduser()
    if path.exists():
        return open_review(path)
    try:
        job = JobStore(paths.jobs_db).get(target)
    except JobNotFound:
        raise ReviewError(
            f"'{target}' is neither a book folder, an m4b, a .qa.json report nor a job id. "
            "Pass the book's output folder (it holds <Title>.qa.json)."
        ) from None
    return open_review(job_review_target(job.result, target))


def _place(spec: str) -> tuple[int, int]:
    try:
        chapter, chunk = (int(x) for x in spec.split(":", 1))
    except ValueError:
        raise ReviewError(f"--accept takes CHAPTER:CHUNK, e.g. 3:12, not '{spec}'.") from None
    return chapter, chunk


def _review(args: argparse.Namespace) -> int:
    paths = data_root_from_env().ensure()
    target = resolve_target(args.target, paths)
    if args.accept:
        chapter, chunk = _place(args.accept)
        accept_chunk(target, chapter, chunk)
        print(f"Accepted chunk {chunk} of chapter {chapter} as it is.")
    rows = review_rows(target, only_flagged=not args.all)
    report = target.report
    print(f"{target.title}: {report.count(Verdict.PASSED)} passed, {report.count(Verdict.RETAKEN)} retaken, "
          f"{len(review_rows(target))} flagged  ({target.report_path})")
    for drift in report.drift:  # how the voice and the reading wandered, chapter by chapter
        if drift.takes and drift.pace_median is not None:
            print(f"  chapter {drift.chapter}: voice {drift.similarity_text}, pace {drift.pace_text}, "
                  f"pitch {drift.pitch_text}, {drift.retaken} takes redone for voice or reading")
    if not rows:
        print("No chunk is waiting for review." if not args.all else "The report has no chunks.")
        return 0
    for row in rows:
        print(
            f"\nchapter {row.chapter} chunk {row.chunk} [{row.verdict.value}, {row.takes} takes] "
            f"{row.chapter_title}"
        )
        print(f"  text: {row.text}")
        marked = marks_plain(row.marks)
        if any(mark.kind for mark in row.marks):
            print(f"  marked: {marked}")
            print("          ([-not heard-], [=said twice=], [+heard, not in the text+])")
        if row.figures:
            print(f"  figures: {row.figures}")
        if row.reasons:
            print(f"  why: {row.reasons}")
        if row.notices:
            print(f"  check: {row.notices}")
        if row.transcript:
            print(f"  heard: {row.transcript}")
        print(f"  audio: {row.audio_path}")
    print(
        f'\nRedo one with: python -m omni_web regenerate "{args.target}" --chapter N --chunk M [--text "..."]'
    )
    return 0


def _regenerate(args: argparse.Namespace) -> int:
    paths = data_root_from_env().ensure()
    settings = load_settings(paths)
    target = resolve_target(args.target, paths)
    request = prepare_regenerate(target, args.chapter, args.chunk, text=args.text)
    fix = plan_fix(request, target.report.chapter_files, target.parts_dir, (args.chapter,), settings)
    entry = get_entry(request.model_key)
    book = load_book(request.book_path, options=settings.read_options(paths, footnotes=request.footnotes))
    manager = build_server_manager(paths, settings)
    was_ours = manager.owned_record() is not None
    serving = serving_for(manager, entry, api_url=args.api_url or request.api_url)
    endpoint = serving.endpoint
    started_here = endpoint.owned and not was_ours
    print(
        f"Regenerating chunk {args.chunk} of chapter {args.chapter} with {endpoint.model_label} at "
        f"{endpoint.base_url}. {fix.message}"
    )
    try:
        code = render_request(request, book, serving, paths, settings)
    finally:
        if started_here:
            print("Stopping the server started for this run.")
            manager.stop()
    return code
