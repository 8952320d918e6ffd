"""Jobs tab: every job with its state and progress; for the selected one, its actions at the top
(Cancel, Resume, Run again, Delete, Download), one bar per phase, where its files are, and its
chapters in a compact scrolling table with a play button on every finished one.

Everything shown is read from the job store on each tick, so a refresh, a second browser and an
app restart show the same jobs. The page remembers only what it last sent (``shown``), so the
chapter table and the player are not replaced while nothing about them changed.

Attachment point: ``JobsRefs.details`` is an empty column under the selected job's summary;
other panels (QA review, levels report) are built into it with ``with refs.details:`` and read
the selected job id from ``refs.pick``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import gradio as gr

from omni_web.jobs import Job, JobState
from omni_web.ui import delivery, readalong
from omni_web.ui.context import OnLoad, UiContext
from omni_web.ui.errors import guarded
from omni_web.ui.jobview import job_detail_html, jobs_table_html, ready_chapters
from omni_web.ui.live import JOBS_TRIGGER, job_parts
from omni_web.ui.review import build_review_panel

__all__ = [
    "JobsRefs",
    "build",
    "chapter_audio",
    "default_job",
    "job_choices",
    "job_detail_html",
    "jobs_table_html",
    "playable_chapters",
]

# A play button plays its chapter in one player bar at the foot of the window, so it plays where
# the list is (on a phone too) without a round trip; the bar lives outside the re-rendered list,
# so a tick never stops it. The listener sits on the box, so it survives re-renders.
_PLAY_JS = """
element.addEventListener('click', (event) => {
  const button = event.target.closest('[data-play]');
  if (!button) { return; }
  let bar = document.getElementById('ow-nowplaying');
  if (!bar) {
    bar = document.createElement('div');
    bar.id = 'ow-nowplaying';
    bar.innerHTML = '<span class="ow-np-title"></span><audio controls preload="metadata"></audio>'
      + '<button class="ow-np-close" aria-label="Close the player" title="Close">✕</button>';
    document.body.appendChild(bar);
    bar.querySelector('.ow-np-close').addEventListener('click', () => {
      bar.querySelector('audio').pause(); bar.hidden = true; document.body.style.paddingBottom = ''; });
  }
  bar.hidden = false;
  document.body.style.paddingBottom = bar.offsetHeight + 'px';  // the bar never hides the page's end
  const audio = bar.querySelector('audio');
  bar.querySelector('.ow-np-title').textContent = button.dataset.title;
  if (audio.dataset.chapter !== button.dataset.src) {
    audio.src = button.dataset.src; audio.dataset.chapter = button.dataset.src;
  }
  audio.play().catch(() => {});
  element.querySelectorAll('.ow-playing').forEach((other) => other.classList.remove('ow-playing'));
  button.classList.add('ow-playing');
});
"""


@dataclass(frozen=True, slots=True)
class JobsRefs:
    """The Jobs tab's components; ``details`` is where other panels attach (see the module doc)."""

    overview: gr.HTML
    pick: gr.Dropdown
    cancel: gr.Button
    resume: gr.Button
    rerun: gr.Button
    delete: gr.Button
    downloads: gr.HTML
    detail: gr.HTML
    details: gr.Column
    chapters: gr.HTML
    levels: gr.HTML
    confirm: gr.Column
    confirm_text: gr.Markdown
    confirm_delete: gr.Button
    confirm_cancel: gr.Button
    shown: gr.State
    timer: gr.Button  # the hidden refresh the page's poll clicks
    on_load: OnLoad | None = field(default=None)


def job_choices(jobs: Sequence[Job]) -> list[tuple[str, str]]:
    """Dropdown entries ``Alice (running) · 3f2a…`` → job id."""
    return [(f"{job.title} ({job.state.value}) · {job.id}", job.id) for job in jobs]


def playable_chapters(job: Job) -> list[tuple[str, str]]:
    """``(label, chapter number)`` for every chapter whose audio file is ready and on disk."""
    return [(f"{number}. {title}", str(number)) for number, title, _ in ready_chapters(job)]


def chapter_audio(job: Job, number: int) -> Path | None:
    """The audio file of chapter ``number`` when it is ready (only paths the job itself reports)."""
    return next((path for n, _, path in ready_chapters(job) if n == number), None)


def default_job(jobs: Sequence[Job]) -> str | None:
    """The job a page opens on: the running one (what a user comes to watch), else the newest."""
    running = next((job.id for job in jobs if job.state is JobState.RUNNING), None)
    return running or (jobs[0].id if jobs else None)


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()  # noqa: S324 - a change marker, not security


