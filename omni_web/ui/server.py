"""Server tab: what serves now, Start (asking which downloaded model) / Stop, the remote URL, the
exact command line, and the boot log.

A start runs as a background task (it waits up to the start timeout for ``/health``), so the
page, a refresh or a second browser all follow the same boot.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, replace
from typing import Any

import gradio as gr

from omni_web.catalog import CATALOG, get_entry
from omni_web.models import installed_models
from omni_web.runstate import RunState
from omni_web.server import ServerState, ServerStatus
from omni_web.server.accesslog import fold_access_lines, read_server_log
from omni_web.server.boot import latest_log_path
from omni_web.tasks import TaskHandle
from omni_web.ui import server_farm, server_group
from omni_web.ui.context import TASK_SERVER, OnLoad, UiContext
from omni_web.ui.errors import guarded
from omni_web.ui.labels import model_name
from omni_web.ui.widgets import badge, callout, esc, task_status_html

__all__ = ["ServerRefs", "build", "status_html"]

_TICK_S = 2.0
# Just under the tick, so one page still sees a fresh probe on every tick.
_STATUS_MAX_AGE_S = 1.5
NO_MODELS = (
    "No model is downloaded yet. Open the **Models** tab, check one and press Apply; then start it here."
)


@dataclass(frozen=True, slots=True)
class ServerRefs:
    """The Server tab's components."""

    status: gr.HTML
    start: gr.Button
    stop: gr.Button
    notice: gr.Markdown
    chooser: gr.Column
    choice: gr.Radio
    choose_start: gr.Button
    choose_cancel: gr.Button
    remote_url: gr.Textbox
    save_remote: gr.Button
    command_model: gr.Dropdown
    command: gr.Textbox
    boot_log: gr.Textbox
    timer: gr.Timer
    on_load: OnLoad | None = field(default=None)
    group: server_group.GroupRefs | None = field(default=None)  # GPUs and worker machines
    farm: server_farm.FarmRefs | None = field(default=None)  # GPU boxes that joined (agent join)


def status_html(status: ServerStatus) -> str:
    """The status line: state, model (with a ``bf16 fallback`` tag), endpoint, owner."""
    name = model_name(status.model_key) if status.model_key else (status.model_ids or ["no model"])[0]
    # A remote URL where nothing answers is not a server we stopped: say what it is.
    word = "unreachable" if status.remote and status.state is ServerState.STOPPED else status.state.value
    parts = [badge(word, tone="bad" if word == "unreachable" else None), f"<b>{esc(name)}</b>"]
    if status.tag:
        parts.append(badge(status.tag, tone="wait"))
    parts.append(f"<code>{esc(status.endpoint or '-')}</code>")
    owner = status.owner_str + (f", pid {status.pid}" if status.pid else "")
    parts.append(f'<span class="ow-dim">{esc(owner)}</span>')
    html = f'<div class="ow-status ow-server-status" id="server-status-line">{" ".join(parts)}</div>'
    html += server_group.members_html(status)  # a group: the router and each worker
    return html + (
        callout(status.message, tone="bad" if status.state is ServerState.FAILED else "info")
        if status.message
        else ""
    )


def _downloaded(ctx: UiContext) -> list[tuple[str, str]]:
    return [(model.label, model.key) for model in installed_models(cache_dir=ctx.hf_cache_dir)]


def _boot_log(ctx: UiContext, status: ServerStatus) -> str:
    """The start task's output while it runs (or just failed), else the server's log file."""
    task = ctx.tasks.snapshot(TASK_SERVER)
    if task.running or task.state is RunState.FAILED and status.state is not ServerState.HEALTHY:
        return fold_access_lines(task.log_text)
    # Per-request lines are folded into one count: the boot lines are what a person reads here.
    return read_server_log(status.log_path or latest_log_path(ctx.paths.logs_dir))


def _command_for(ctx: UiContext, key: str | None) -> str:
    if not key:
        return ""
    server = ctx.services.server
    spec = server.build_spec(get_entry(key), compute_capability=ctx.probe_gpus().compute_capability)
    notes = "".join(f"# {note}\n" for note in spec.notes)
    return notes + server.command_line(spec, with_env=True)


def _started(label: str) -> str:
    return (
        f"Start requested: {label}. The status line turns *healthy* when it answers; the boot log follows it."
    )


def _start(ctx: UiContext, key: str) -> None:
    entry = get_entry(key)
    cc = ctx.probe_gpus().compute_capability

    def work(handle: TaskHandle) -> str:
        status = ctx.services.server.start(entry, compute_capability=cc, on_log=handle.log)
        tag = f" ({status.tag})" if status.tag else ""
        return f"Serving {model_name(status.model_key)}{tag} at {status.endpoint}."

    ctx.tasks.start(TASK_SERVER, f"Starting the server for {entry.label}", work)


