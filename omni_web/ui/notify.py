"""Job notifications on every tab: a toast when a job finishes or fails, and the browser tab's
title showing the running job's progress (``37% · Alice — omni-web``) or the latest outcome.

Each page remembers the job states it last saw (``gr.State``), so only changes seen while it is
open raise a toast; the job store stays the only truth.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import gradio as gr

from omni_web.jobs import Job, JobState
from omni_web.ui.context import UiContext
from omni_web.ui.errors import guarded
from omni_web.ui.jobview import progress_of
from omni_web.ui.live import NOTIFY_TRIGGER

__all__ = ["APP_TITLE", "NotifyRefs", "build_notifier", "page_title"]

APP_TITLE = "omni-web"
_SET_TITLE_JS = "(title) => { if (title) { document.title = title; } return []; }"


@dataclass(frozen=True, slots=True)
class NotifyRefs:
    """The notifier's timer, what the page saw, and the title it shows."""

    timer: gr.Button
    seen: gr.State
    title: gr.Textbox


def page_title(jobs: Sequence[Job], latest: tuple[str, str] | None) -> str:
    """The browser tab's title: the running job's share done, else the last outcome this page saw."""
    running = next((job for job in jobs if job.state is JobState.RUNNING), None)
    if running is not None:
        fraction = progress_of(running).fraction
        share = f"{fraction * 100:.0f}% · " if fraction is not None else ""
        return f"{share}{running.title} — {APP_TITLE}"
    if latest is not None:
        mark = {"done": "✓", "failed": "✗", "cancelled": "■"}.get(latest[1], "")
        return f"{mark} {latest[0]} {latest[1]} — {APP_TITLE}".strip()
    return APP_TITLE


def _announce(job: Job) -> None:
    if job.state is JobState.DONE:
        gr.Info(f"Finished: {job.title}. The audiobook is ready in the Jobs tab.", title="Job done")
    elif job.state is JobState.FAILED:
        # What went wrong and what to do are in the job's panel; said there once, not here again.
        gr.Warning(f"Failed: {job.title}. The Jobs tab says why and what to do.", title="Job failed")
    elif job.state is JobState.CANCELLED:
        gr.Info(f"Cancelled: {job.title}.", title="Job cancelled")


def build_notifier(ctx: UiContext) -> NotifyRefs:
    """Create and wire the notifier (call inside the Blocks, outside the tabs)."""
    # The page's poll clicks it when job states change (omni_web/ui/live.py) and sets the title itself.
    refs = NotifyRefs(gr.Button("Notices", visible="hidden", elem_id=NOTIFY_TRIGGER), gr.State({}),
                      gr.Textbox(visible=False, elem_id="ow-page-title"))

    def watch(seen: dict[str, Any] | None) -> tuple[dict[str, Any], str]:
        seen = dict(seen or {})
        jobs = ctx.services.library.jobs.list(limit=50)
        before: dict[str, str] = seen.get("states", {})
        latest = tuple(seen["latest"]) if seen.get("latest") else None
        if "states" in seen:  # the first look only records; older outcomes are not news
            for job in reversed(jobs):
                was = before.get(job.id)
                if job.state.finished and was is not None and not JobState(was).finished:
                    _announce(job)
                    latest = (job.title, job.state.value)
        new = {
            "states": {job.id: job.state.value for job in jobs},
            "latest": list(latest) if latest else None,
        }
        return new, page_title(jobs, latest)

    refs.timer.click(guarded(watch), [refs.seen], [refs.seen, refs.title], show_progress="hidden",
                    api_name="job_notices", concurrency_limit=None).then(
        None, [refs.title], None, js=_SET_TITLE_JS)
    return refs
