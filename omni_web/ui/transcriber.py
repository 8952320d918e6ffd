"""The Settings tab's transcription-model box: whether the faster-whisper weights of the chosen
size are in the Hugging Face cache, and Install / Cancel running as a background task.

The download runs in the TaskRunner (kind ``transcriber``) with byte progress, so a refresh or a
second browser re-attaches to it; when it ends the box reads the cache again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from omni_web.models import hub_cache_dir
from omni_web.tasks import TaskHandle
from omni_web.ui.context import TASK_TRANSCRIBER, OnLoad, UiContext
from omni_web.ui.errors import guarded
from omni_web.ui.taskpanel import TaskPanel, build_task_panel, task_view
from omni_web.ui.widgets import badge, esc
from omni_web.voices import install_whisper_model, whisper_local_dir, whisper_repo_id

__all__ = ["TranscriberRefs", "build_transcriber_box", "transcriber_status_html", "wire_transcriber_box"]


@dataclass(frozen=True, slots=True)
class TranscriberRefs:
    """The components of the transcription-model box."""

    status: gr.HTML
    install: gr.Button
    cancel: gr.Button
    panel: TaskPanel
    timer: gr.Timer


def build_transcriber_box() -> TranscriberRefs:
    """Create the box (call inside the Settings tab, under the transcription-model dropdown)."""
    status = gr.HTML(elem_id="settings-whisper-status", padding=False)
    with gr.Row():
        install = gr.Button("Install", size="sm", variant="primary", elem_id="settings-whisper-install")
        cancel = gr.Button("Cancel", size="sm", variant="stop", elem_id="settings-whisper-cancel")
    panel = build_task_panel(
        log_label="Transcription model download", elem_prefix="settings-whisper", lines=4
    )
    return TranscriberRefs(status, install, cancel, panel, gr.Timer(1.0))


def transcriber_status_html(ctx: UiContext, size: str | None) -> str:
    """``installed`` / ``not downloaded`` for faster-whisper ``size`` in the app's HF cache."""
    if not size:
        return ""
    repo = whisper_repo_id(size)
    folder = whisper_local_dir(size, cache_dir=ctx.hf_cache_dir)
    if folder is not None:
        line = f"{badge('installed')} faster-whisper <b>{esc(size)}</b> <code>{esc(folder)}</code>"
    else:
        line = (
            f"{badge('not downloaded', tone='wait')} faster-whisper <b>{esc(size)}</b> ({esc(repo)}): press "
            "Install to download it; Transcribe in the Generate tab needs it."
        )
    saved = ctx.settings.transcription_model
    if size.strip() != saved:
        until = f"Transcripts use the saved size, {esc(saved)}, until you save this one."
        line += f'<div class="ow-dim">{until}</div>'
    return f'<div class="ow-whisper">{line}</div>'


def _start_install(ctx: UiContext, size: str) -> None:
    repo = whisper_repo_id(size)

    def work(handle: TaskHandle) -> str:
        handle.log(f"Downloading faster-whisper '{size}' ({repo}) into {hub_cache_dir(ctx.hf_cache_dir)}")
        folder = install_whisper_model(
            size,
            progress=lambda p: handle.progress(p.fraction, p.summary),
            cancel=handle.cancel_event,
            cache_dir=ctx.hf_cache_dir,
            endpoint=ctx.hf_endpoint,
        )
        handle.log(f"Installed faster-whisper '{size}' at {folder}")
        return str(folder)

    ctx.tasks.start(TASK_TRANSCRIBER, f"Downloading faster-whisper '{size}'", work)


def wire_transcriber_box(ctx: UiContext, refs: TranscriberRefs, size: gr.Dropdown) -> OnLoad:
    """Connect the box to the size dropdown; returns what a page open renders (given the size)."""
    panel = refs.panel
    task_out = [panel.status, panel.log, panel.seen]

    def task_outputs(seen: dict[str, Any] | None) -> list[Any]:
        view = task_view(ctx.tasks.snapshot(TASK_TRANSCRIBER), seen)
        return [view.status_html, view.log_text, view.seen]

    @guarded
    def load(chosen: str | None) -> list[Any]:
        return [transcriber_status_html(ctx, chosen or ctx.settings.transcription_model), *task_outputs(None)]

    @guarded
    def tick(chosen: str | None, seen: dict[str, Any] | None) -> list[Any]:
        view = task_view(ctx.tasks.snapshot(TASK_TRANSCRIBER), seen)
        status = transcriber_status_html(ctx, chosen) if view.just_finished else gr.skip()
        return [status, view.status_html, view.log_text, view.seen]

    @guarded
    def install(chosen: str | None, seen: dict[str, Any] | None) -> list[Any]:
        if not chosen:
            raise gr.Error("Choose a transcription model size first.")
        if whisper_local_dir(chosen, cache_dir=ctx.hf_cache_dir) is not None:
            gr.Info(f"faster-whisper '{chosen}' is already installed.")
        else:
            _start_install(ctx, chosen)
        return [transcriber_status_html(ctx, chosen), *task_outputs(seen)]

    @guarded
    def cancel(seen: dict[str, Any] | None) -> list[Any]:
        if not ctx.tasks.cancel(TASK_TRANSCRIBER):
            gr.Info("No transcription model download is running.")
        return task_outputs(seen)

    size.change(
        guarded(lambda chosen: transcriber_status_html(ctx, chosen)),
        [size],
        refs.status,
        api_name="transcriber_status",
        show_progress="hidden",
    )
    refs.install.click(
        install,
        [size, panel.seen],
        [refs.status, *task_out],
        api_name="transcriber_install",
        concurrency_limit=1,
    )
    refs.cancel.click(cancel, [panel.seen], task_out, api_name="transcriber_cancel")
    refs.timer.tick(
        tick, [size, panel.seen], [refs.status, *task_out], show_progress="hidden", api_visibility="private"
    )
    return OnLoad(load, [size], [refs.status, *task_out])
