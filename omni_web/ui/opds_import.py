"""Queue → "Import from a library (OPDS)": browse or search a catalog (Calibre, Calibre-Web,
Kavita; basic auth), tick books, queue them with a preset (or the rules). The catalog's authors,
series and description go with each book (omni_web/library/opds.py)."""

from __future__ import annotations

import logging
from typing import Any

import gradio as gr

from omni_web.errors import OmniWebError, internal_error_message
from omni_web.library import OpdsClient, OpdsFeed
from omni_web.ui.context import UiContext
from omni_web.ui.errors import guarded

__all__ = ["build", "entry_choices"]

log = logging.getLogger(__name__)


def entry_choices(feed: OpdsFeed) -> list[tuple[str, str]]:
    """(label, url) for every book of a feed; sections are offered as links to open."""
    return [
        (
            f"{e.title} — {', '.join(e.authors) or 'unknown'}"
            + (f" [{e.series} {e.series_index}]" if e.series else ""),
            e.acquisition,
        )
        for e in feed.entries
        if e.acquisition
    ]


def build(ctx: UiContext, preset: gr.Dropdown) -> None:
    """The accordion; ``preset`` is the Queue tab's preset menu (shared with 'Queue many books')."""
    with gr.Accordion("Import from a library (OPDS)", open=False, elem_id="queue-opds"):
        with gr.Row():
            url = gr.Textbox(
                label="Catalog URL", placeholder="http://calibre:8080/opds", elem_id="opds-url", scale=3
            )
            user = gr.Textbox(label="User", elem_id="opds-user")
            password = gr.Textbox(label="Password", type="password", elem_id="opds-password")
        with gr.Row():
            query = gr.Textbox(label="Search", elem_id="opds-query", scale=3)
            browse = gr.Button("Browse", size="sm", elem_id="opds-browse")
            search = gr.Button("Search", size="sm", elem_id="opds-search")
        sections = gr.Dropdown(
            label="Sections (pick one to open it)",
            choices=[],
            elem_id="opds-sections",
            allow_custom_value=True,
        )
        books = gr.CheckboxGroup(label="Books", choices=[], elem_id="opds-books")
        take = gr.Button("Queue the ticked books", variant="primary", elem_id="opds-take")
        report = gr.Markdown(elem_id="opds-report")
    feed_state = gr.State(None)

    def show(feed: OpdsFeed) -> tuple[Any, ...]:
        sections_list = [(e.title, e.navigation) for e in feed.entries if e.navigation]
        more = [("Next page", feed.next)] if feed.next else []
        note = f"{feed.title or 'Catalog'}: {len(entry_choices(feed))} books, {len(sections_list)} sections."
        return (
            feed,
            gr.update(choices=sections_list + more, value=None),
            gr.update(choices=entry_choices(feed), value=[]),
            note,
        )

    def open_feed(address: str, who: str, secret: str, section: str | None = None) -> tuple[Any, ...]:
        return show(OpdsClient(address.strip(), username=who, password=secret).feed(section or ""))

    def find(address: str, who: str, secret: str, words: str) -> tuple[Any, ...]:
        return show(OpdsClient(address.strip(), username=who, password=secret).search(words))

    def queue_ticked(
        address: str, who: str, secret: str, feed: OpdsFeed | None, ticked: list[str], preset_name: str | None
    ) -> str:
        if feed is None or not ticked:
            raise gr.Error("Browse the catalog and tick the books to queue first.")
        client = OpdsClient(address.strip(), username=who, password=secret)
        lines = []
        for entry in (e for e in feed.entries if e.acquisition in ticked):
            try:
                job = ctx.services.library.submit_from_catalog(entry, client, preset=preset_name or None)
                lines.append(f"- {entry.title}: queued as {job.id}")
            except OmniWebError as exc:  # one refused book never stops the others; its reason is shown
                lines.append(f"- {entry.title}: **not queued**: {exc}")
            except Exception as exc:  # a bug: the others still go, the traceback goes to the log
                log.exception("Queueing '%s' from the catalog failed on a bug", entry.title)
                lines.append(f"- {entry.title}: **not queued**: {internal_error_message(exc)}")
        return "\n".join(lines)

    outputs = [feed_state, sections, books, report]
    browse.click(guarded(open_feed), [url, user, password], outputs, api_name="opds_browse")
    sections.input(guarded(open_feed), [url, user, password, sections], outputs, api_name="opds_open")
    search.click(guarded(find), [url, user, password, query], outputs, api_name="opds_search")
    take.click(
        guarded(queue_ticked), [url, user, password, feed_state, books, preset], report, api_name="opds_take"
    )
