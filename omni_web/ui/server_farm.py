"""Server tab, farm part: the GPU boxes that joined (boxes → GPUs → workers) and what the user does
to one of them: Drain, Resume, Remove, pin it to a model (Switch model), or read its agent's log.

A thin layer over :func:`omni_web.farm.farm_action` (the CLI's ``server farm`` runs the same); the
app's farm watcher does the slow part (a boot) within seconds, and a timer, running only once the
farm is in use (a farm token exists), redraws the list when it changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from omni_web.catalog import CATALOG
from omni_web.farm import FarmBox, FarmRegistry, farm_action, farm_in_use, farm_lines, group_target
from omni_web.ui.context import UiContext
from omni_web.ui.errors import guarded
from omni_web.ui.widgets import esc

__all__ = ["FOLLOW_GROUP", "FarmRefs", "build", "farm_html", "wire"]

_TICK_S = 3.0
# The model menu's first choice: no pin, the box serves what the server group serves.
FOLLOW_GROUP = "follow-group"


@dataclass(frozen=True, slots=True)
class FarmRefs:
    """The farm block's components."""

    boxes: gr.HTML  # GPU boxes that joined with a farm token (agent join)
    controls: gr.Column  # shown once a box joined
    pick: gr.Dropdown
    drain: gr.Button
    resume: gr.Button
    remove: gr.Button
    model: gr.Dropdown
    switch: gr.Button
    notice: gr.Markdown
    timer: gr.Timer
    show_log: gr.Button
    log: gr.Textbox  # the picked box's agent log, shown once asked for


def _registry(ctx: UiContext) -> FarmRegistry:
    return FarmRegistry(ctx.paths, group_target(ctx.services.server))


def farm_html(ctx: UiContext, boxes: tuple[FarmBox, ...] | None = None) -> str:
    """The farm's boxes → GPUs → workers ("" when no box joined)."""
    manager = ctx.services.server
    boxes = _registry(ctx).boxes() if boxes is None else boxes
    lines = farm_lines(boxes, manager.group.router_health() if boxes else None)
    if not lines:
        return ""
    return f'<div id="server-farm-boxes"><pre>{esc(chr(10).join(lines))}</pre></div>'


def _box_choices(boxes: tuple[FarmBox, ...]) -> list[tuple[str, str]]:
    return [(f"{box.name} ({box.id}): {box.state}", box.id) for box in boxes]


def build(ctx: UiContext) -> FarmRefs:
    """The farm block (inside the Server tab)."""
    boxes = gr.HTML(elem_id="server-farm")
    with gr.Column(visible=False, elem_id="server-farm-controls") as controls:
        with gr.Row(equal_height=True):
            pick = gr.Dropdown(label="Box", choices=[], elem_id="server-farm-pick", scale=3,
                               allow_custom_value=True)  # its choices come with the page load
            drain = gr.Button("Drain", size="sm", elem_id="server-farm-drain", scale=0, min_width=100)
            resume = gr.Button("Resume", size="sm", elem_id="server-farm-resume", scale=0, min_width=100)
            show_log = gr.Button("Agent log", size="sm", elem_id="server-farm-show-log", scale=0,
                                 min_width=100)
            remove = gr.Button("Remove", variant="stop", size="sm", elem_id="server-farm-remove", scale=0,
                               min_width=100)
        with gr.Row(equal_height=True):
            models = [("Follow the server group's model", FOLLOW_GROUP), *((e.label, e.key) for e in CATALOG)]
            model = gr.Dropdown(
                label="Model for this box",
                choices=models,
                value=FOLLOW_GROUP,
                elem_id="server-farm-model",
                info="Pinned to a model, the box serves it only: a pool routed while the server group serves "
                "that model, ready outside the router otherwise.",
                scale=3,
            )
            switch = gr.Button("Switch model", size="sm", elem_id="server-farm-switch", scale=0,
                               min_width=140)
        log = gr.Textbox(label="Agent log", lines=12, max_lines=12, interactive=False, visible=False,
                         autoscroll=True, elem_id="server-farm-log", elem_classes=["ow-log"])
    notice = gr.Markdown(elem_id="server-farm-notice")  # outside: "Removed ..." stays when the list empties
    return FarmRefs(boxes, controls, pick, drain, resume, remove, model, switch, notice,
                    gr.Timer(_TICK_S, active=False), show_log, log)


def wire(ctx: UiContext, refs: FarmRefs) -> tuple[Any, list[Any]]:
    """Wire the buttons and the timer; returns the load function and its outputs (for the tab's page load)."""

    def render(picked: str | None = None) -> tuple[Any, ...]:
        boxes = _registry(ctx).boxes()
        ids = [box.id for box in boxes]
        value = picked if picked in ids else (ids[0] if ids else None)
        return (farm_html(ctx, boxes), gr.update(choices=_box_choices(boxes), value=value),
                gr.update(visible=bool(boxes)))

    def act(action: str, box_id: str | None, model: str = "") -> tuple[Any, ...]:
        if not box_id:
            raise gr.Error("Pick a box first (the list shows the boxes that joined).")
        message = farm_action(_registry(ctx), action, box_id, model)
        return (message, *render(box_id))

    def switch(box_id: str | None, model: str | None) -> tuple[Any, ...]:
        return act("pin", box_id, "" if model in (None, "", FOLLOW_GROUP) else str(model))

    shown = [refs.boxes, refs.pick, refs.controls]
    outputs = [refs.notice, *shown]
    for button, action in ((refs.drain, "drain"), (refs.resume, "resume"), (refs.remove, "remove")):
        button.click(guarded(lambda box_id, action=action: act(action, box_id)), [refs.pick], outputs,
                     api_name=f"server_farm_{action}", concurrency_limit=1, concurrency_id="server-farm")
    refs.switch.click(guarded(switch), [refs.pick, refs.model], outputs, api_name="server_farm_pin",
                      concurrency_limit=1, concurrency_id="server-farm")

    def agent_log(box_id: str | None) -> Any:
        if not box_id:
            raise gr.Error("Pick a box first (the list shows the boxes that joined).")
        registry = _registry(ctx)
        text = registry.agent_log(registry.find(box_id).id)
        return gr.update(value=text or "(the agent's log is empty)", visible=True)

    refs.show_log.click(guarded(agent_log), [refs.pick], refs.log, api_name="server_farm_log",
                        concurrency_limit=2)

    def tick(current: str | None, picked: str | None) -> tuple[Any, ...]:
        rendered = render(picked)
        if rendered[0] == (current or ""):
            return gr.skip(), gr.skip(), gr.skip()
        return rendered

    refs.timer.tick(guarded(tick), [refs.boxes, refs.pick], shown, show_progress="hidden",
                    api_name="server_farm_status", concurrency_limit=4)

    def pinned(box_id: str | None) -> str:
        """The model menu's value for the picked box: its pin, else "follow the group"."""
        box = _registry(ctx).box(box_id) if box_id else None
        return box.pinned_model if box is not None and box.pinned_model else FOLLOW_GROUP

    # only a pick by the user: the timer's redraw must not reset a model chosen but not applied yet
    refs.pick.input(guarded(pinned), [refs.pick], refs.model, api_name="server_farm_pick",
                    show_progress="hidden")

    def load() -> tuple[Any, ...]:
        rendered = render()
        active = bool(_registry(ctx).boxes()) or farm_in_use(ctx.paths)
        return (*rendered, pinned(rendered[1]["value"]), gr.Timer(active=active))

    return load, [*shown, refs.model, refs.timer]
