"""Setup tab: backend venv, GPUs, system tools, and Install / Repair with a live log."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

import gradio as gr

from omni_web.backend import install_backend
from omni_web.catalog import SGLANG_OMNI_VERSION, get_entry
from omni_web.gpu import FitLevel
from omni_web.setup_report import MISSING_TOOL_NOTE, SetupReport, collect_setup_report
from omni_web.tasks import TaskHandle
from omni_web.ui.context import TASK_BACKEND, OnLoad, UiContext
from omni_web.ui.errors import guarded
from omni_web.ui.taskpanel import TaskPanel, build_task_panel, task_view
from omni_web.ui.widgets import badge, callout, esc, table

# How often the backend block is read again while an install runs.
_REPORT_EVERY_S = 4.0

__all__ = ["SetupRefs", "build", "render_backend", "render_fit", "render_gpus", "render_tools"]


@dataclass(frozen=True, slots=True)
class SetupRefs:
    """The Setup tab's components."""

    backend: gr.HTML
    gpus: gr.HTML
    tools: gr.HTML
    install: gr.Button
    cancel: gr.Button
    recheck: gr.Button
    panel: TaskPanel
    timer: gr.Timer
    on_load: OnLoad | None = None


def render_backend(report: SetupReport) -> str:
    """The backend block: venv state, sglang-omni version, interpreter."""
    backend, search = report.backend, report.interpreter
    rows = [
        ("Backend venv", f"{badge(backend.state.value)} <code>{esc(backend.venv_path)}</code>"),
        (
            "sglang-omni",
            esc(f"{backend.installed_version or 'not installed'} (pinned {SGLANG_OMNI_VERSION})"),
        ),
        ("Venv Python", esc(backend.python_version_str)),
        ("Interpreter", esc(search.summary)),
        ("Disk", esc(report.backend_disk.message)),
        ("Data root", f"<code>{esc(report.data_root)}</code>"),
    ]
    body = "".join(f"<tr><th>{esc(k)}</th><td>{v}</td></tr>" for k, v in rows)
    note = (
        ""
        if backend.ready
        else callout(f"{backend.detail}. Press Install / Repair to set it up (about 10 GB).", tone="warn")
    )
    return f'<table class="ow-table ow-kv">{body}</table>{note}'


def render_gpus(report: SetupReport) -> str:
    """The GPU table (name, compute capability, memory), or the no-GPU warning."""
    gpu = report.gpu
    if not gpu.available:
        return callout(gpu.warning, tone="bad")
    rows = [
        (str(info.index), info.name, info.compute_capability_str, info.total_memory_str, info.free_memory_str)
        for info in gpu.gpus
    ]
    html = table(["#", "GPU", "Compute capability", "Memory", "Free"], rows)
    html += f'<div class="ow-dim">NVIDIA driver {esc(gpu.driver_version or "-")}</div>'
    html += callout(gpu.warning, tone="warn") if gpu.warning else ""
    return html + render_fit(report)


# The fit column's word and badge tone per level.
_FIT_WORDS = {
    FitLevel.FITS: ("fits", "ok"),
    FitLevel.TOO_SMALL: ("too small", "bad"),
    FitLevel.NO_GPU: ("no GPU", "mute"),
}


def render_fit(report: SetupReport) -> str:
    """Each catalog model against GPU 0: fits or not, a fallback config it would run, the notes."""
    rows = []
    for hint in report.fit:
        word, tone = _FIT_WORDS[hint.level]
        marks = badge(word, tone=tone)
        if hint.uses_fallback:
            marks += " " + badge(get_entry(hint.key).fallback_tag or "fallback", tone="wait")
        label = f'<span class="ow-nowrap">{esc(get_entry(hint.key).label)}</span>'
        rows.append((label, f'<span class="ow-nowrap">{marks}</span>', esc(hint.message)))
    title = '<div class="ow-dim">Which models fit GPU 0 (every stage runs on GPU 0)</div>'
    return title + table(["Model", "Fit on GPU 0", "Notes"], rows, raw_columns=(0, 1, 2))


def render_tools(report: SetupReport) -> str:
    """System programs with their status and, when missing, the line that installs them."""
    rows = []
    for tool in report.tools:
        commands = [] if tool.found else report.install_commands(tool)
        fix = "<br>".join(f"<code>{esc(command)}</code>" for _, command in commands)
        rows.append(
            (
                f"<b>{esc(tool.name)}</b>",
                badge("found" if tool.found else "missing"),
                esc(tool.path or "-"),
                esc(tool.required_by_str),
                fix,
            )
        )
    note = callout(MISSING_TOOL_NOTE, tone="warn") if report.tools_missing else ""
    return table(["Program", "Status", "Path", "Needed by", "Install"], rows, raw_columns=(0, 1, 4)) + note


