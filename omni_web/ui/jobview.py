"""The Jobs tab's markup for one job: status, one bar per phase, its log, its chapters.

Pure functions of a :class:`~omni_web.jobs.Job` (and the clock), so the tab only decides when to
send them. Chapters play through Gradio's file route straight from the output folder (served in
place, see ``ui.app``); the downloads panel is ``ui/downloads.py``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from omni_web.catalog import get_entry
from omni_web.client import VoiceKind
from omni_web.errors import UnknownModel
from omni_web.jobs import Job, JobState
from omni_web.library import fix_of, fix_wait_reason, same_server_work
from omni_web.pipeline import ConvertProgress, ConvertRequest, ConvertResult, PhaseProgress, PhaseState
from omni_web.pipeline.review import finished_qa_line
from omni_web.ui.downloads import file_url
from omni_web.ui.labels import chapter_label, model_name
from omni_web.ui.levels import levels_html, mastering_fact
from omni_web.ui.widgets import badge, callout, clock_str, duration_str, esc, progress_bar, table
from omni_web.voices.names import canonical_spelling, display_name

__all__ = [
    "chapters_html",
    "elapsed_s",
    "job_detail_html",
    "job_eta_s",
    "job_levels_html",
    "job_log_html",
    "jobs_table_html",
    "model_name",
    "phase_rows",
    "progress_of",
    "ready_chapters",
    "request_of",
    "result_of",
    "voice_of",
]


def elapsed_s(job: Job, *, now: float | None = None) -> float | None:
    """Wall time of the whole job (every phase) since its latest start; None before it starts."""
    if job.started_at is None:
        return None
    end = job.finished_at if job.finished_at is not None and job.state.finished else (now or time.time())
    return max(0.0, end - job.started_at)


def progress_of(job: Job) -> ConvertProgress:
    """The job's progress record (defaults before the first report)."""
    return ConvertProgress.from_dict(job.progress)


def request_of(job: Job) -> ConvertRequest:
    """The job's request record, read tolerantly (a job without a model shows "-")."""
    return ConvertRequest.read(job.params)


def result_of(job: Job) -> ConvertResult | None:
    """The finished job's result record; None until the job is done."""
    return ConvertResult.from_dict(job.result) if job.state is JobState.DONE and job.result else None


def _fraction(done: float, total: float) -> float | None:
    return min(1.0, done / total) if total else None


def phase_rows(job: Job) -> tuple[PhaseProgress, ...]:
    """The job's phases; a document from before phases existed shows its chunks as rendering."""
    p = progress_of(job)
    if p.phases:
        return p.phases
    state = PhaseState.DONE if p.chunks_total and p.chunks_done >= p.chunks_total else PhaseState.ACTIVE
    return (PhaseProgress(name="rendering", label="Rendering", done=p.chunks_done, total=p.chunks_total,
                          unit="chunks", state=state, eta_s=p.eta_s),)


def _phase_html(phase: PhaseProgress, *, running: bool, follows: str = "") -> str:
    """One phase's bar; ``follows``: the active phase before it, whose end it waits for (no ETA of its
    own)."""
    counts = phase.counts
    if phase.state == PhaseState.DONE:
        fraction, note = 1.0, "done"
    elif phase.state == PhaseState.ACTIVE:
        fraction = _fraction(phase.done, phase.total)
        if not running:
            note = "stopped"
        elif follows == "the server":
            note = "waits for the server"
        elif follows:
            note = f"keeps up with {follows.lower()}"
        else:
            note = f"ETA {clock_str(phase.eta_s)}" if phase.eta_s is not None else "measuring speed"
    else:
        fraction, note = 0.0, "waiting"
    label = f'<span class="ow-phase-name">{esc(phase.label)}</span>'
    text = f"{counts} · {note}" if counts else note
    return (
        f'<div class="ow-phase ow-phase-{esc(phase.state)}" data-phase="{esc(phase.name)}">'
        f"{label}<div>{progress_bar(fraction, text=text)}</div></div>"
    )


