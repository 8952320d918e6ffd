"""Generate's menus follow the server: when what serves changes (a Start, a Stop, a saved remote
URL, a server that went away or came back), the voice menu, the model note and the server-voices
box are rendered again, without a reload, keeping the chosen voice when it is still offered.

Each page remembers only which server it last rendered for (``gr.State``); the server manager
stays the one source of truth, and pages ticking together share one probe.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gradio as gr

from omni_web.server import ServerStatus
from omni_web.ui.context import UiContext
from omni_web.ui.errors import guarded
from omni_web.ui.live import MENUS_TRIGGER

__all__ = ["serving_identity", "wire_menu_watch"]

_STATUS_MAX_AGE_S = 2.5  # pages ticking within one interval share one look at the server

# (model key, voice key to keep, server status) -> updates for every menu output, in order.
Render = Callable[[str, str | None, ServerStatus], Sequence[Any]]


def serving_identity(status: ServerStatus) -> list[Any]:
    """What the menus depend on: which endpoint answers, for which model, and whether it takes requests."""
    return [status.endpoint, status.model_key, status.healthy, status.remote, status.pid]


def wire_menu_watch(ctx: UiContext, *, model: gr.Dropdown, voice: gr.Dropdown, outputs: Sequence[Any],
                    render: Render, events: Sequence[Any] = ()) -> gr.State:
    """Re-render ``outputs`` whenever the server behind them changes (checked every few seconds).

    ``events`` are other tabs' events that change the server (Start, Stop, Save remote URL): the
    menus follow them at once instead of at the next tick. Returns the page's memory of the
    server it last rendered for, which the Generate tab's first render fills too.
    """
    seen = gr.State(None)

    def check(model_key: str | None, voice_key: str | None, shown: list[Any] | None) -> list[Any]:
        status = ctx.services.server.status(max_age_s=_STATUS_MAX_AGE_S)
        identity = serving_identity(status)
        if shown is None or identity == shown or not model_key:
            # The first look only records what the page's first render already used.
            return [identity, *(gr.skip() for _ in outputs)]
        return [identity, *render(model_key, voice_key, status)]

    def now(model_key: str | None, voice_key: str | None, shown: list[Any] | None) -> list[Any]:
        status = ctx.services.server.status()
        if not model_key:
            return [serving_identity(status), *(gr.skip() for _ in outputs)]
        return [serving_identity(status), *render(model_key, voice_key, status)]

    # Clicked by the page's poll when the server changes (omni_web/ui/live.py).
    timer = gr.Button("Server changed", visible="hidden", elem_id=MENUS_TRIGGER)
    all_out = [seen, *outputs]
    timer.click(
        guarded(check),
        [model, voice, seen],
        all_out,
        show_progress="hidden",
        api_name="menus_follow_server",
        concurrency_limit=None,
    )
    for event in events:
        event.then(
            guarded(now), [model, voice, seen], all_out, show_progress="hidden", api_visibility="private"
        )
    return seen
