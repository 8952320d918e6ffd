"""Generate → "Save as preset": the form's model, voice (or cast), read-along and chapter policy
saved under a name, for uploads, the inbox, the API and the rules (omni_web/library/presets.py)."""

from __future__ import annotations

import dataclasses
from typing import Any

import gradio as gr

from omni_web.library import Preset
from omni_web.ui.context import UiContext
from omni_web.ui.errors import guarded
from omni_web.ui.submit_flow import build_request

__all__ = ["build"]

POLICIES = [("Default chapters (front and back matter left out)", "default"), ("Every chapter", "all")]


def build(ctx: UiContext, form: list[Any]) -> gr.Button:
    """A name box and a button under the Generate form; ``form`` are build_request's inputs."""
    with gr.Accordion("Save these settings as a preset", open=False, elem_id="gen-preset"):
        with gr.Row():
            name = gr.Textbox(
                label="Preset name", placeholder="e.g. Night reader", elem_id="gen-preset-name", scale=2
            )
            policy = gr.Dropdown(
                label="Chapters", choices=POLICIES, value="default", elem_id="gen-preset-chapters"
            )
        save = gr.Button("Save preset", size="sm", elem_id="gen-preset-save")
        status = gr.Markdown(elem_id="gen-preset-status")

    @guarded
    def store(label: str, chapters: str, *values: Any) -> str:
        if not (label or "").strip():
            raise gr.Error("Give the preset a name first.")
        preset = Preset.from_request(label, build_request(ctx, *values))
        saved = ctx.services.library.presets.save(dataclasses.replace(preset, chapters=chapters or "default"))
        where = "Pick it in Queue → Queue many books or in Settings."
        return f"Saved preset **{saved.name}** ({saved.model_key}). {where}"

    save.click(store, [name, policy, *form], status, api_name="preset_from_generate")
    return save