def _phases_html(phases: tuple[PhaseProgress, ...], *, running: bool, waiting: bool = False) -> str:
    """Every phase's bar. A phase that works behind an earlier active one (chapters are finished as
    they are rendered) shows no ETA of its own: it would only repeat the earlier one's; while the
    server is down no phase shows an ETA (it would only freeze)."""
    rows, ahead = [], "the server" if waiting else ""
    for phase in phases:
        rows.append(_phase_html(phase, running=running, follows=ahead))
        if phase.state == PhaseState.ACTIVE and not ahead:
            ahead = phase.label
    return "".join(rows)


def _state_line(job: Job, position: int) -> str:
    p = progress_of(job)
    counts = p.chunk_counts
    if job.state is JobState.QUEUED:
        return f"Waiting: #{position} in the queue. Jobs for the GPU server run one after another."
    if job.state is JobState.CANCELLED:
        return f"Cancelled at {counts}. Finished chunks and chapters are kept: Resume goes on from there."
    if job.state is JobState.FAILED:
        return f"Stopped at {counts}. Finished work is kept: Resume retries from there."
    if job.state is JobState.DONE:
        result = result_of(job)
        audio = result.duration_s if result else None
        missing = (
            f" Not in the book (silence instead, flagged for review): {'; '.join(p.failed_chunks)}."
            if p.failed_chunks
            else ""
        )
        return f"Finished: {duration_str(audio)} of audio in {duration_str(elapsed_s(job))}.{missing}"
    return p.message or "Starting…"


def _waiting_html(job: Job, remote_url: str) -> str:
    """While the job waits for its server: since when, and the remedy that fits that server."""
    p = progress_of(job)
    if job.state is not JobState.RUNNING or not p.server_status:
        return ""
    since = time.strftime("%H:%M:%S", time.localtime(p.server_down_since or time.time()))
    url = request_of(job).api_url or remote_url
    if url:
        remedy = (
            f"The job uses the server at {url}, which omni-web does not manage: start it again on its "
            "machine, or change the remote URL on the Server tab. The job goes on by itself when it "
            "answers; finished chunks are kept."
        )
    else:
        remedy = (
            "omni-web restarts the server it manages by itself; nothing to do. If it keeps failing, the "
            "Server tab's boot log says why."
        )
    return (
        f'<div class="ow-status" id="jobs-waiting">{badge("waiting", tone="wait")} '
        f"<b>Waiting for the server (down since {esc(since)})</b></div>"
        f'<div class="ow-dim">{esc(p.server_status)}</div>' + callout(remedy)
    )


def _fix_html(job: Job, running: Sequence[Job], queue_paused: bool) -> str:
    """A regenerate's job: what it rebuilds and, while it waits, why."""
    fix = fix_of(job)
    if fix is None:
        return ""
    why = (
        fix_wait_reason(job, running, queue_paused=queue_paused, shares_server=same_server_work)
        if job.state is JobState.QUEUED
        else ""
    )
    return callout(f"{fix.message} {why}".strip(), tone="info")


