"""Settings tab: the optional LLM that labels a cast's unsure quotes (URL, model, key, concurrency).

Thin over :class:`omni_web.llm.ChatClient`: Test sends one tiny request to what is typed (saved
or not) and says who answered, how fast and at what cost.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import gradio as gr

from omni_web.llm import ChatClient
from omni_web.settings import Settings
from omni_web.ui.context import UiContext
from omni_web.ui.errors import guarded

__all__ = ["build"]


def _typed(settings: Settings, url: str, model: str, key: str, concurrency: float | None,
           timeout: float | None) -> Settings:
    return dataclasses.replace(
        settings,
        llm_url=(url or "").strip(),
        llm_model=(model or "").strip(),
        llm_api_key=(key or "").strip(),
        llm_concurrency=int(concurrency or settings.llm_concurrency),
        llm_timeout_s=float(timeout or settings.llm_timeout_s),
    ).validate()


def build(ctx: UiContext) -> tuple[list[Any], Callable[[], list[Any]]]:
    """The section's components and wiring; returns the components a page load fills and their values."""
    with gr.Accordion("LLM for the cast (optional)", open=False, elem_id="settings-llm"):
        gr.Markdown(
            "Any OpenAI-compatible chat endpoint (SGLang, vLLM, llama.cpp, Ollama, a hosted API). "
            "It only labels who speaks the quotes the rules are unsure of, and how; the book's text "
            "is never sent back or changed."
        )
        url = gr.Textbox(
            label="Endpoint URL", placeholder="http://127.0.0.1:30000/v1", elem_id="settings-llm-url"
        )
        model = gr.Textbox(
            label="Model",
            placeholder="as the server names it, e.g. Qwen/Qwen2.5-7B-Instruct",
            elem_id="settings-llm-model",
        )
        key = gr.Textbox(
            label="API key", type="password", elem_id="settings-llm-key", info="Empty for a local server."
        )
        with gr.Row():
            concurrency = gr.Number(
                label="Requests at once",
                precision=0,
                minimum=1,
                maximum=64,
                elem_id="settings-llm-concurrency",
            )
            timeout = gr.Number(
                label="Timeout per request (seconds)", precision=0, minimum=1, elem_id="settings-llm-timeout"
            )
        with gr.Row():
            test = gr.Button("Test", elem_id="settings-llm-test")
            save = gr.Button("Save LLM settings", variant="primary", elem_id="settings-llm-save")
        status = gr.Markdown(elem_id="settings-llm-status")
    fields = [url, model, key, concurrency, timeout]

    @guarded
    def run_test(*values: Any) -> str:
        return ChatClient.from_settings(_typed(ctx.settings, *values)).probe()

    @guarded
    def run_save(*values: Any) -> str:
        settings = _typed(ctx.settings, *values)
        ctx.save_settings(settings)
        return (
            f"Saved. The cast's LLM pass uses {settings.llm_url}."
            if settings.llm_url
            else "Saved. No LLM: the cast uses its rules only."
        )

    test.click(run_test, fields, status, api_name="llm_test", concurrency_limit=2)
    save.click(run_save, fields, status, api_name="llm_save")

    def saved() -> list[Any]:
        now = ctx.settings
        return [now.llm_url, now.llm_model, now.llm_api_key, now.llm_concurrency, now.llm_timeout_s]

    return fields, saved
