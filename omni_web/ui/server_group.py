"""Server tab, scale-out part: which GPUs a start uses, worker machines on the LAN, and the group table.

A start with two or more GPUs (or any worker URL) runs one `sgl-omni serve` per GPU behind the
SGLang-Omni router (omni_web.server.group); the table shows the router and each worker with its
GPU, URL, state, requests routed, failures and log. The choices are saved in the settings, so
the CLI (``server start`` without ``--gpus``) and jobs use the same ones.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import gradio as gr

from omni_web.server import ServerStatus
from omni_web.server.gpus import parse_gpu_spec
from omni_web.ui.context import UiContext
from omni_web.ui.errors import guarded
from omni_web.ui.widgets import badge, esc, table

__all__ = ["GroupRefs", "build", "members_html", "wire"]


@dataclass(frozen=True, slots=True)
class GroupRefs:
    """The scale-out components."""

    gpus: gr.Textbox
    worker_urls: gr.Textbox
    save: gr.Button
    found: gr.Markdown


def members_html(status: ServerStatus) -> str:
    """The router and each worker of a group as a table ("" for a single server)."""
    if not status.members:
        return ""
    rows = []
    for member in status.members:
        tone = (
            "ok"
            if member.state == "healthy"
            else ("bad" if member.state in ("down", "unhealthy") else "busy")
        )
        rows.append(
            (
                member.role,
                f"GPU {member.gpu}" if member.gpu else ("-" if member.role == "router" else "remote"),
                member.url,
                badge(member.state, tone=tone),
                "-" if member.routed is None else str(member.routed),
                "-" if member.failed is None else str(member.failed),
                "-" if member.pid is None else str(member.pid),
                f"<code>{esc(member.log_path.name)}</code>" if member.log_path else "-",
                member.note,
            )
        )
    headers = ("Role", "GPU", "URL", "State", "Routed", "Failed", "PID", "Log", "Note")
    return f'<div id="server-group-members">{table(headers, rows, raw_columns=(3, 7))}</div>'


def _found(ctx: UiContext) -> str:
    probe = ctx.probe_gpus()
    if not probe.gpus:
        return (
            "NVML sees no GPU here; explicit ids (e.g. `0,1`) are still used as given (CUDA_VISIBLE_DEVICES)."
        )
    return "This machine: " + "; ".join(esc(gpu.summary) for gpu in probe.gpus) + "."


def build(ctx: UiContext) -> GroupRefs:
    """The scale-out accordion (inside the Server tab)."""
    with gr.Accordion("GPUs and worker machines (scale out)", open=False, elem_id="server-group"):
        found = gr.Markdown(elem_id="server-group-gpus-found")
        with gr.Row(equal_height=False):
            gpus = gr.Textbox(
                label="GPUs",
                placeholder="all",
                elem_id="server-group-gpus",
                info="all (every GPU with room for the model) or ids like 0,2. Two or more: one server per "
                "GPU behind the SGLang-Omni router, on the same port.",
            )
            worker_urls = gr.Textbox(
                label="Worker machines",
                placeholder="http://gpu-box-2:8100 http://gpu-box-3:8100",
                elem_id="server-group-workers",
                info="sgl-omni serve on other machines with the same model; checked (/health, /v1/models) "
                "and added to the router at the next start.",
            )
        save = gr.Button("Save GPU and worker choice", size="sm", elem_id="server-group-save")
    return GroupRefs(gpus, worker_urls, save, found)


def wire(ctx: UiContext, refs: GroupRefs, notice: gr.Markdown) -> tuple[Any, list[Any]]:
    """Wire the save button; returns the load function and its outputs (for the tab's page load)."""

    @guarded
    def save(gpus: str, worker_urls: str) -> str:
        spec = (gpus or "").strip()
        parse_gpu_spec(spec)  # a bad spec says what to write
        settings = dataclasses.replace(
            ctx.settings, gpus=spec, worker_urls=" ".join((worker_urls or "").split())
        )
        settings = ctx.save_settings(settings.validate())
        workers = ", ".join(settings.worker_url_list) or "none"
        return f"Saved: GPUs {settings.gpus or 'all'}; worker machines: {workers}. Used at the next Start."

    refs.save.click(save, [refs.gpus, refs.worker_urls], notice, api_name="server_group_save")

    def load() -> tuple[str, str, str]:
        settings = ctx.settings
        return settings.gpus, settings.worker_urls, _found(ctx)

    return load, [refs.gpus, refs.worker_urls, refs.found]
