"""``python -m omni_web convert BOOK.epub --model KEY ...``: one book to an audiobook.

Without ``--api-url`` the managed server for the model is started, used and stopped again; a server
that already hosts the model (ours from an earlier run, or one started by hand) is used and left
running. A killed run started again renders only the chunks that are missing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from tqdm import tqdm

from omni_web.book import Book, load_book
from omni_web.catalog import CatalogEntry, get_entry, keys
from omni_web.cli.cast import add_cast_arguments, cast_from_args
from omni_web.cli.endpoint import add_endpoint_options, apply_endpoint_options
from omni_web.deliver.abs_config import load_abs_config
from omni_web.deliver.abs_delivery import deliver_after_job, delivery_text
from omni_web.errors import BookNotFound, JobCancelled, OmniWebError
from omni_web.jobs import JobStore
from omni_web.library import Library
from omni_web.master import PRESET_NAMES, summary_lines
from omni_web.paths import DataPaths, data_root_from_env
from omni_web.pipeline import (
    ConvertProgress,
    ConvertRequest,
    chunk_size_conflict,
    convert_served,
    parse_chapter_spec,
    serving_for,
)
from omni_web.qa import Verdict, read_report
from omni_web.server.serving import Serving
from omni_web.services import build_server_manager
from omni_web.settings import load_settings

__all__ = ["ask_higgs_window", "print_qa_summary", "register", "render_request", "throughput_line"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``convert``."""
    parser = subparsers.add_parser(
        "convert",
        help="turn a book (EPUB, PDF, DOCX, ...) into an m4b (or MP3 chapters)",
        description="Turn a book (EPUB, PDF, TXT, Markdown, HTML, FB2, DOCX, ODT, MOBI/AZW3) into an "
                    "audiobook with one model of the catalog.",
    )
    parser.add_argument("book", type=Path, metavar="BOOK")
    parser.add_argument(
        "--model", required=True, choices=keys(), metavar="KEY", help="catalog key (models list)"
    )
    voice = parser.add_mutually_exclusive_group()
    voice.add_argument(
        "--voice", metavar="NAME", help="built-in speaker, preset, library voice or uploaded voice"
    )
    voice.add_argument("--clone", metavar="CLIP", help="reference clip: a file, or a library voice name")
    voice.add_argument("--instructions", metavar="TEXT", help="voice design description (VoiceDesign)")
    parser.add_argument(
        "--transcription", metavar="TEXT", help="what the --clone clip says (else transcribed)"
    )
    add_cast_arguments(parser)
    parser.add_argument(
        "--footnotes",
        choices=("skip", "end-of-paragraph"),
        help="footnotes inside chapters: not read, or read after their paragraph (default: setting, skip)",
    )
    parser.add_argument(
        "--chunk-size", type=int, metavar="N", help="words per request (default: setting, 120)"
    )
    parser.add_argument("--chapters", metavar="SPEC", help="e.g. 1-3,5 (default: all but front/back matter)")
    parser.add_argument("--format", choices=("m4b", "mp3"), help="output format (default: setting, m4b)")
    parser.add_argument("--mp3-chapters", action="store_true", help="also write per-chapter MP3s")
    parser.add_argument(
        "--readalong",
        action="store_true",
        help="also write <Title>.readalong.epub (EPUB 3 Media Overlays) and VTT/SRT subtitles",
    )
    parser.add_argument(
        "--loudness",
        choices=PRESET_NAMES,
        type=str.lower,
        help="mastering preset (default: setting, audiobook = -20 LUFS, -3 dBTP; "
        "acx also writes the ACX MP3 folder)",
    )
    parser.add_argument(
        "--concurrency", type=int, metavar="N", help="requests in flight (default: the model's)"
    )
    parser.add_argument("--language", metavar="LANG", help="e.g. English (default: the model decides)")
    parser.add_argument("--out", type=Path, metavar="DIR", help="output folder (default: setting)")
    parser.add_argument(
        "--qa", choices=("off", "basic", "asr"), help="audio QA of every chunk (default: setting, basic)"
    )
    parser.add_argument(
        "--qa-model",
        metavar="SIZE_OR_DIR",
        help="recogniser for --qa asr: tiny.en, base.en, small.en, distil-large-v3, large-v3-turbo "
        "(download in the Models tab) or a model folder; GPU when it fits beside the server",
    )
    parser.add_argument(
        "--qa-takes", type=int, metavar="N", help="takes per chunk before it is flagged (default: 3)"
    )
    add_endpoint_options(parser)
    parser.set_defaults(handler=_convert)


