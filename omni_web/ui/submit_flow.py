"""What Generate and its two questions do: build the request from the form, ask before queueing
when it needs an answer, and queue the job.

The questions: a job for this exact request exists (open it instead of queueing a twin); the
chunk size is over the model's per-request window (Higgs: 80 words: set it to the cap, keep it,
or cancel); the job needs another model than the one loaded (it will be stopped).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import gradio as gr

from omni_web.catalog import get_entry
from omni_web.deliver.metadata import metadata_overrides
from omni_web.errors import BookError, ChapterSelectionError
from omni_web.jobs import Job
from omni_web.models import installed_keys
from omni_web.pipeline import ConvertRequest, chunk_size_conflict
from omni_web.pipeline.admission import model_switch_note, require_runnable
from omni_web.ui.cast import request_cast
from omni_web.ui.context import UiContext
from omni_web.ui.errors import guarded
from omni_web.ui.voices import voice_choice
from omni_web.ui.widgets import esc

__all__ = ["CHUNK_AT", "SubmitRefs", "build_request", "wire_submit"]

CHUNK_AT = 6  # the chunk size's place in the form's values (the read-along box comes after it)
_MODEL_AT = 2


@dataclass(frozen=True, slots=True)
class SubmitRefs:
    """The Generate tab's components the submit flow reads and updates (a part of its refs)."""

    generate: gr.Button
    chunk_words: gr.Slider
    notice: gr.Markdown
    submitted: gr.Textbox
    dialog: gr.Column
    dialog_text: gr.Markdown
    dialog_clamp: gr.Button
    dialog_keep: gr.Button
    dialog_cancel: gr.Button
    confirm: gr.Column
    confirm_text: gr.Markdown
    confirm_go: gr.Button
    confirm_open: gr.Button
    confirm_cancel: gr.Button

    @classmethod
    def of(cls, refs: Any) -> SubmitRefs:
        """The same-named components of a tab's refs (``GenerateRefs``)."""
        return cls(**{f.name: getattr(refs, f.name) for f in fields(cls)})


def build_request(
    ctx: UiContext,
    book: dict | None,
    chapters: list[int],
    model: str,
    voice: str | None,
    transcript: str,
    instructions: str,
    chunk_words: float,
    readalong: bool = False,
) -> ConvertRequest:
    """The request the form asks for (BookError / ChapterSelectionError / VoiceError when it cannot)."""
    if not book:
        raise BookError("Upload a book first.")
    if not chapters:
        raise ChapterSelectionError("No chapter is selected; check at least one.")
    choice = voice_choice(ctx, model, voice, transcript, instructions)
    # The Book details the user corrected (omni_web/ui/book_metadata.py keeps them in the book state).
    metadata = metadata_overrides(book.get("edits") or {}, book.get("meta") or {})
    return ConvertRequest(
        book_path=Path(book["path"]),
        model_key=model,
        voice=choice,
        chapters=tuple(sorted(int(n) for n in chapters)),
        chunk_words=int(chunk_words),
        cast=request_cast(ctx, Path(book["path"]), model),
        readalong=bool(readalong),
        metadata=metadata,
    )


def _queued(ctx: UiContext, job: Job) -> str:
    position = ctx.services.library.jobs.queue_position(job.id)
    where = "it starts now" if position <= 1 else f"position {position} in the queue"
    return f"Queued **{esc(job.title)}** as job `{job.id}` ({where}). Follow it in the **Jobs** tab."


def _answer(
    notice: Any = "", job_id: Any = "", *, dialog: Any = None, confirm: Any = None, chunk: Any = None
) -> tuple[Any, ...]:
    """The submit outputs: ``dialog`` = (text, clamp label) shows the chunk question, ``confirm`` =
    (text, show "Queue it", show "Open that job") the other one; both hidden otherwise."""
    dialog_part = (
        (gr.update(visible=True), dialog[0], gr.update(value=dialog[1]))
        if dialog
        else (gr.update(visible=False), gr.skip(), gr.skip())
    )
    confirm_part = (
        (gr.update(visible=True), confirm[0], gr.update(visible=confirm[1]), gr.update(visible=confirm[2]))
        if confirm
        else (gr.update(visible=False), gr.skip(), gr.skip(), gr.skip())
    )
    return (notice, job_id, *dialog_part, gr.skip() if chunk is None else chunk, *confirm_part)


