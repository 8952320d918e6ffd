"""Queue tab: the line of queued books in run order, and its controls.

Move the picked job to the top, up, down or to the bottom; pause or release it; set its priority;
cancel it; pause the whole queue; switch samples first on. Many books can be queued at once with a
preset (one job each). Every control calls :class:`~omni_web.jobs.QueueControl` or the services,
the same functions the API and ``python -m omni_web queue`` use; a timer re-reads the store.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr

from omni_web.catalog import CATALOG
from omni_web.client import VoiceKind
from omni_web.errors import OmniWebError
from omni_web.jobs import Job, JobState
from omni_web.library import inbox_refusals
from omni_web.pipeline import ConvertRequest
from omni_web.ui import opds_import
from omni_web.ui.context import OnLoad, UiContext
from omni_web.ui.errors import guarded
from omni_web.ui.labels import model_name

__all__ = ["QueueRefs", "build", "queue_rows"]

_TICK_S = 3.0
HEADERS = ["#", "Title", "Voice", "Priority", "Held", "Sample", "Job"]
_MOVES = (("top", "⤒ Top"), ("up", "↑ Up"), ("down", "↓ Down"), ("bottom", "⤓ Bottom"))
_SAMPLE_MINUTES = "Sample length, minutes (0: the first chapter; else whole chapters)"


@dataclass(frozen=True, slots=True)
class QueueRefs:
    """The Queue tab's components (tests and the browser tier find them by elem_id)."""

    status: gr.Markdown
    table: gr.Dataframe
    pick: gr.Dropdown
    on_load: OnLoad | None = None


def _voice(job: Job) -> str:
    request = ConvertRequest.read(job.params)
    voice = request.voice
    # A built-in speaker as people write it ("Uncle_Fu" -> "Uncle Fu").
    speaker = voice.kind is VoiceKind.SPEAKER and voice.name
    said = " ".join(voice.name.replace("_", " ").split()) if speaker else voice.label
    return f"{said} · {model_name(request.model_key)}" if request.model_key else said


def _refusals_md(ctx: UiContext) -> str:
    """The inbox's newest refusals, so a dropped file that became no job is seen here, not only on disk."""
    refused = inbox_refusals(ctx.settings.inbox_path(ctx.paths))
    if not refused:
        return ""
    lines = "\n".join(f"- `{name}`: {why}" for name, why in refused)
    return (
        f"\n\n**Not queued from the inbox** (newest first; the files are in its `failed/` folder):\n{lines}"
    )


def queue_rows(queued: list[Job], running: Sequence[Job] = ()) -> list[list[Any]]:
    """One table row per running job ("running"), then per queued job in run order, with its voice."""
    rows: list[list[Any]] = [
        ["running", job.title, _voice(job), job.priority, "", "made" if job.sample_done else "", job.id]
        for job in running
    ]
    return rows + [
        [
            place,
            job.title,
            _voice(job),
            job.priority,
            "paused" if job.paused else "",
            "made" if job.sample_done else "",
            job.id,
        ]
        for place, job in enumerate(queued, start=1)
    ]


def _preset_names(ctx: UiContext) -> list[str]:
    try:
        return [p.name for p in ctx.services.library.presets.presets()]
    except (OmniWebError, OSError):  # a damaged presets file is reported in Settings; the queue still shows
        return []


@dataclass(frozen=True, slots=True)
class _JobButtons:
    """The buttons that act on the picked job."""

    moves: dict[str, gr.Button]
    hold: gr.Button
    release: gr.Button
    set_priority: gr.Button
    cancel: gr.Button


def _job_buttons() -> _JobButtons:
    """Create the picked job's buttons (inside a ``gr.Row``)."""
    moves = {where: gr.Button(label, size="sm", elem_id=f"queue-{where}") for where, label in _MOVES}
    return _JobButtons(
        moves=moves,
        hold=gr.Button("Pause job", size="sm", elem_id="queue-hold"),
        release=gr.Button("Resume job", size="sm", elem_id="queue-release"),
        set_priority=gr.Button("Set priority", size="sm", elem_id="queue-set-priority"),
        cancel=gr.Button("Cancel job", size="sm", variant="stop", elem_id="queue-cancel"),
    )