def ask_higgs_window(
    entry: CatalogEntry, chunk_words: int, *, stdin: TextIO, stdout: TextIO
) -> tuple[int, bool]:
    """Resolve a chunk size above the model's per-request cap: ``[S/t/c]`` on a console.

    S (the default) sets the chunk size to the cap for this run, t keeps it (audio may cut off),
    c cancels. A closed or non-interactive stdin clamps, so unattended runs never truncate.
    Returns the chunk size and whether it was kept above the cap.
    """
    cap = chunk_size_conflict(entry, chunk_words)
    if cap is None:
        return chunk_words, False
    print(
        f"{entry.label} voices at most ~{cap} words per request (its 4096-token window); the chunk "
        f"size is {chunk_words}, so audio may cut off mid-chunk.",
        file=stdout,
    )
    if not stdin.isatty():
        print(f"No console to ask: using a chunk size of {cap} for this run.", file=stdout)
        return cap, False
    stdout.write(f"[S]et chunk to {cap} / keep [t]he size / [c]ancel? [S/t/c] ")
    stdout.flush()
    answer = stdin.readline().strip().lower()
    if answer.startswith("c"):
        raise JobCancelled("Cancelled before rendering anything.")
    if answer.startswith("t"):
        return chunk_words, True
    return cap, False


def _convert(args: argparse.Namespace) -> int:
    paths = data_root_from_env().ensure()
    settings = apply_endpoint_options(load_settings(paths), args)
    entry = get_entry(args.model)
    chunk_words, keep_over_cap = ask_higgs_window(
        entry, args.chunk_size or settings.chunk_size_words, stdin=sys.stdin, stdout=sys.stdout
    )
    book_path = args.book.expanduser().resolve()
    if not book_path.is_file():
        raise BookNotFound(book_path)
    # A bad book is refused before any server starts.
    book = load_book(book_path, options=settings.read_options(paths, footnotes=args.footnotes))
    narrator, cast = cast_from_args(args, entry, book, paths, settings)
    request = ConvertRequest(
        book_path=book_path,
        model_key=entry.key,
        voice=narrator,
        cast=cast,
        chapters=parse_chapter_spec(args.chapters) if args.chapters else None,
        chunk_words=chunk_words,
        keep_over_cap=keep_over_cap,
        concurrency=args.concurrency,
        language=args.language,
        output_format=args.format,
        also_mp3_chapters=True if args.mp3_chapters else None,
        readalong=args.readalong,
        output_dir=args.out.expanduser().resolve() if args.out else None,
        api_url=args.api_url,
        qa_level=args.qa,
        qa_model=args.qa_model,
        qa_takes=args.qa_takes,
        loudness=args.loudness,
        footnotes=args.footnotes,
    )
    request = Library(paths, JobStore(paths.jobs_db)).claim_run_name(request, book, entry)
    manager = build_server_manager(paths, settings)
    was_ours = manager.owned_record() is not None
    serving = serving_for(manager, entry, api_url=args.api_url, on_log=_print_boot_line)
    endpoint = serving.endpoint
    started_here = endpoint.owned and not was_ours
    print(
        f"Using {endpoint.model_label} at {endpoint.base_url}"
        + (" (started for this run)" if started_here else "")
    )
    try:
        return render_request(request, book, serving, paths, settings)
    finally:
        if started_here:
            print("Stopping the server started for this run.")
            manager.stop()


