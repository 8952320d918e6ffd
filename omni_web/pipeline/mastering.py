"""The conversion's fast finish: chapters mastered and encoded while the book renders, then joined.

:class:`ChapterFinisher` sits between the renderer and :mod:`omni_web.master`: each finished chunk
goes to the book's :class:`~omni_web.master.book.BookMaster`, each finished chapter is measured
in the background for the delivery report and, for an m4b, piped into the book's live join
(:class:`~omni_web.assemble.live_join.LiveJoin`), so :func:`finish_book` only has to let the join
write the last chapter and its index, tag the MP3s, write the ACX folder and the
``<Title>.levels.json`` report. Should the live join fail, the m4b is joined again from the
chapter files by stream copy, as before.
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from omni_web.assemble import (
    AudiobookTags,
    AudioFormat,
    ChapterAudio,
    export_mp3_chapters,
)
from omni_web.assemble.join import EncodedChapter, join_m4b
from omni_web.assemble.live_join import LiveJoin, LiveJoinFailed
from omni_web.catalog import get_entry
from omni_web.deliver.layout import BookPlace
from omni_web.errors import FfmpegError
from omni_web.files import write_atomic
from omni_web.master import get_preset
from omni_web.master.acx import (
    closing_credits_text,
    export_acx,
    opening_credits_text,
    probe_acx_rules,
    remove_stale,
)
from omni_web.master.book import BookMaster, ChapterReadySink, ChapterStateSink
from omni_web.master.levels import FileLevels, measure_file
from omni_web.master.presets import ACX_MP3_KBPS, LoudnessPreset
from omni_web.master.records import (
    ChapterSpec,
    MasteredChapter,
    MasterOptions,
    chunks_stamp,
    has_record,
    load_mastered,
)
from omni_web.master.report import REPORT_SUFFIX, ChapterReport, LevelsReport, judge, write_levels_report
from omni_web.master.versions import remove_superseded, write_manifest
from omni_web.pipeline.plan import ConversionPlan
from omni_web.pipeline.request import ConvertRequest
from omni_web.render import RenderItem, chunk_key, shaping_fingerprint
from omni_web.settings import Settings

__all__ = [
    "BookFiles",
    "ChapterFinisher",
    "chapter_specs",
    "credit_specs",
    "finish_book",
    "finished_chapters",
    "master_options",
    "request_master_options",
]

log = logging.getLogger(__name__)

OPENING_CREDITS, CLOSING_CREDITS = 0, -1


def master_options(
    preset: LoudnessPreset,
    fmt: AudioFormat,
    *,
    aac_kbps: int,
    mp3: bool,
    pause_between_chapters_ms: int,
) -> MasterOptions:
    """The book's mastering options: ACX always writes 192 kbit/s MP3s and keeps lossless masters."""
    mp3_kbps = ACX_MP3_KBPS if preset.acx else (96 if mp3 else None)
    return MasterOptions(
        preset=preset,
        fmt=fmt,
        aac_kbps=aac_kbps,
        mp3_kbps=mp3_kbps,
        tail_ms=preset.tail_for(pause_between_chapters_ms),
        lossless=preset.acx,
    )


def request_master_options(request: ConvertRequest, settings: Settings) -> MasterOptions:
    """The mastering options a run of ``request`` uses: its kept mastering settings, else ``settings``."""
    settings = request.mastering_settings(settings)
    entry = get_entry(request.model_key)
    output_format = request.output_format or settings.output_format
    also_mp3 = settings.also_mp3_chapters if request.also_mp3_chapters is None else request.also_mp3_chapters
    return master_options(
        get_preset(request.loudness or settings.loudness),
        AudioFormat(entry.sample_rate_hz, entry.channels),
        aac_kbps=settings.aac_bitrate_kbps,
        mp3=output_format == "mp3" or also_mp3,
        pause_between_chapters_ms=settings.pause_between_chapters_ms,
    )


def chapter_specs(plan: ConversionPlan) -> list[ChapterSpec]:
    """One spec per selected chapter, named like the chapter's old lossless file."""
    return [
        ChapterSpec(
            number=work.number,
            title=work.chapter.title,
            keys=tuple(item.key for item in work.items),
            pauses_ms=work.pauses_ms,
            stem=Path(work.file_name).stem,
        )
        for work in plan.chapters
    ]