def job_detail_html(
    job: Job,
    position: int,
    *,
    now: float | None = None,
    remote_url: str = "",
    running: Sequence[Job] = (),
    queue_paused: bool = False,
) -> str:
    """The selected job: state, per-phase bars with ETAs, whole-job elapsed, speed, the error.

    ``remote_url`` is the Server tab's remote URL (a job without its own ``api_url`` uses it), so
    a wait for the server names the remedy that fits it. ``running`` and ``queue_paused`` say why
    a queued fix waits.
    """
    p = progress_of(job)
    result = result_of(job)
    head = (
        f'<div class="ow-status">{badge(job.state.value)} <b>{esc(job.title)}</b> '
        f'<span class="ow-dim">{esc(model_name(request_of(job).model_key))} · {esc(voice_of(job))} · '
        f"job {esc(job.id)}</span></div>"
    )
    waiting = _waiting_html(job, remote_url)
    body = waiting or f'<div class="ow-job-line">{esc(_state_line(job, position))}</div>'
    body += _fix_html(job, running, queue_paused)
    if job.state is not JobState.QUEUED and job.progress:
        running = job.state is JobState.RUNNING
        body += _phases_html(phase_rows(job), running=running, waiting=bool(progress_of(job).server_status))
        facts = [f"elapsed {clock_str(elapsed_s(job, now=now))} (whole job)"]
        facts.append(f"{duration_str(result.duration_s if result else p.audio_s)} of audio")
        if p.words:
            facts.append(f"{p.words:,} words")
        if p.chunks_cached:
            facts.append(f"{p.chunks_cached:,} chunks reused")
        if p.realtime_factor:
            facts.append(f"{p.realtime_factor:.1f} s of audio per wall second")
        if p.gpu_line:
            facts.append(
                p.gpu_line
                + (f", {p.audio_per_gpu_s:.0f} s of audio per GPU-second" if p.audio_per_gpu_s else "")
            )
        if p.in_flight_line and running:
            facts.append(p.in_flight_line)  # "48 in flight, server full at ~48"
        elif p.peak_in_flight:
            facts.append(
                f"up to {p.peak_in_flight} requests in flight"
                + (f", server full at ~{p.server_full_at}" if p.server_full_at else "")
            )
        if p.qa is not None:
            # A finished job counts as its review list does (one set of counts); a running one as it goes.
            done_line = finished_qa_line(job.result, job.id) if result is not None else None
            facts.append(done_line.rstrip(".") if done_line else p.qa.line)
        facts += [fact for fact in [mastering_fact(p.chapters_mastered, p.chapters_to_master)] if fact]
        body += f'<div class="ow-dim">{esc(" · ".join(facts))}</div>'
    elif result is not None and (line := finished_qa_line(job.result, job.id)):
        body += f'<div class="ow-dim">{esc(line)}</div>'  # a book made elsewhere: no progress, its report
    if job.error:
        body += callout(job.error, tone="bad" if job.state is JobState.FAILED else "info")
    return head + body


def job_eta_s(job: Job) -> float | None:
    """Time left for the whole job: the longest ETA of its phases still going (mastering and the
    book file included), not the renderer's alone, which reads 0:00 while chapters are mastered."""
    etas = [
        phase.eta_s
        for phase in phase_rows(job)
        if phase.state == PhaseState.ACTIVE and phase.eta_s is not None
    ]
    return max(etas) if etas else progress_of(job).eta_s


def job_levels_html(job: Job) -> str:
    """The job's levels report and its log, each folded (the report from its result once done)."""
    result = result_of(job)
    p = progress_of(job)
    return levels_html(result.levels if result is not None and result.levels else p.levels) + job_log_html(
        job
    )


def job_log_html(job: Job) -> str:
    """What happened to the job besides its progress (the server went away, was restarted, came back)."""
    p = progress_of(job)
    lines = [(time.strftime("%H:%M:%S", time.localtime(event.at)), event.text) for event in p.events]
    if job.started_at is not None:
        lines.insert(0, (time.strftime("%H:%M:%S", time.localtime(job.started_at)), "Started."))
    if job.error:
        lines.append((time.strftime("%H:%M:%S", time.localtime(job.finished_at or time.time())), job.error))
    rows = "".join(f'<li><span class="ow-dim">{esc(at)}</span> {esc(text)}</li>' for at, text in lines)
    events = len(p.events)
    tally = f"{events} server event{'s' if events != 1 else ''}" if events else "nothing unusual"
    return (
        f'<details id="jobs-log" class="ow-fold"><summary><b>Job log</b> <span class="ow-dim">{tally}</span>'
        f'</summary><ul class="ow-scroll ow-links">{rows}</ul></details>'
    )