def render_request(request: ConvertRequest, book: Book, serving: Serving, paths: DataPaths, settings) -> int:
    bar = tqdm(total=0, unit="chunk", dynamic_ncols=True, disable=None)
    chapter_lines: set[int] = set()

    said = [""]
    last: list[ConvertProgress] = []

    def progress(doc: ConvertProgress) -> None:
        if doc.chunks_total and bar.total != doc.chunks_total:
            bar.total = doc.chunks_total
        bar.n = doc.chunks_done + doc.chunks_failed  # a chunk given up is settled; the postfix says so
        eta, rtf = doc.eta_s, doc.realtime_factor
        bar.set_postfix_str(
            f"audio {doc.audio_s / 60:.1f} min"
            + (f", {rtf:.1f} s audio per s" if rtf else "")
            + (f", {doc.in_flight_line}" if doc.in_flight_line else "")
            + (f", {doc.gpu_line}" if doc.gpu_line else "")
            + (f", ETA {eta / 60:.1f} min" if eta else "")
            + (f", {doc.chunks_failed} failed" if doc.chunks_failed else "")
            + (f", {doc.qa.line}" if doc.qa is not None else ""),
            refresh=True,
        )
        if doc.server_status and doc.server_status != said[0]:
            bar.write(doc.server_status)  # the server's status line (see omni_web.server.serving)
        said[0] = doc.server_status
        last[:1] = [doc]
        for chapter in doc.ready_chapters():
            if chapter.number not in chapter_lines:
                chapter_lines.add(chapter.number)
                bar.write(f"chapter {chapter.number} ready: {chapter.title} -> {chapter.audio_path}")

    try:
        result = convert_served(
            request, serving, paths=paths, settings=settings, progress=progress, book=book
        )
    except OmniWebError:
        bar.close()
        raise
    bar.close()
    print(
        f"Done: {len(result.chapters)} chapters, {result.duration_s / 60:.1f} minutes of audio "
        f"({result.chunks_total - result.chunks_cached} chunks rendered, {result.chunks_cached} reused)."
    )
    if last and (figures := throughput_line(last[0])):
        print(figures)
    for missing in result.missing_chunks:
        print(f"Not in the book (the server crashed on it every time; silence instead): {missing.line}")
    if result.m4b:
        print(f"Audiobook: {result.m4b}")
    if result.mp3_dir:
        print(f"MP3 chapters: {result.mp3_dir}")
    print_qa_summary(result.qa_report)
    if result.readalong_epub:
        print(f"Read-along EPUB: {result.readalong_epub} (subtitles beside the audio)")
    if result.acx_dir:
        print(f"ACX files: {result.acx_dir}")
    if result.levels:
        print("\n".join(summary_lines(result.levels)))
        print(f"Levels report: {result.levels_path}")
    # A step after the book (omni_web/deliver): a failure is said, the book and the exit code stand.
    delivered = deliver_after_job(
        paths,
        load_abs_config(paths),
        "",
        result.output_dir,
        output_root=request.output_dir or settings.output_path(paths),
    )
    if delivered is not None:
        print(delivery_text(delivered).replace("**", ""))
    return 0


def print_qa_summary(report: Path | None) -> None:
    """The QA line after a run: counts, the report, and how to review flagged chunks."""
    if report is None or not report.is_file():
        return
    document = read_report(report)
    flagged = document.count(Verdict.FLAGGED)
    print(f"QA: {document.count(Verdict.PASSED)} passed, {document.count(Verdict.RETAKEN)} retaken, "
          f"{flagged} flagged. Report: {report}")
    if flagged:
        print(f"Review the flagged chunks with: python -m omni_web review \"{report}\"")


def _print_boot_line(line: str) -> None:
    print(f"  server: {line.rstrip()}", file=sys.stderr)


def throughput_line(doc: ConvertProgress) -> str:
    """``Throughput: 62.1 s of audio per wall second, up to 72 requests in flight (server full at ~64); GPU ...``."""
    parts = [f"{doc.realtime_factor:.1f} s of audio per wall second"] if doc.realtime_factor else []
    if doc.peak_in_flight:
        full = f" (server full at ~{doc.server_full_at})" if doc.server_full_at else ""
        parts.append(f"up to {doc.peak_in_flight} requests in flight{full}")
    if doc.refusals:
        parts.append(f"{doc.refusals} refused by the server's full queue")
    if doc.gpu_line:
        parts.append(
            doc.gpu_line
            + (f", {doc.audio_per_gpu_s:.0f} s of audio per GPU-second" if doc.audio_per_gpu_s else "")
        )
    return "Throughput: " + "; ".join(parts) if parts else ""