def _renderer(ctx: UiContext) -> Callable[..., tuple[Any, ...]]:
    """The function that reads the queue into the status line, the table, the job menu and the switch."""

    def render(keep: str | None = None, tick: bool = False) -> tuple[Any, ...]:
        state = ctx.services.library.queue.status()
        running_or_paused = "paused" if state.paused else "running"
        samples_first = "on" if state.samples_first else "off"
        line = (
            f"**Queue {running_or_paused}** · {len(state.queued)} waiting · samples first {samples_first}"
            + _refusals_md(ctx)
        )
        queued = enumerate(state.queued, start=1)
        choices = [(f"#{place} {job.title} ({job.id})", job.id) for place, job in queued]
        value = keep if keep in {job.id for job in state.queued} else None
        # A tick leaves the value alone: its answer may arrive after the user picked another job.
        leave_value = tick and (value or not keep)
        menu = gr.update(choices=choices) if leave_value else gr.update(choices=choices, value=value)
        listed = ctx.services.library.jobs.list(limit=50)
        running = [job for job in listed if job.state is JobState.RUNNING]
        return line, queue_rows(list(state.queued), running), menu, state.samples_first

    return render


def _wire_job_buttons(
    ctx: UiContext, buttons: _JobButtons, priority: gr.Number, outputs: list[Any], render: Callable
) -> None:
    """Each job button calls the queue with the picked job, then shows the queue again."""
    pick = outputs[2]
    queue = ctx.services.library.queue

    def act(fn):
        @guarded
        def handler(job_id: str | None, *extra: Any) -> tuple[Any, ...]:
            if not job_id:
                raise gr.Error("Pick a queued job first.")
            fn(job_id, *extra)
            return render(job_id)

        return handler

    for where, button in buttons.moves.items():
        move = act(lambda job_id, where=where: queue.move(job_id, where))
        button.click(move, [pick], outputs, api_name=f"queue_{where}")
    buttons.hold.click(act(queue.pause_job), [pick], outputs, api_name="queue_hold")
    buttons.release.click(act(queue.resume_job), [pick], outputs, api_name="queue_release")
    reprioritise = act(lambda job_id, n: queue.set_priority(job_id, int(n or 0)))
    buttons.set_priority.click(reprioritise, [pick, priority], outputs, api_name="queue_priority")
    cancel = act(ctx.services.library.jobs.request_cancel)
    buttons.cancel.click(cancel, [pick], outputs, api_name="queue_cancel")


def _wire_queue_switches(
    ctx: UiContext, pause_all: gr.Button, resume_all: gr.Button, outputs: list[Any], render: Callable
) -> None:
    """Pause and resume the whole queue, and samples first on or off."""
    pick, samples = outputs[2], outputs[3]
    queue = ctx.services.library.queue

    def switch(fn):
        def handler(keep: str | None) -> tuple[Any, ...]:
            fn()
            return render(keep)

        return guarded(handler)

    pause_all.click(switch(queue.pause), [pick], outputs, api_name="queue_pause_all")
    resume_all.click(switch(queue.resume), [pick], outputs, api_name="queue_resume_all")

    @guarded
    def samples_first(on: bool, keep: str | None) -> tuple[Any, ...]:
        queue.set_samples_first(bool(on))
        return render(keep)

    samples.input(samples_first, [samples, pick], outputs, api_name="queue_samples")