def voice_of(job: Job) -> str:
    """The job's narrator voice as people read it ("Vivian", "clone of narrator.wav")."""
    request = request_of(job)
    voice = request.voice
    if voice.kind is VoiceKind.CLONE:
        return f"clone of {(voice.reference or Path('clip')).name}"
    if voice.kind in (VoiceKind.DESIGN, VoiceKind.DEFAULT):
        return {VoiceKind.DESIGN: "designed voice", VoiceKind.DEFAULT: "default voice"}[voice.kind]
    if not voice.name:
        return "voice"
    try:
        known = get_entry(request.model_key).preset_voices
    except UnknownModel:
        known = ()
    return display_name(canonical_spelling(voice.name, known))


def ready_chapters(job: Job) -> list[tuple[int, str, Path]]:
    """``(number, title, path)`` for every chapter whose audio file is ready and on disk."""
    return [
        (c.number, c.title, c.audio_path)
        for c in progress_of(job).ready_chapters()
        if c.audio_path is not None and c.audio_path.is_file()
    ]


def chapters_html(job: Job) -> str:
    """The chapter list: compact rows in a scrolling box, a play button on every finished one.

    A button carries its chapter's URL and title; the page plays it in the player bar at the foot
    of the window (``ui/jobs.py``), so it plays where the list is, not in a player out of sight.
    """
    chapters = progress_of(job).chapters
    if not chapters:
        return ""
    ready = {number: path for number, _, path in ready_chapters(job)}
    rows = []
    for chapter in chapters:
        number = chapter.number
        label = chapter_label(number, chapter.title)
        play = (
            f'<button class="ow-play" data-play="{number}" data-src="{esc(file_url(ready[number]))}" '
            f'data-title="{esc(label)}" title="Play chapter {number}" aria-label="Play chapter {number}">▶'
            "</button>"
            if number in ready
            else ""
        )
        rows.append(
            (play, str(number), esc(chapter.title), badge(chapter.state), esc(clock_str(chapter.duration_s)))
        )
    title = f'<div class="ow-dim">Chapters: {len(ready)} of {len(chapters)} ready to play</div>'
    return (
        title
        + '<div class="ow-scroll ow-chapter-list">'
        + table(["", "#", "Chapter", "State", "Length"], rows, raw_columns=(0, 2, 3, 4))
        + "</div>"
    )


def _progress_cell(job: Job, position: int) -> str:
    if job.state is JobState.QUEUED:
        return f'<span class="ow-dim">queued, #{position} in line</span>'
    result = result_of(job)
    if result is not None:
        return progress_bar(1.0, text=f"done · {duration_str(result.duration_s)} of audio")
    p = progress_of(job)
    phase = p.phase if job.state is JobState.RUNNING else job.state.value
    return progress_bar(p.fraction or 0.0, text=f"{phase} · {p.chunk_counts}")


def jobs_table_html(jobs: Sequence[Job], positions: Mapping[str, int]) -> str:
    """The overview: one row per job, newest first (``positions``: JobStore.queue_positions())."""
    if not jobs:
        return callout("No jobs yet. Queue one in the Generate tab.")
    rows = []
    for job in jobs:
        # While its server is down a running job waits: said so, and no ETA that only freezes.
        waiting = job.state is JobState.RUNNING and bool(progress_of(job).server_status)
        eta = job_eta_s(job) if job.state is JobState.RUNNING and not waiting else None
        created = time.strftime("%Y-%m-%d %H:%M", time.localtime(job.created_at))
        model = (
            f'{esc(model_name(request_of(job).model_key))} <span class="ow-dim">· {esc(voice_of(job))}</span>'
        )
        state = badge("waiting for server", tone="wait") if waiting else badge(job.state.value)
        rows.append(
            (
                esc(job.title),
                model,
                state,
                _progress_cell(job, positions.get(job.id, 0)),
                esc(clock_str(eta)),
                esc(created),
                f"<code>{esc(job.id)}</code>",
            )
        )
    return (
        '<div class="ow-scroll ow-scroll-short">'
        + table(
            ["Book", "Model · voice", "State", "Progress", "ETA", "Queued", "Job"], rows, raw_columns=range(7)
        )
        + "</div>"
    )
