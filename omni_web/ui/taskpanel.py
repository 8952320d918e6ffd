"""A live view of one background task kind: status line, log box, and the polling glue.

The page keeps only what it last *showed* (a signature in ``gr.State``) so an unchanged task
costs the browser nothing on a tick; the task itself lives in the app's TaskRunner, so a refresh
or a second browser picks up the same live log.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from omni_web.tasks import TaskSnapshot
from omni_web.ui.widgets import task_status_html

__all__ = ["TaskPanel", "TaskView", "build_task_panel", "task_view"]


@dataclass(frozen=True, slots=True)
class TaskPanel:
    """The components of one task view."""

    status: gr.HTML
    log: gr.Textbox
    seen: gr.State  # what this page last rendered: {"sig": str, "finished_at": float | None}


@dataclass(frozen=True, slots=True)
class TaskView:
    """One tick's rendering of a task."""

    status_html: Any  # str, or gr.skip() when unchanged
    log_text: Any
    seen: dict[str, Any]
    just_finished: bool  # the task ended since this page last looked: re-read what it changed


def build_task_panel(*, log_label: str, elem_prefix: str, lines: int = 12) -> TaskPanel:
    """Create the status line and the log box (call inside a Blocks context)."""
    status = gr.HTML(elem_id=f"{elem_prefix}-task-status", padding=False)
    log = gr.Textbox(
        label=log_label, lines=lines, max_lines=lines, interactive=False, autoscroll=True,
        elem_id=f"{elem_prefix}-task-log", elem_classes=["ow-log"], buttons=["copy"],
    )
    return TaskPanel(status=status, log=log, seen=gr.State({"sig": "", "finished_at": None}))


def task_view(snapshot: TaskSnapshot, seen: dict[str, Any] | None) -> TaskView:
    """Render ``snapshot``, skipping the outputs when nothing changed since ``seen``."""
    seen = dict(seen or {})
    last_line = snapshot.log_lines[-1] if snapshot.log_lines else ""
    # The elapsed clock moves every second while running; include it so the status line ticks.
    clock = int(snapshot.elapsed_s) if snapshot.running else 0
    sig = (
        f"{snapshot.started_at}|{snapshot.state}|{len(snapshot.log_lines)}|{last_line}|"
        f"{snapshot.progress}|{snapshot.progress_text}|{clock}"
    )
    just_finished = (
        snapshot.finished
        and snapshot.finished_at is not None
        and seen.get("finished_at") != snapshot.finished_at
        and seen.get("sig", "") != ""  # a fresh page renders everything anyway
    )
    if sig == seen.get("sig"):
        return TaskView(gr.skip(), gr.skip(), seen, False)
    new_seen = {"sig": sig, "finished_at": snapshot.finished_at}
    return TaskView(task_status_html(snapshot), snapshot.log_text, new_seen, just_finished)