def build(ctx: UiContext) -> JobsRefs:
    """Create the Jobs tab's components and wire them (inside a ``gr.Tab``)."""
    overview = gr.HTML(elem_id="jobs-table", padding=False)
    with gr.Row(equal_height=False, elem_id="jobs-bar", elem_classes=["ow-actions"]):
        # Values are checked against the job store, not a fixed list (the list changes every tick).
        pick = gr.Dropdown(label="Job", elem_id="jobs-pick", interactive=True, allow_custom_value=True,
                           scale=4)
        cancel = gr.Button(
            "Cancel job", variant="stop", visible=False, elem_id="jobs-cancel", scale=0, min_width=150
        )
        resume = gr.Button(
            "Resume", variant="primary", visible=False, elem_id="jobs-resume", scale=0, min_width=130
        )
        rerun = gr.Button("Run again", visible=False, elem_id="jobs-rerun", scale=0, min_width=140)
        delete = gr.Button("Delete…", visible=False, elem_id="jobs-delete", scale=0, min_width=120)
    with gr.Row(equal_height=False):
        with gr.Column(scale=3):
            detail = gr.HTML(elem_id="jobs-detail", padding=False)
        with gr.Column(scale=2):
            downloads = gr.HTML(elem_id="jobs-downloads", padding=False)
    # Clicked by the page's poll when the jobs change (omni_web/ui/live.py); no timer ticks here.
    timer = gr.Button("Refresh", visible="hidden", elem_id=JOBS_TRIGGER)
    # The chapters come right after the summary; the longer panels follow, folded.
    chapters = gr.HTML(elem_id="jobs-chapters", padding=False, js_on_load=_PLAY_JS)
    levels = gr.HTML(elem_id="jobs-levels-box", padding=False)
    with gr.Column(elem_id="jobs-details") as details:  # other panels attach here (module docstring)
        build_review_panel(ctx, pick)  # omni_web/ui/review.py: flagged chunks of the picked job
        readalong.attach(ctx, pick, timer)  # omni_web/ui/readalong.py: text lit along the audio
        delivery.attach(ctx, pick, timer)  # omni_web/ui/delivery.py: Audiobookshelf, with Retry
    with gr.Column(visible=False, elem_id="jobs-confirm", elem_classes=["ow-dialog"]) as confirm:
        confirm_text = gr.Markdown(padding=True, elem_id="jobs-confirm-text")
        with gr.Row():
            confirm_delete = gr.Button("Delete", variant="stop", elem_id="jobs-confirm-delete")
            confirm_cancel = gr.Button("Keep it", elem_id="jobs-confirm-cancel")
    refs = JobsRefs(
        overview,
        pick,
        cancel,
        resume,
        rerun,
        delete,
        downloads,
        detail,
        details,
        chapters,
        levels,
        confirm,
        confirm_text,
        confirm_delete,
        confirm_cancel,
        gr.State({}),
        timer,
    )
    return replace(refs, on_load=_wire(ctx, refs))


def _changed(new: dict[str, Any], shown: dict[str, Any], key: str, value: Any) -> bool:
    """Record ``value``'s marker under ``key``; True when the page shows something else."""
    new[key] = _digest(repr(value))
    return shown.get(key) != new[key]


def _render(ctx: UiContext, selected: str | None, shown: dict[str, Any] | None) -> list[Any]:
    """Every output of the tab for the ``selected`` job (the newest when it is gone); the parts the
    page already shows (``shown``) are skipped, so an open fold or a playing chapter stays."""
    store = ctx.services.library.jobs
    shown = dict(shown or {})
    jobs = store.list()
    positions = store.queue_positions()
    ids = [job.id for job in jobs]
    asked = selected
    selected = selected if selected in ids else default_job(jobs)
    new: dict[str, Any] = {"job": selected}
    choices = job_choices(jobs)
    same_job = shown.get("job") == selected
    # A tick that only saw the list grow sends the choices, never the value: it may have read the
    # pick just before Generate picked the new job, and would put the old one back.
    if not same_job or selected != asked:
        pick = gr.update(choices=choices, value=selected)
    elif _changed(new, shown, "choices", choices):
        pick = gr.update(choices=choices)
    else:
        pick = gr.skip()
    new["choices"] = _digest(repr(choices))
    job = next((job for job in jobs if job.id == selected), None)
    parts = job_parts(jobs, positions, job, output_root=ctx.settings.output_path(ctx.paths),
                      remote_url=ctx.settings.remote_url, queue_paused=ctx.services.library.queue.paused)
    overview = parts.pop("jobs-table")
    if job is None:
        hidden = gr.update(visible=False)
        return [overview, pick, "", hidden, hidden, hidden, hidden, "", "", "", new]
    state = job.state
    before = shown if same_job else {}
    # A visibility sent to a hidden component makes Gradio's page walk its whole layout again:
    # each button is sent only when it changes.
    seen = (not state.finished, state in (JobState.FAILED, JobState.CANCELLED), state is JobState.DONE,
            state.finished)
    buttons = [
        gr.update(visible=v) if _changed(new, before, f"button{i}", v) else gr.skip()
        for i, v in enumerate(seen)
    ]
    detail = parts.pop("jobs-detail")
    # Sent only when it changed, so an opened levels fold stays open while the job goes on.
    sent = [html if _changed(new, before, key, html) else gr.skip() for key, html in parts.items()]
    return [overview, pick, detail, *buttons, *sent, new]