def build(ctx: UiContext) -> SetupRefs:
    """Create the Setup tab's components and wire them (inside a ``gr.Tab``)."""
    gr.Markdown(
        "The SGLang-Omni backend runs in its own venv under the data root. Install it once; run "
        "Install / Repair again after an interrupted install or to fix a broken venv."
    )
    with gr.Row(equal_height=False):
        with gr.Column(scale=3):
            gr.Markdown("### Backend")
            backend = gr.HTML(elem_id="setup-backend", padding=False)
            gr.Markdown("### GPUs")
            gpus = gr.HTML(elem_id="setup-gpus", padding=False)
        with gr.Column(scale=2):
            gr.Markdown("### Install")
            with gr.Row():
                install = gr.Button("Install / Repair backend", variant="primary", elem_id="setup-install")
                cancel = gr.Button("Cancel", variant="stop", elem_id="setup-cancel")
                recheck = gr.Button("Re-check", elem_id="setup-recheck")
            panel = build_task_panel(log_label="Install log", elem_prefix="setup", lines=14)
    gr.Markdown("### System programs")
    tools = gr.HTML(elem_id="setup-tools", padding=False)
    timer = gr.Timer(1.0)
    refs = SetupRefs(backend, gpus, tools, install, cancel, recheck, panel, timer)
    return replace(refs, on_load=_wire(ctx, refs))


def _report(ctx: UiContext) -> tuple[str, str, str]:
    report = collect_setup_report(ctx.paths, nvml=ctx.nvml, cache_dir=ctx.hf_cache_dir)
    return render_backend(report), render_gpus(report), render_tools(report)


def _wire(ctx: UiContext, refs: SetupRefs) -> OnLoad:
    panel = refs.panel
    report_out = [refs.backend, refs.gpus, refs.tools]
    task_out = [panel.status, panel.log, panel.seen]

    @guarded
    def load(seen: dict[str, Any] | None) -> tuple[Any, ...]:
        view = task_view(ctx.tasks.snapshot(TASK_BACKEND), None)
        return (*_report(ctx), view.status_html, view.log_text, view.seen)

    @guarded
    def tick(seen: dict[str, Any] | None) -> tuple[Any, ...]:
        snapshot = ctx.tasks.snapshot(TASK_BACKEND)
        view = task_view(snapshot, seen)
        # While an install runs the backend block follows it (venv created, package landing).
        last = float((seen or {}).get("report_at", 0.0))
        due = snapshot.running and time.monotonic() - last >= _REPORT_EVERY_S
        report = _report(ctx) if view.just_finished or due else (gr.skip(),) * 3
        new_seen = {**view.seen, "report_at": time.monotonic() if due else last}
        return (*report, view.status_html, view.log_text, new_seen)

    @guarded
    def start_install(seen: dict[str, Any] | None) -> tuple[Any, ...]:
        def work(handle: TaskHandle) -> str:
            status = install_backend(
                ctx.paths, log=handle.log, cancel=handle.cancel_event, index_args=ctx.backend_index_args
            )
            return status.summary

        ctx.tasks.start(TASK_BACKEND, "Installing the SGLang-Omni backend", work)
        view = task_view(ctx.tasks.snapshot(TASK_BACKEND), seen)
        return view.status_html, view.log_text, view.seen

    @guarded
    def cancel(seen: dict[str, Any] | None) -> tuple[Any, ...]:
        if not ctx.tasks.cancel(TASK_BACKEND):
            gr.Info("No install is running.")
        view = task_view(ctx.tasks.snapshot(TASK_BACKEND), seen)
        return view.status_html, view.log_text, view.seen

    refs.install.click(start_install, [panel.seen], task_out, api_name="setup_install", concurrency_limit=1)
    refs.cancel.click(cancel, [panel.seen], task_out, api_name="setup_cancel")
    refs.recheck.click(guarded(lambda: _report(ctx)), None, report_out, api_name="setup_report")
    refs.timer.tick(
        tick, [panel.seen], [*report_out, *task_out], show_progress="hidden", api_visibility="private"
    )
    return OnLoad(load, [panel.seen], [*report_out, *task_out])
