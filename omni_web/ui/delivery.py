"""Jobs tab: where the picked job's book was delivered (Audiobookshelf), with Retry when it failed.

Thin: the record is read from :class:`omni_web.deliver.abs_delivery.DeliveryStore`; Retry calls
:func:`omni_web.deliver.abs_delivery.deliver_book` for the job's book folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gradio as gr

from omni_web.deliver.abs_config import load_abs_config
from omni_web.deliver.abs_delivery import DeliveryStore, deliver_book, delivery_text
from omni_web.ui.context import UiContext
from omni_web.ui.errors import guarded

__all__ = ["attach", "delivery_mark"]


def delivery_mark(paths: Any, job_id: str) -> tuple[str, int] | None:
    """What the delivery line of ``job_id`` depends on (state, deliveries), for the page's poll."""
    record = DeliveryStore.for_paths(paths).for_job(job_id)
    return (record.state, record.deliveries) if record is not None else None


def attach(ctx: UiContext, pick: gr.Dropdown, timer: gr.Button) -> None:
    """Add the delivery line and its Retry under the Jobs tab's job picker."""
    with gr.Row(elem_id="jobs-delivery"):
        status = gr.Markdown(elem_id="jobs-delivery-status")
        retry = gr.Button(
            "Retry delivery", visible=False, elem_id="jobs-delivery-retry", scale=0, min_width=160
        )
    store = DeliveryStore.for_paths(ctx.paths)

    def show(job_id: str | None) -> tuple[str, dict]:
        record = store.for_job(job_id) if job_id else None
        return delivery_text(record), gr.update(visible=record is not None and record.failed)

    @guarded
    def again(job_id: str | None) -> tuple[str, dict]:
        record = store.for_job(job_id) if job_id else None
        if record is not None:
            deliver_book(
                load_abs_config(ctx.paths),
                Path(record.folder),
                ctx.settings.output_path(ctx.paths),
                store=store,
                job_id=job_id or "",
            )
        return show(job_id)

    pick.change(show, [pick], [status, retry], api_visibility="private", show_progress="hidden")
    timer.click(show, [pick], [status, retry], api_visibility="private", show_progress="hidden")
    retry.click(again, [pick], [status, retry], api_name="delivery_retry", concurrency_limit=1)
