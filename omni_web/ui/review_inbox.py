"""The QA review panel's inbox controls: filter by chapter and by reason, page through, and accept
every chunk a filter shows in two clicks (the button, then its confirm).

Thin over :mod:`omni_web.pipeline.review_inbox`, which filters and pages; the review panel
(``ui/review.py``) places these controls and wires them to its list.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from omni_web.pipeline.review_inbox import InboxPage
from omni_web.ui.widgets import esc, table

__all__ = ["InboxRefs", "ask_accept_all", "build_inbox", "inbox_outputs", "render_inbox"]

_ALL = ""  # a filter's "everything" value


@dataclass(frozen=True, slots=True)
class InboxRefs:
    """Filters, paging, the page's table, and accept-all with its confirm."""

    chapter: gr.Dropdown
    reason: gr.Dropdown
    page: gr.Number
    accept_all: gr.Button
    confirm: gr.Column
    confirm_text: gr.Markdown
    confirm_go: gr.Button
    confirm_cancel: gr.Button
    listing: gr.HTML


def build_inbox() -> InboxRefs:
    """Create the controls (inside the review panel)."""
    with gr.Row(equal_height=False, elem_id="review-filters"):
        chapter = gr.Dropdown(
            label="Chapter",
            elem_id="review-chapter",
            interactive=True,
            allow_custom_value=True,
            choices=[("All chapters", _ALL)],
            value=_ALL,
            scale=2,
        )
        reason = gr.Dropdown(
            label="Reason",
            elem_id="review-reason",
            interactive=True,
            allow_custom_value=True,
            choices=[("Every reason", _ALL)],
            value=_ALL,
            scale=3,
        )
        page = gr.Number(
            label="Page", value=1, minimum=1, precision=0, elem_id="review-page", scale=1, min_width=90
        )
        accept_all = gr.Button(
            "Accept all", elem_id="review-accept-all", scale=1, min_width=160, interactive=False
        )
    with gr.Column(visible=False, elem_id="review-confirm", elem_classes=["ow-dialog"]) as confirm:
        confirm_text = gr.Markdown(padding=True, elem_id="review-confirm-text")
        with gr.Row():
            confirm_go = gr.Button("Accept them", variant="primary", elem_id="review-confirm-go")
            confirm_cancel = gr.Button("Cancel", elem_id="review-confirm-cancel")
    listing = gr.HTML(elem_id="review-listing", padding=False)
    return InboxRefs(
        chapter, reason, page, accept_all, confirm, confirm_text, confirm_go, confirm_cancel, listing
    )


def inbox_outputs(refs: InboxRefs) -> list[Any]:
    """The components :func:`render_inbox` fills, in order."""
    return [refs.chapter, refs.reason, refs.page, refs.accept_all, refs.listing]


def render_inbox(
    shown: InboxPage, chapter: str | None, reason: str | None, *, can_accept: bool
) -> tuple[Any, ...]:
    """Filter menus with their counts, the page number, accept-all's label, and the page's table."""
    chapters = [("All chapters", _ALL)] + [
        (f"Chapter {number} · {count}", str(number)) for number, count in shown.chapters
    ]
    reasons = [("Every reason", _ALL)] + [
        (f"{kind.title} · {count}", kind.value) for kind, count in shown.reasons
    ]
    chapter_value = chapter if chapter in {value for _, value in chapters} else _ALL
    reason_value = reason if reason in {value for _, value in reasons} else _ALL
    count = len(shown.matching)
    rows = [
        (esc(row.chapter), esc(row.chunk), esc(row.text[:90]), esc(row.first_reason[:90]))
        for row in shown.rows
    ]
    listing = f'<div class="ow-dim" id="review-count">{esc(shown.line)}</div>'
    if rows:
        listing += (
            '<div class="ow-scroll">'
            + table(["Ch.", "Chunk", "Text", "Why"], rows, raw_columns=(0, 1, 2, 3))
            + "</div>"
        )
    return (
        gr.update(choices=chapters, value=chapter_value),
        gr.update(choices=reasons, value=reason_value),
        gr.update(value=shown.page, maximum=shown.pages),
        gr.update(
            value=f"Accept all {count:,}" if count else "Accept all", interactive=can_accept and count > 0
        ),
        listing,
    )


def ask_accept_all(label: str) -> tuple[Any, str]:
    """Show the confirm under accept-all, naming how many chunks it accepts."""
    return gr.update(visible=True), (
        f"**{esc(label)}** chunks this filter shows, as they are? The book does not "
        "change; they leave the review list."
    )