def build(ctx: UiContext) -> QueueRefs:
    """Create the Queue tab's components and wire them (inside a ``gr.Tab``)."""
    status = gr.Markdown(elem_id="queue-status")
    table = gr.Dataframe(headers=HEADERS, interactive=False, elem_id="queue-table", wrap=True)
    with gr.Row():
        pick = gr.Dropdown(label="Queued job", choices=[], elem_id="queue-pick", scale=3)
        priority = gr.Number(label="Priority (higher runs first)", precision=0, value=0,
                             elem_id="queue-priority", scale=1)
    with gr.Row():
        buttons = _job_buttons()
    with gr.Row():
        pause_all = gr.Button("Pause queue", elem_id="queue-pause-all")
        resume_all = gr.Button("Resume queue", elem_id="queue-resume-all")
        samples = gr.Checkbox(label="Samples first: every book's first chapter before any full book",
                              elem_id="queue-samples")
        minutes = gr.Number(label=_SAMPLE_MINUTES, value=0, minimum=0, precision=0,
                            elem_id="queue-sample-minutes")
    outputs = [status, table, pick, samples]
    render = _renderer(ctx)
    _wire_job_buttons(ctx, buttons, priority, outputs, render)
    _wire_queue_switches(ctx, pause_all, resume_all, outputs, render)

    preset = _many_books(ctx, pick, outputs, render)
    opds_import.build(ctx, preset)
    queue = ctx.services.library.queue
    set_minutes = guarded(lambda n: queue.set_sample_minutes(float(n or 0)))
    minutes.change(set_minutes, [minutes], None, api_name="queue_sample_minutes")
    timer = gr.Timer(_TICK_S)
    timer.tick(guarded(lambda keep: render(keep, tick=True)), [pick], outputs, show_progress="hidden",
               api_visibility="private")

    def load() -> tuple[Any, ...]:
        presets = gr.update(choices=[""] + _preset_names(ctx), value="")
        return (*render(), presets, queue.sample_minutes)

    return QueueRefs(status, table, pick, on_load=OnLoad(load, [], [*outputs, preset, minutes]))


def _many_books(ctx: UiContext, pick: gr.Dropdown, outputs: list[Any], render) -> gr.Dropdown:
    """'Queue many books': one job per file with a preset (or the rules); returns the preset menu."""
    with gr.Accordion("Queue many books", open=False, elem_id="queue-many") as many:
        books = gr.File(label="Books (one job each)", file_count="multiple", elem_id="queue-books")
        with gr.Row():
            preset = gr.Dropdown(
                label="Preset (empty: the model here, else the rules in Settings)",
                choices=[],
                elem_id="queue-preset",
                allow_custom_value=True,
            )  # checked by submit_book
            model = gr.Dropdown(
                label="Model (with its default voice; no preset needed)",
                choices=[("", "")] + [(entry.label, entry.key) for entry in CATALOG],
                value="",
                elem_id="queue-model",
            )
        queue_books = gr.Button("Queue them", variant="primary", elem_id="queue-books-go")
        report = gr.Markdown(elem_id="queue-books-report")

    @guarded
    def queue_many(
        files: list[str] | None, preset_name: str | None, model_key: str | None, keep: str | None
    ) -> tuple[Any, ...]:
        if not files:
            raise gr.Error("Choose the books to queue first.")
        outcomes = ctx.services.library.submit_many(
            [Path(f) for f in files], preset=preset_name or None, model_key=model_key or None
        )
        lines = [
            f"- {name}: queued as {got.id}" if isinstance(got, Job) else f"- {name}: **not queued**: {got}"
            for name, got in outcomes
        ]
        queued = sum(isinstance(got, Job) for _, got in outcomes)
        return (f"{queued} of {len(outcomes)} books queued.\n\n" + "\n".join(lines), None, *render(keep))

    queue_books.click(
        queue_many, [books, preset, model, pick], [report, books, *outputs], api_name="queue_books"
    )
    # A preset saved on Generate since the page opened shows when the form is opened (no reload).
    many.expand(
        guarded(lambda: gr.update(choices=[""] + _preset_names(ctx))), None, preset, api_visibility="private"
    )
    return preset
