"""Jobs tab: every job with its state, progress and ETA; cancel and resume; finished chapters
playable while the rest renders; the m4b (and MP3s) to download.

Everything shown is read from the job store on each tick, so a refresh, a second browser and an
app restart show the same jobs. The page remembers only what it last rendered, so a playing
chapter or a download link is not replaced while nothing about it changed.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import gradio as gr

from omni_web.jobs import Job, JobState
from omni_web.pipeline import ConvertProgress, ConvertResult
from omni_web.ui import readalong
from omni_web.ui.context import OnLoad, UiContext
from omni_web.ui.errors import guarded
from omni_web.ui.review import build_review_panel
from omni_web.ui.widgets import badge, callout, clock_str, esc, progress_bar, table

__all__ = [
    "JobsRefs",
    "build",
    "chapter_audio",
    "job_choices",
    "job_detail_html",
    "jobs_table_html",
    "playable_chapters",
    "progress_of",
    "result_of",
]


@dataclass(frozen=True, slots=True)
class JobsRefs:
    """The Jobs tab's components."""

    overview: gr.HTML
    pick: gr.Dropdown
    detail: gr.HTML
    cancel: gr.Button
    resume: gr.Button
    chapter: gr.Dropdown
    player: gr.Audio
    m4b: gr.DownloadButton
    mp3s: gr.File
    shown: gr.State
    timer: gr.Timer
    on_load: OnLoad | None = field(default=None)


def progress_of(job: Job) -> ConvertProgress:
    """The job's progress record (defaults before the first report)."""
    return ConvertProgress.from_dict(job.progress)


def result_of(job: Job) -> ConvertResult | None:
    """The finished job's result record; None until the job is done."""
    return ConvertResult.from_dict(job.result) if job.state is JobState.DONE and job.result else None


def _chunks_text(p: ConvertProgress) -> str:
    return f"{p.chunks_done}/{p.chunks_total or '?'} chunks"


def _progress_cell(job: Job, position: int) -> str:
    if job.state is JobState.QUEUED:
        return f'<span class="ow-dim">queued, #{position} in line</span>'
    result = result_of(job)
    if result is not None:
        return progress_bar(1.0, text=f"done · {clock_str(result.duration_s)} of audio")
    p = progress_of(job)
    text = f"{p.phase if job.progress else 'starting'} · {_chunks_text(p)}"
    return progress_bar(p.fraction if job.state is JobState.RUNNING or job.progress else 0.0, text=text)


def jobs_table_html(jobs: Sequence[Job], positions: Mapping[str, int]) -> str:
    """The overview: one row per job, newest first (``positions``: JobStore.queue_positions())."""
    if not jobs:
        return callout("No jobs yet. Queue one in the Generate tab.")
    rows = []
    for job in jobs:
        position = positions.get(job.id, 0)
        eta = progress_of(job).eta_s if job.state is JobState.RUNNING else None
        created = time.strftime("%Y-%m-%d %H:%M", time.localtime(job.created_at))
        rows.append((esc(job.title), esc(job.params.get("model_key", "-")), badge(job.state.value),
                     _progress_cell(job, position), esc(clock_str(eta)), esc(created), f"<code>{esc(job.id)}</code>"))
    return table(["Book", "Model", "State", "Progress", "ETA", "Queued", "Job"], rows, raw_columns=range(7))


def job_choices(jobs: Sequence[Job]) -> list[tuple[str, str]]:
    """Dropdown entries ``Alice (running) · 3f2a…`` → job id."""
    return [(f"{job.title} ({job.state.value}) · {job.id}", job.id) for job in jobs]


