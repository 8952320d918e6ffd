"""Generate tab: the loaded book's details as the audiobook will carry them, editable before rendering.

Title, authors, series and number start as the book says (the book state's ``meta``); what the
user changes is kept in the same state under ``edits``, and the submitted request carries only the
differences (omni_web/ui/submit_flow.py, omni_web/deliver/metadata.py). They name the book's
folder and fill its m4b tags and library sidecars.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from omni_web.deliver.metadata import EDITABLE_FIELDS

__all__ = ["FIELDS", "build", "wire"]

FIELDS = ("title", "authors", "series", "series_index")


def build() -> tuple[gr.Textbox, ...]:
    """The four fields (inside the tab's layout, under the book's header)."""
    with gr.Accordion("Book details (tags, library folder)", open=False, elem_id="gen-book-details"):
        with gr.Row():
            boxes = tuple(
                gr.Textbox(label=EDITABLE_FIELDS[name], elem_id=f"gen-meta-{name.replace('_', '-')}",
                           info="; between authors" if name == "authors" else None,
                           scale=1 if name == "series_index" else 3)
                for name in FIELDS
            )
    return boxes


def wire(book: gr.State, boxes: tuple[gr.Textbox, ...]) -> None:
    """A newly loaded book fills the fields; what the user types is kept in the book state."""

    def fill(state: dict | None) -> list[Any]:
        if state and "edits" in state:
            return [gr.skip() for _ in FIELDS]  # the change came from typing: leave the cursor alone
        own = (state or {}).get("meta") or {}
        return [own.get(name, "") for name in FIELDS]

    def keep(state: dict | None, *values: str) -> dict | None:
        if not state:
            return state
        return {**state, "edits": dict(zip(FIELDS, (v or "" for v in values), strict=True))}

    book.change(fill, [book], list(boxes), api_visibility="private", show_progress="hidden")
    for box in boxes:
        box.input(keep, [book, *boxes], book, api_visibility="private", show_progress="hidden")