def credit_specs(plan: ConversionPlan) -> tuple[list[RenderItem], list[ChapterSpec]]:
    """ACX's opening and closing credits: the chunks to render and the two files to master."""
    items, specs = [], []
    last = max(work.number for work in plan.chapters) + 1
    for number, title, text in (
        (OPENING_CREDITS, "Opening Credits", opening_credits_text(plan.tags)),
        (CLOSING_CREDITS, "Closing Credits", closing_credits_text(plan.tags)),
    ):
        key = chunk_key(text, plan.fingerprint)
        items.append(
            RenderItem(
                key=key,
                text=text,
                chapter_index=-1,
                chapter_number=last if number else 0,
                chapter_title=title,
                chunk_number=1,
            )
        )
        stem = (
            f"credits-{'opening' if number == OPENING_CREDITS else 'closing'}-"
            + shaping_fingerprint({"k": key})[:12]
        )
        specs.append(
            ChapterSpec(number=number, title=title, keys=(key,), pauses_ms=(0,), stem=stem, in_book=False)
        )
    return items, specs


class ChapterFinisher:
    """Masters every chapter as its chunks land and measures each one once it is encoded.

    With ``m4b_tags``, the m4b is joined live as chapters finish (``cover`` is its picture).
    """

    def __init__(
        self,
        specs: list[ChapterSpec],
        folder: Path,
        options: MasterOptions,
        *,
        on_state: ChapterStateSink | None = None,
        on_ready: ChapterReadySink | None = None,
        remaster: Iterable[int] = (),
        cached_chunk: Callable[[str], Path | None] | None = None,
        m4b_tags: AudiobookTags | None = None,
        cover: Path | None = None,
    ) -> None:
        """``cached_chunk(key)`` is a chunk's file if it is already rendered (else None): with it,
        chapters an earlier run finished are known at once (:attr:`finished_at_start`, the caller's
        to show). ``on_state`` hears each chapter's mastering and encoding, ``on_ready`` each record
        made once (a chapter known at the start is not told again when the master confirms it)."""
        self.specs = specs
        self.options = options
        self.folder = folder
        self.started_at = time.time()  # versions written before it may be superseded by this run
        self._on_ready = on_ready
        self._measure_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="omni-measure")
        self._measured: dict[int, Future[tuple[FileLevels | None, FileLevels | None]]] = {}
        self._lock = threading.Lock()
        remaster = frozenset(remaster)
        # A resumed job shows these ready from its first progress; the master below confirms them
        # again as the cached chunks feed it, and that same record is not reported twice.
        self.finished_at_start: tuple[MasteredChapter, ...] = tuple(
            finished_chapters(specs, folder, options, cached_chunk, remaster=remaster) if cached_chunk else ()
        )
        self._reported = {record.number: record for record in self.finished_at_start}
        for record in self.finished_at_start:
            self._measured[record.number] = self._measure_pool.submit(self._measure, record)
        self._live = _start_live_join(specs, folder, m4b_tags, cover) if m4b_tags is not None else None
        if self._live is not None:
            for record in self.finished_at_start:
                if record.in_book:
                    self._live.add(_encoded(record))
        self._master = BookMaster(
            specs, folder, options, on_state=on_state, on_ready=self._ready, remaster=remaster
        )

    def chunk_done(self, item: RenderItem, path: Path) -> None:
        """Called for every finished chunk (from the render loop's thread)."""
        self._master.chunk_done(item.key, path)

    def _ready(self, record: MasteredChapter) -> None:
        with self._lock:
            if self._reported.pop(record.number, None) == record:
                return  # known at the start, unchanged
            self._measured[record.number] = self._measure_pool.submit(self._measure, record)
            live = self._live
        if live is not None and record.in_book:
            live.add(_encoded(record))
        if self._on_ready is not None:
            self._on_ready(record)

    def _measure(self, record: MasteredChapter) -> tuple[FileLevels | None, FileLevels | None]:
        # The delivered files, as a checker reads them: the AAC (m4b) and, when written, the MP3.
        m4a = measured_levels(record.m4a)
        mp3 = measured_levels(record.mp3) if record.mp3 is not None else None
        return m4a, mp3

    def records(self) -> list[MasteredChapter]:
        """Every spec's record, in order (waits); re-raises a mastering error."""
        return self._master.results()

    def levels(self, number: int) -> tuple[FileLevels | None, FileLevels | None]:
        """A chapter's measured files (waits)."""
        with self._lock:
            future = self._measured[number]
        return future.result()

    def join_m4b(self, out_path: Path, *, tags: AudiobookTags, cover: Path | None) -> Path:
        """The m4b of the book's chapters (waits for them): from the live join when it worked,
        else joined now from the chapter files."""
        encoded = [_encoded(r) for r in self.records() if r.in_book]
        with self._lock:
            live, self._live = self._live, None
        if live is not None:
            try:
                return live.finish(encoded, out_path)
            except LiveJoinFailed as exc:
                log.warning("The live join of %s did not work out (%s); joining it again", out_path.name, exc)
        return join_m4b(encoded, out_path, tags=tags, cover=cover)

    def close(self) -> None:
        """Stop without waiting for chapters still rendering."""
        self._master.close()
        self._measure_pool.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            live, self._live = self._live, None
        if live is not None:
            live.abort()


