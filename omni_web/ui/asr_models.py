"""The Models tab's QA speech-recognition box: the offered faster-whisper sizes, their state in the
Hugging Face cache (size on disk), and Download / Remove running as a background task.

Attached under the TTS catalog with one call (``build_asr_models_box(ctx)``). Downloads and
removals go through the same models layer as the TTS models (omni_web/qa/asr_models.py), in the
transcriber task slot, so a refresh or a second browser re-attaches to a running download.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from omni_web.qa.asr_models import QA_ASR_MODELS, asr_model_rows, download_asr_model, plan_asr_removal
from omni_web.tasks import TaskHandle
from omni_web.ui.context import TASK_TRANSCRIBER, UiContext
from omni_web.ui.errors import guarded
from omni_web.ui.taskpanel import build_task_panel, task_view
from omni_web.ui.widgets import badge, esc, table

__all__ = ["asr_models_html", "build_asr_models_box"]


def asr_models_html(ctx: UiContext) -> str:
    """The offered QA models: state, size (on disk or to download), GPU memory, what each is for."""
    rows = []
    for model, cached in asr_model_rows(cache_dir=ctx.hf_cache_dir):
        state = badge(cached.status_str) if cached else badge("not installed", tone="mute")
        size = cached.size_str if cached else f"~{model.download_mb} MB"
        chosen = " (Settings' QA model)" if model.size == ctx.settings.qa_model else ""
        rows.append(
            (esc(model.size + chosen), state, esc(size), esc(f"~{model.cuda_mb} MB"), esc(model.note))
        )
    return table(["QA model", "Status", "Size", "GPU memory", "Notes"], rows, raw_columns=(1,))


def _start(ctx: UiContext, title: str, work: Any) -> None:
    ctx.tasks.start(TASK_TRANSCRIBER, title, work)


def build_asr_models_box(ctx: UiContext) -> None:
    """Create and wire the box (inside the Models tab)."""
    gr.Markdown(
        "### QA speech-recognition models\nUsed by `--qa asr` (Settings: QA model). "
        "They run on the GPU when they fit beside the TTS server, else on the CPU."
    )
    details = gr.HTML(lambda: asr_models_html(ctx), elem_id="models-asr-details", padding=False)
    with gr.Row():
        pick = gr.Dropdown(
            [m.size for m in QA_ASR_MODELS],
            value=QA_ASR_MODELS[0].size,
            label="QA model",
            elem_id="models-asr-pick",
            scale=2,
        )
        download = gr.Button("Download", variant="primary", elem_id="models-asr-download", scale=1)
        remove = gr.Button("Remove", variant="stop", elem_id="models-asr-remove", scale=1)
    panel = build_task_panel(log_label="QA model download", elem_prefix="models-asr", lines=4)
    timer = gr.Timer(1.0)
    task_out = [panel.status, panel.log, panel.seen]

    def outputs(seen: dict[str, Any] | None) -> list[Any]:
        view = task_view(ctx.tasks.snapshot(TASK_TRANSCRIBER), seen)
        return [
            asr_models_html(ctx) if view.just_finished else gr.skip(),
            view.status_html,
            view.log_text,
            view.seen,
        ]

    def do_download(size: str, seen: dict[str, Any] | None) -> list[Any]:
        def work(handle: TaskHandle) -> str:
            handle.log(f"Downloading faster-whisper '{size}' for QA")
            folder = download_asr_model(
                size,
                progress=lambda p: handle.progress(p.fraction, p.summary),
                cancel=handle.cancel_event,
                cache_dir=ctx.hf_cache_dir,
                endpoint=ctx.hf_endpoint,
            )
            return f"Installed faster-whisper '{size}' at {folder}"

        _start(ctx, f"Downloading faster-whisper '{size}'", work)
        return outputs(seen)

    def do_remove(size: str, seen: dict[str, Any] | None) -> list[Any]:
        plan = plan_asr_removal([size], cache_dir=ctx.hf_cache_dir)
        if plan.is_empty:
            gr.Info(f"faster-whisper '{size}' is not in the cache.")
            return outputs(seen)

        def work(handle: TaskHandle) -> str:
            handle.log(plan.summary)
            plan.execute()
            return f"Removed faster-whisper '{size}', freeing {plan.expected_freed_str}"

        _start(ctx, f"Removing faster-whisper '{size}'", work)
        return outputs(seen)

    out = [details, *task_out]
    download.click(
        guarded(do_download), [pick, panel.seen], out, api_name="models_asr_download", concurrency_limit=1
    )
    remove.click(
        guarded(do_remove), [pick, panel.seen], out, api_name="models_asr_remove", concurrency_limit=1
    )
    timer.tick(guarded(outputs), [panel.seen], out, show_progress="hidden", api_visibility="private")