def _twin_question(twin: Job) -> tuple[Any, ...]:
    text = (
        f"A job for this exact request already exists: **{esc(twin.title)}** (job `{twin.id}`, "
        f"{twin.state.value}). Open it instead of queueing a twin? In the Jobs tab it can be resumed "
        "or run again; to compare, pick another voice, model, chapters or chunk size."
    )
    return _answer(confirm=(text, False, True))


def wire_submit(ctx: UiContext, refs: SubmitRefs, form: list[Any]) -> tuple[Any, ...]:
    """Wire Generate, the chunk question's and the confirm's buttons; returns their events."""
    submit_out = [refs.notice, refs.submitted, refs.dialog, refs.dialog_text, refs.dialog_clamp,
                  refs.chunk_words,
                  refs.confirm, refs.confirm_text, refs.confirm_go, refs.confirm_open]

    def submit(values: tuple[Any, ...], chunk_words: int, *, keep_over_cap: bool = False) -> tuple[Any, ...]:
        request = replace(build_request(ctx, *values), chunk_words=chunk_words, keep_over_cap=keep_over_cap)
        job = ctx.services.library.submit_conversion(request)
        return _answer(_queued(ctx, job), job.id, chunk=chunk_words)

    @guarded
    def generate(*values: Any) -> tuple[Any, ...]:
        # The book is read and the jobs scanned once: the twin found here and the name claimed
        # here are the ones queued below when no question is asked.
        prepared = ctx.services.library.prepare(build_request(ctx, *values))
        if prepared.twin is not None:
            return _twin_question(prepared.twin)
        request = prepared.request
        entry = get_entry(request.model_key)
        status = ctx.services.server.status()
        remote_url = ctx.settings.remote_url
        require_runnable(entry, downloaded=installed_keys(cache_dir=ctx.hf_cache_dir), status=status,
                         remote_url=remote_url)
        switch = model_switch_note(entry, status=status, remote_url=remote_url)
        size = int(values[CHUNK_AT])
        cap = chunk_size_conflict(entry, size)
        if cap is not None:
            text = (f"**{entry.label}** voices at most **{cap} words** per request; longer chunks get cut "
                    "off "
                    f"mid-sentence. Your chunk size is **{size}**.\n\nSet it to {cap} for this run, "
                    f"keep {size} (audio may cut off), or cancel?")
            return _answer(dialog=(text + (f"\n\n{switch}" if switch else ""), f"Set Chunk to {cap}"))
        if switch is not None:
            return _answer(confirm=(switch + "\n\nQueue the job?", True, False))
        job = ctx.services.library.enqueue(prepared)
        return _answer(_queued(ctx, job), job.id, chunk=size)

    @guarded
    def confirmed(*values: Any) -> tuple[Any, ...]:
        return submit(values, int(values[CHUNK_AT]))

    @guarded
    def open_twin(*values: Any) -> tuple[Any, ...]:
        twin = ctx.services.library.find_twin(build_request(ctx, *values))
        if twin is None:
            return _answer("That job is gone; press Generate again to queue a new one.")
        return _answer(f"Opened job `{twin.id}` ({esc(twin.title)}) in the **Jobs** tab.", twin.id)

    @guarded
    def clamp(*values: Any) -> tuple[Any, ...]:
        size = int(values[CHUNK_AT])
        return submit(values, chunk_size_conflict(get_entry(values[_MODEL_AT]), size) or size)

    @guarded
    def keep(*values: Any) -> tuple[Any, ...]:
        # The user accepted that audio may cut off: the chunker must not clamp to the model's cap.
        return submit(values, int(values[CHUNK_AT]), keep_over_cap=True)

    events = (
        refs.generate.click(generate, form, submit_out, api_name="generate", concurrency_limit=4),
        refs.dialog_clamp.click(clamp, form, submit_out, api_name="generate_clamped", concurrency_limit=4),
        refs.dialog_keep.click(keep, form, submit_out, api_name="generate_keep", concurrency_limit=4),
        refs.confirm_go.click(confirmed, form, submit_out, api_name="generate_confirmed",
                              concurrency_limit=4),
        refs.confirm_open.click(open_twin, form, submit_out, api_name="generate_open_twin"),
    )
    refs.dialog_cancel.click(lambda: gr.update(visible=False), None, refs.dialog, api_visibility="private")
    refs.confirm_cancel.click(lambda: gr.update(visible=False), None, refs.confirm, api_visibility="private")
    return events