def build(ctx: UiContext) -> ServerRefs:
    """Create the Server tab's components and wire them (inside a ``gr.Tab``)."""
    status = gr.HTML(elem_id="server-status", padding=False)
    with gr.Row():
        start = gr.Button("Start", variant="primary", elem_id="server-start", scale=0, min_width=140)
        stop = gr.Button("Stop", variant="stop", elem_id="server-stop", scale=0, min_width=140)
    notice = gr.Markdown(elem_id="server-notice")
    with gr.Column(visible=False, elem_id="server-chooser", elem_classes=["ow-dialog"]) as chooser:
        choice = gr.Radio(label="Which downloaded model should the server load?", elem_id="server-choice")
        with gr.Row():
            choose_start = gr.Button("Start this model", variant="primary", elem_id="server-choose-start")
            choose_cancel = gr.Button("Cancel", elem_id="server-choose-cancel")
    with gr.Row(equal_height=False):
        with gr.Column():
            remote_url = gr.Textbox(
                label="Remote server URL",
                placeholder="http://gpu-box:8100 (empty: start and use a local server)",
                info="An sgl-omni server started elsewhere. When set, Start/Stop do nothing and jobs use it.",
                elem_id="server-remote-url",
            )
            save_remote = gr.Button("Save remote URL", elem_id="server-save-remote", size="sm")
        with gr.Column():
            command_model = gr.Dropdown(
                label="Command line for",
                elem_id="server-command-model",
                choices=[(e.label, e.key) for e in CATALOG],
            )
            command = gr.Textbox(
                label="Exact command a start runs (copy it to start the server by hand)",
                lines=3,
                interactive=False,
                buttons=["copy"],
                elem_id="server-command",
                elem_classes=["ow-mono", "ow-command"],
            )
    group = server_group.build(ctx)
    farm = server_farm.build(ctx)
    boot_log = gr.Textbox(
        label="Boot log",
        lines=16,
        max_lines=16,
        interactive=False,
        autoscroll=True,
        elem_id="server-boot-log",
        elem_classes=["ow-log"],
        buttons=["copy"],
    )
    refs = ServerRefs(
        status,
        start,
        stop,
        notice,
        chooser,
        choice,
        choose_start,
        choose_cancel,
        remote_url,
        save_remote,
        command_model,
        command,
        boot_log,
        gr.Timer(_TICK_S),
    )
    refs = replace(refs, group=group, farm=farm)
    return replace(refs, on_load=_wire(ctx, refs))


def _wire(ctx: UiContext, refs: ServerRefs) -> OnLoad:
    server = ctx.services.server

    def live(current: ServerStatus | None = None) -> tuple[str, str]:
        # Every open page ticks; pages ticking within the same interval share one probe.
        current = current or server.status(max_age_s=_STATUS_MAX_AGE_S)
        task = ctx.tasks.snapshot(TASK_SERVER)
        line = status_html(current)
        if task.running:
            line += task_status_html(task)
        return line, _boot_log(ctx, current)

    @guarded
    def load() -> tuple[Any, ...]:
        current = server.status()
        downloaded = _downloaded(ctx)
        key = current.model_key or (downloaded[0][1] if downloaded else CATALOG[0].key)
        return (*live(current), ctx.settings.remote_url, key, _command_for(ctx, key))

    @guarded
    def start() -> tuple[Any, ...]:
        if ctx.settings.remote_url:
            return ("A remote server URL is set, so no local server is started. Clear it below to manage "
                    "a local server.", gr.update(visible=False), gr.skip())
        downloaded = _downloaded(ctx)
        if not downloaded:
            return NO_MODELS, gr.update(visible=False), gr.skip()
        if len(downloaded) == 1:
            _start(ctx, downloaded[0][1])
            return _started(downloaded[0][0]), gr.update(visible=False), gr.skip()
        current = server.status().model_key
        keys = [key for _, key in downloaded]
        return "", gr.update(visible=True), gr.update(choices=downloaded,
                                                      value=current if current in keys else keys[0])

    @guarded
    def choose(key: str | None) -> tuple[Any, ...]:
        if not key:
            raise gr.Error("Pick a model to start.")
        _start(ctx, key)
        return _started(get_entry(key).label), gr.update(visible=False)

    @guarded
    def stop() -> str:
        if ctx.settings.remote_url:
            return "The remote server is not managed by omni-web; it was left running."
        stopped = server.stop()
        return "Stopped the server." if stopped else "No server started by omni-web is running."

    @guarded
    def save_remote(url: str) -> str:
        settings = ctx.save_settings(dataclasses.replace(ctx.settings, remote_url=(url or "").strip()))
        return f"Remote URL set to {settings.remote_url}." if settings.remote_url else "Remote URL cleared."

    start_out = [refs.notice, refs.chooser, refs.choice]
    refs.start.click(start, None, start_out, api_name="server_start", concurrency_limit=1)
    refs.choose_start.click(choose, [refs.choice], [refs.notice, refs.chooser], api_name="server_start_model",
                            concurrency_limit=1)
    refs.choose_cancel.click(lambda: gr.update(visible=False), None, refs.chooser, api_visibility="private")
    refs.stop.click(stop, None, refs.notice, api_name="server_stop", concurrency_limit=1)
    refs.save_remote.click(save_remote, [refs.remote_url], refs.notice, api_name="server_save_remote")
    refs.command_model.change(guarded(lambda key: _command_for(ctx, key)), [refs.command_model], refs.command,
                              api_name="server_command")
    refs.timer.tick(guarded(lambda: live()), None, [refs.status, refs.boot_log], show_progress="hidden",
                    api_name="server_status", concurrency_limit=4)
    group_load, group_outputs = server_group.wire(ctx, refs.group, refs.notice)
    farm_load, farm_outputs = server_farm.wire(ctx, refs.farm)

    def load_all() -> tuple[Any, ...]:
        return (*load(), *group_load(), *guarded(farm_load)())

    return OnLoad(load_all, [], [refs.status, refs.boot_log, refs.remote_url, refs.command_model,
                                 refs.command,
                                 *group_outputs, *farm_outputs])
