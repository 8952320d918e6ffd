"""The first-run checklist on Generate: what is missing before a model can narrate, each step with
a button to its tab, shown until a model can run (it rechecks every few seconds while shown)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from omni_web.backend import probe_backend
from omni_web.catalog import CATALOG
from omni_web.models import installed_keys
from omni_web.readiness import Readiness, first_run_readiness
from omni_web.server import ServerStatus
from omni_web.ui.context import UiContext
from omni_web.ui.widgets import esc

__all__ = ["FirstRunRefs", "build_first_run", "first_run_html", "first_run_outputs", "readiness_for",
           "render_first_run"]

_RECHECK_S = 5.0
# Tab id -> the button's words.
_TAB_BUTTONS = (("setup", "Open Setup"), ("models", "Open Models"), ("server", "Open Server"))


@dataclass(frozen=True, slots=True)
class FirstRunRefs:
    """The checklist box, its tab buttons (``(button, tab id)``) and its recheck timer."""

    box: gr.Column
    checklist: gr.HTML
    buttons: tuple[tuple[gr.Button, str], ...]
    timer: gr.Timer


def readiness_for(ctx: UiContext, *, status: ServerStatus | None = None,
                  downloaded: set[str] | None = None) -> Readiness:
    """The checklist for the app's data root, server and Hugging Face cache now."""
    status = status or ctx.services.server.status()
    downloaded = downloaded if downloaded is not None else installed_keys(cache_dir=ctx.hf_cache_dir)
    return first_run_readiness(
        backend_state=probe_backend(ctx.paths).state, downloaded=downloaded, status=status,
        settings=ctx.settings, model_labels={entry.key: entry.label for entry in CATALOG},
    )


def first_run_html(readiness: Readiness) -> str:
    """``Before the first book`` and one line per step, ticked or numbered."""
    items = []
    for number, step in enumerate(readiness.steps, start=1):
        mark = "✓" if step.done else str(number)
        tone = "ow-step-done" if step.done else "ow-step-todo"
        items.append(
            f'<li class="{tone}"><span class="ow-step-mark">{mark}</span> <b>{esc(step.title)}</b>'
            f' <span class="ow-dim">({esc(step.tab.capitalize())} tab)</span> — {esc(step.detail)}</li>'
        )
    return (
        '<div class="ow-firstrun"><div class="ow-firstrun-title">Before the first book</div>'
        f'<ol class="ow-steps">{"".join(items)}</ol></div>'
    )


def build_first_run() -> FirstRunRefs:
    """Create the (hidden) checklist box; call inside the Generate tab."""
    with gr.Column(visible=False, elem_id="gen-firstrun", elem_classes=["ow-firstrun-box"]) as box:
        checklist = gr.HTML(elem_id="gen-firstrun-list", padding=False)
        with gr.Row():
            buttons = tuple(
                (gr.Button(words, size="sm", elem_id=f"gen-firstrun-{tab}", scale=0, min_width=130), tab)
                for tab, words in _TAB_BUTTONS
            )
    return FirstRunRefs(box, checklist, buttons, gr.Timer(_RECHECK_S, active=False))


def first_run_outputs(refs: FirstRunRefs) -> list[Any]:
    """The components :func:`render_first_run` fills, in order."""
    return [refs.box, refs.checklist, refs.timer]


def render_first_run(readiness: Readiness) -> tuple[Any, Any, Any]:
    """Box visibility, checklist markup, and the recheck timer (on only while the box shows)."""
    show = not readiness.can_run
    return gr.update(visible=show), first_run_html(readiness) if show else "", gr.Timer(active=show)