def job_detail_html(job: Job, position: int) -> str:
    """The selected job: phase, progress, speed, ETA, chapters, and the error if it failed."""
    p = progress_of(job)
    result = result_of(job)
    head = f'<div class="ow-status">{badge(job.state.value)} <b>{esc(job.title)}</b> ' \
           f'<span class="ow-dim">{esc(job.params.get("model_key", ""))} · job {esc(job.id)}</span></div>'
    if job.state is JobState.QUEUED:
        body = callout(f"Waiting: #{position} in the queue. Jobs for the GPU server run one after another.")
    else:
        rtf = p.realtime_factor
        audio_s = result.duration_s if result is not None else p.audio_s
        facts = [_chunks_text(p), f"{clock_str(audio_s)} of audio", f"elapsed {clock_str(p.elapsed_s)}"]
        if job.state is JobState.RUNNING:
            facts.append(f"ETA {clock_str(p.eta_s)}")
        if rtf:
            facts.append(f"{rtf:.1f}× real time")
        if p.qa is not None:
            facts.append(p.qa.line)  # audio QA verdicts; the review panel lists the flagged chunks
        fraction = 1.0 if job.state is JobState.DONE else p.fraction
        phase = p.phase if job.progress else ""
        body = progress_bar(fraction, text=f"{phase} — {p.message}".strip(" —"))
        body += f'<div class="ow-dim">{esc(" · ".join(facts))}</div>'
    if job.error:
        body += callout(job.error, tone="bad" if job.state is JobState.FAILED else "info")
    if p.chapters:
        rows = [(str(c.number), esc(c.title), badge(c.state), esc(clock_str(c.duration_s))) for c in p.chapters]
        body += table(["#", "Chapter", "State", "Length"], rows, raw_columns=(1, 2, 3))
    return head + body


def playable_chapters(job: Job) -> list[tuple[str, str]]:
    """``(label, chapter number)`` for every chapter whose audio file is ready and on disk."""
    return [(f"{number}. {title}", str(number)) for number, title, _ in _ready_chapters(job)]


def _ready_chapters(job: Job) -> list[tuple[int, str, Path]]:
    return [(c.number, c.title, c.audio_path) for c in progress_of(job).ready_chapters()
            if c.audio_path is not None and c.audio_path.is_file()]


def chapter_audio(job: Job, number: int) -> Path | None:
    """The audio file of chapter ``number`` when it is ready (only paths the job itself reports)."""
    return next((path for n, _, path in _ready_chapters(job) if n == number), None)


def _downloads(job: Job) -> tuple[str | None, list[str]]:
    """The m4b and the MP3 files of a finished job (only files that exist)."""
    result = result_of(job)
    if result is None:
        return None, []
    m4b, mp3_dir = result.m4b, result.mp3_dir
    mp3s = sorted(str(p) for p in mp3_dir.glob("*.mp3")) if mp3_dir and mp3_dir.is_dir() else []
    return (str(m4b) if m4b and m4b.is_file() else None), mp3s


def build(ctx: UiContext) -> JobsRefs:
    """Create the Jobs tab's components and wire them (inside a ``gr.Tab``)."""
    overview = gr.HTML(elem_id="jobs-table", padding=False)
    with gr.Row(equal_height=False):
        with gr.Column(scale=3):
            # Values are checked against the job store, not a fixed list (the list changes every tick).
            pick = gr.Dropdown(label="Job", elem_id="jobs-pick", interactive=True, allow_custom_value=True)
            detail = gr.HTML(elem_id="jobs-detail", padding=False)
            with gr.Row():
                cancel = gr.Button("Cancel job", variant="stop", visible=False, elem_id="jobs-cancel")
                resume = gr.Button("Resume job", variant="primary", visible=False, elem_id="jobs-resume")
        with gr.Column(scale=2):
            chapter = gr.Dropdown(label="Play a finished chapter", elem_id="jobs-chapter", interactive=True,
                                  allow_custom_value=True,
                                  info="Chapters become playable as soon as they are assembled.")
            player = gr.Audio(label="Chapter", interactive=False, elem_id="jobs-player", type="filepath")
            m4b = gr.DownloadButton("Download m4b", visible=False, variant="primary", elem_id="jobs-download")
            mp3s = gr.File(label="MP3 chapters", file_count="multiple", visible=False, elem_id="jobs-mp3s")
    build_review_panel(ctx, pick)  # omni_web/ui/review.py: flagged chunks of the picked job
    refs = JobsRefs(overview, pick, detail, cancel, resume, chapter, player, m4b, mp3s, gr.State({}), gr.Timer(2.0))
    readalong.attach(ctx, pick, refs.timer)
    return replace(refs, on_load=_wire(ctx, refs))