def _encoded(record: MasteredChapter) -> EncodedChapter:
    return EncodedChapter(record.number, record.title, record.adts, record.aac_frames, record.sample_rate_hz)


def _start_live_join(
    specs: list[ChapterSpec], folder: Path, tags: AudiobookTags, cover: Path | None
) -> LiveJoin | None:
    chapters = [(spec.number, spec.title) for spec in specs if spec.in_book]
    if not chapters:
        return None
    try:
        return LiveJoin(chapters, folder, tags=tags, cover=cover)
    except (FfmpegError, OSError) as exc:
        log.warning("Could not start the live join (%s); the m4b is joined after the last chapter", exc)
        return None


def finished_chapters(
    specs: Iterable[ChapterSpec],
    folder: Path,
    options: MasterOptions,
    cached_chunk: Callable[[str], Path | None],
    *,
    remaster: Iterable[int] = (),
) -> list[MasteredChapter]:
    """The chapters an earlier run mastered whose chunk files are all here and unchanged since."""
    redo = frozenset(remaster)
    found = []
    for spec in specs:
        if spec.number in redo or not has_record(folder, spec, options):
            continue
        chunks = [cached_chunk(key) for key in spec.keys]
        if any(path is None for path in chunks):
            continue
        record = load_mastered(
            folder, spec, options, stamp=chunks_stamp([p for p in chunks if p is not None])
        )
        if record is not None:
            found.append(record)
    return found


def measured_levels(path: Path) -> FileLevels:
    """``measure_file(path)``, kept beside the file so a resumed or rebuilt book measures it once."""
    cache = path.with_name(path.name + ".levels.json")
    stat = path.stat()
    stamp = [stat.st_size, stat.st_mtime_ns]
    try:
        data = json.loads(cache.read_text(encoding="utf-8"))
        if data.get("stamp") == stamp:
            values = {k: (-math.inf if v is None and k != "path" else v) for k, v in data["levels"].items()}
            return FileLevels(**values)
    except (OSError, ValueError, KeyError, TypeError):
        pass
    levels = measure_file(path)
    write_atomic(cache, json.dumps({"stamp": stamp, "levels": levels.to_json()}))
    return levels


@dataclass(frozen=True, slots=True)
class BookFiles:
    """What :func:`finish_book` wrote."""

    folder: Path
    m4b: Path | None
    mp3_dir: Path | None
    acx_dir: Path | None
    levels_path: Path
    levels: dict[str, object]
    chapters: tuple[ChapterAudio, ...]
    records: tuple[MasteredChapter, ...]