def _wire_actions(
    ctx: UiContext, refs: JobsRefs, render: Callable[..., list[Any]], outputs: list[Any]
) -> None:
    """Cancel, Resume, Run again and Delete (which asks first) on the selected job."""
    store = ctx.services.library.jobs

    @guarded
    def cancel(selected: str | None, shown: dict[str, Any] | None) -> list[Any]:
        # A queued job is cancelled at once and the page's notifier says so (omni_web/ui/notify.py):
        # only a running job, which stops later, is told here, or one click would toast twice.
        if selected and store.request_cancel(selected).state is JobState.RUNNING:
            gr.Info("Cancel requested: the job stops after the chunks in flight. Resume it later to go on.")
        return render(selected, shown)

    @guarded
    def resume(selected: str | None, shown: dict[str, Any] | None) -> list[Any]:
        if selected:
            store.resume(selected)
        return render(selected, shown)

    @guarded
    def rerun(selected: str | None, shown: dict[str, Any] | None) -> list[Any]:
        if selected:
            # A new row with its own queue time; the finished one stays as it was.
            selected = ctx.services.library.run_again(selected).id
            gr.Info(
                "Queued again as a new job: chunks already rendered are reused; the book is written to the "
                "same file."
            )
        return render(selected, shown)

    @guarded
    def ask_delete(selected: str | None) -> tuple[Any, Any]:
        if not selected:
            return gr.update(visible=False), ""
        plan = ctx.services.library.plan_job_deletion(selected)
        return gr.update(visible=True), plan.summary + "\n\nThis cannot be undone."

    @guarded
    def delete(selected: str | None, shown: dict[str, Any] | None) -> list[Any]:
        if selected:
            plan = ctx.services.library.plan_job_deletion(selected)
            removed = plan.execute()
            gr.Info(f"Deleted '{plan.job.title}' and {removed} file{'s' if removed != 1 else ''}.")
        return [gr.update(visible=False), *render(None, shown)]

    inputs = [refs.pick, refs.shown]
    refs.cancel.click(cancel, inputs, outputs, api_name="job_cancel")
    refs.resume.click(resume, inputs, outputs, api_name="job_resume")
    refs.rerun.click(rerun, inputs, outputs, api_name="job_rerun")
    refs.delete.click(ask_delete, [refs.pick], [refs.confirm, refs.confirm_text], api_name="job_delete_plan")
    refs.confirm_delete.click(delete, inputs, [refs.confirm, *outputs], api_name="job_delete")
    refs.confirm_cancel.click(lambda: gr.update(visible=False), None, refs.confirm, api_visibility="private")


def _wire(ctx: UiContext, refs: JobsRefs) -> OnLoad:
    outputs = [
        refs.overview,
        refs.pick,
        refs.detail,
        refs.cancel,
        refs.resume,
        refs.rerun,
        refs.delete,
        refs.downloads,
        refs.chapters,
        refs.levels,
        refs.shown,
    ]

    def render(selected: str | None, shown: dict[str, Any] | None) -> list[Any]:
        return _render(ctx, selected, shown)

    inputs = [refs.pick, refs.shown]
    refs.timer.click(
        guarded(render),
        inputs,
        outputs,
        show_progress="hidden",
        api_name="jobs_refresh",
        concurrency_limit=None,
    )
    refs.pick.input(guarded(render), inputs, outputs, api_visibility="private")
    _wire_actions(ctx, refs, render, outputs)
    return OnLoad(guarded(lambda: render(None, None)), [], outputs)