def _wire(ctx: UiContext, refs: JobsRefs) -> OnLoad:
    store = ctx.services.jobs
    outputs = [refs.overview, refs.pick, refs.detail, refs.cancel, refs.resume, refs.chapter, refs.player,
               refs.m4b, refs.mp3s, refs.shown]

    def render(selected: str | None, shown: dict[str, Any] | None) -> list[Any]:
        shown = dict(shown or {})
        jobs = store.list()
        positions = store.queue_positions()
        ids = [job.id for job in jobs]
        selected = selected if selected in ids else (ids[0] if ids else None)
        choices = job_choices(jobs)
        pick = gr.update(choices=choices, value=selected) if choices != shown.get("choices") else gr.skip()
        new = {"choices": choices, "job": selected}
        if selected is None:
            return [jobs_table_html(jobs, positions), pick, "", gr.update(visible=False), gr.update(visible=False),
                    gr.update(choices=[], value=None), None, gr.update(visible=False), gr.update(visible=False), new]
        job = next(job for job in jobs if job.id == selected)
        position = positions.get(job.id, 0)
        same_job = shown.get("job") == selected
        ready = playable_chapters(job)
        new["ready"] = ready
        if not same_job:
            chapter = gr.update(choices=ready, value=None)
        else:
            chapter = gr.skip() if ready == shown.get("ready") else gr.update(choices=ready)
        player = gr.skip() if same_job else None
        m4b, mp3s = _downloads(job)
        new["files"] = [m4b, mp3s]
        files_same = same_job and new["files"] == shown.get("files")
        m4b_out = gr.skip() if files_same else gr.update(value=m4b, visible=m4b is not None)
        mp3_out = gr.skip() if files_same else gr.update(value=mp3s or None, visible=bool(mp3s))
        return [jobs_table_html(jobs, positions), pick, job_detail_html(job, position),
                gr.update(visible=not job.state.finished), gr.update(visible=job.state in (JobState.FAILED,
                                                                                        JobState.CANCELLED)),
                chapter, player, m4b_out, mp3_out, new]

    @guarded
    def cancel(selected: str | None, shown: dict[str, Any] | None) -> list[Any]:
        if selected:
            store.request_cancel(selected)
            gr.Info("Cancel requested: the job stops after the chunks in flight. Resume it later to go on.")
        return render(selected, shown)

    @guarded
    def resume(selected: str | None, shown: dict[str, Any] | None) -> list[Any]:
        if selected:
            store.resume(selected)
            ctx.services.worker.wake()
        return render(selected, shown)

    def play(selected: str | None, number: str | None) -> str | None:
        # The page sends a chapter number, never a path: only files a job reports are served.
        if not selected or not number:
            return None
        path = chapter_audio(store.get(selected), int(number))
        return str(path) if path else None

    refs.timer.tick(guarded(render), [refs.pick, refs.shown], outputs, show_progress="hidden",
                    api_name="jobs_refresh", concurrency_limit=None)
    refs.pick.input(guarded(render), [refs.pick, refs.shown], outputs, api_visibility="private")
    refs.cancel.click(cancel, [refs.pick, refs.shown], outputs, api_name="job_cancel")
    refs.resume.click(resume, [refs.pick, refs.shown], outputs, api_name="job_resume")
    refs.chapter.input(guarded(play), [refs.pick, refs.chapter], refs.player, api_name="job_play_chapter")
    return OnLoad(guarded(lambda: render(None, None)), [], outputs)