def finish_book(
    finisher: ChapterFinisher,
    *,
    place: BookPlace,
    tags: AudiobookTags,
    cover: Path | None,
    output_format: str,
    also_mp3: bool,
    phase: Callable[[str, str], None],
    step: Callable[[str, float], None] | None = None,
) -> BookFiles:
    """Join the m4b, export MP3 / ACX files and write the levels report from mastered chapters.

    Every file goes where the job's ``place`` says (:mod:`omni_web.deliver.layout` names them);
    ``step`` reports the "book" and "mp3" phases done.
    """
    records = finisher.records()
    book = [r for r in records if r.in_book]
    credits = {r.number: r for r in records if not r.in_book}
    preset = finisher.options.preset
    folder = place.folder
    folder.mkdir(parents=True, exist_ok=True)
    report = step or (lambda _name, _fraction: None)
    chapters = tuple(r.audio() for r in book)
    m4b: Path | None = None
    if output_format == "m4b":
        phase("joining", "Joining the m4b (stream copy)")
        m4b = finisher.join_m4b(place.m4b, tags=tags, cover=cover)
        report("book", 1.0)
    mp3_dir: Path | None = None
    if output_format == "mp3" or also_mp3:
        phase("joining", "Tagging the MP3 chapters")
        mp3_chapters = [r.audio(mp3=True) for r in book if r.mp3 is not None]
        files = export_mp3_chapters(
            mp3_chapters,
            place.root,
            tags=tags,
            cover=cover,
            copy_audio=True,
            folder=place.mp3_dir,
            progress=lambda fraction: report("mp3", fraction),
        )
        mp3_dir = files[0].parent if files else None
    phase("joining", "Checking levels")
    reports = []
    for r in book:
        m4a_levels, _mp3_levels = finisher.levels(r.number)
        assert m4a_levels is not None
        reports.append(judge(r.number, r.title, m4a_levels, preset))
    acx_dir: Path | None = None
    acx_reports: list[ChapterReport] = []
    acx_problems: list[str] = []
    if preset.acx:
        phase("joining", "Writing the ACX files")
        acx_dir = place.acx_dir  # each job of the book its own ACX set
        acx_reports, acx_problems = _write_acx(finisher, book, credits, acx_dir, tags=tags)
    levels_report = LevelsReport(
        title=tags.title,
        preset=preset,
        chapters=tuple(reports),
        acx_files=tuple(acx_reports),
        acx_problems=tuple(acx_problems),
    )
    levels_path = write_levels_report(levels_report, place.report(REPORT_SUFFIX, mp3_only=m4b is None))
    _settle_versions(finisher, m4b or mp3_dir, records)
    return BookFiles(
        folder, m4b, mp3_dir, acx_dir, levels_path, levels_report.to_json(), chapters, tuple(book)
    )


def _settle_versions(finisher: ChapterFinisher, book: Path | None, records: list[MasteredChapter]) -> None:
    """The book is in place: record what it was built from, then drop the chapter versions it replaced."""
    if book is None:
        return
    try:
        write_manifest(finisher.folder, book, finisher.specs, finisher.options)
        remove_superseded(finisher.folder, records, older_than=finisher.started_at)
    except OSError as exc:  # the book is done; a full disk costs the clean-up, not the book
        log.warning("Could not record or tidy the chapter versions in %s: %s", finisher.folder, exc)


def _write_acx(
    finisher: ChapterFinisher,
    book: list[MasteredChapter],
    credits: dict[int, MasteredChapter],
    acx_dir: Path,
    *,
    tags: AudiobookTags,
) -> tuple[list[ChapterReport], list[str]]:
    """Write the ACX set into ``acx_dir``; returns each file's report line and the rule problems."""
    preset = finisher.options.preset
    spec_by_number = {s.number: s for s in finisher.specs}
    files = export_acx(
        [(spec_by_number[r.number], r) for r in book],
        credits[OPENING_CREDITS],
        credits[CLOSING_CREDITS],
        acx_dir,
        tags=tags,
        preset=preset,
    )
    remove_stale(acx_dir, files)
    measured_mp3 = {r.number: finisher.levels(r.number)[1] for r in book if r.mp3 is not None}
    reports = []
    for item in files:
        # A chapter file copied from its mastered MP3 holds the same audio; measure the rest.
        reuse = measured_mp3.get(item.number) if item.kind == "chapter" else None
        levels = reuse if reuse is not None else measure_file(item.path)
        reports.append(judge(item.number, item.title, _renamed(levels, item.path), preset, item.kind))
    return reports, probe_acx_rules(files)


def _renamed(levels: FileLevels, path: Path) -> FileLevels:
    from dataclasses import replace

    return replace(levels, path=str(path))
