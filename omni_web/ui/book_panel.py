"""The Generate tab's book: the EPUB upload, its title block, cover and chapter checklist.

A file that is not a readable EPUB is refused in the user's own file name, once, under the box
(where the book would show), and the box is emptied for another try.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gradio as gr

from omni_web.assemble.cover import flattened_cover_image
from omni_web.book import Book, chapter_rows, load_book
from omni_web.book.summary import book_size
from omni_web.bookshelf import require_book_name, store_book
from omni_web.deliver.metadata import editable_values
from omni_web.errors import BookError
from omni_web.library import estimate_book
from omni_web.ui.context import UiContext
from omni_web.ui.labels import chapter_label
from omni_web.ui.widgets import esc

__all__ = ["book_header_html", "chapter_choices", "estimate_html", "load_upload", "pick_chapters"]


def chapter_choices(book: Book) -> tuple[list[tuple[str, int]], list[int]]:
    """Checkbox labels ``  3. Title  ·  2,153 words`` (with why a chapter is not preselected)."""
    choices, selected = [], []
    for row in chapter_rows(book):
        reason = f"  ·  {row.reason}" if row.reason else ""
        choices.append(
            (f"{chapter_label(row.number, row.title, width=3)}  ·  {row.size_str}{reason}", row.number)
        )
        if row.selected:
            selected.append(row.number)
    return choices, selected


def book_header_html(book: Book) -> str:
    """Title, author and size of the loaded book, and what its reader could not read well."""
    meta = book.metadata
    return (
        f'<div class="ow-book"><div class="ow-book-title">{esc(meta.title or book.source_path.stem)}</div>'
        f'<div class="ow-book-author">{esc(meta.authors_str or "Unknown author")}</div>'
        f'<div class="ow-dim">{len(book.chapters)} chapters · {book_size(book).size_str}'
        f"{' · ' + esc(meta.language) if meta.language else ''}</div>"
        + "".join(
            f'<div class="ow-callout ow-callout-warn ow-book-warning">{esc(text)}</div>'
            for text in book.warnings
        )
        + "</div>"
    )


def _cover(book: Book) -> Any:
    # Transparency laid on white, as in the m4b (an RGBA cover otherwise shows as a black box).
    return flattened_cover_image(book.cover.data) if book.cover is not None else None


def load_upload(ctx: UiContext, file: str | None, loaded: dict | None) -> tuple[Any, ...]:
    """(book state, header, cover, chapters, notice, upload box) for a file put in the box."""
    cleared = (None, "", gr.update(value=None, visible=False), gr.update(choices=[], value=[]))
    if not file:
        # The box emptied: forget the loaded book; with none loaded (a refused file, cleared by
        # us) the refusal under the box stays.
        return (*cleared, gr.skip(), gr.skip()) if loaded else gr.skip()
    name = Path(file).name  # Gradio keeps the user's file name on its copy
    try:
        require_book_name(name)
        book = load_book(Path(file), options=ctx.settings.read_options(ctx.paths))
        kept = store_book(ctx.paths, Path(file), name=name)
    except BookError as exc:
        # Said once, under the box where the book would show, in the user's file name (no toast
        # repeating it); the box is cleared for another try.
        refused = f'<div class="ow-book-refused" role="alert"><b>Not loaded:</b> {esc(str(exc))}</div>'
        return (None, refused, *cleared[2:], "", None)
    choices, selected = chapter_choices(book)
    # "meta": the book's own title, authors and series, which the Book details fields start from.
    state = {
        "path": str(kept),
        "all": [n for _, n in choices],
        "defaults": selected,
        "meta": editable_values(book.metadata),
        "words": {str(n): chapter.word_count for n, chapter in enumerate(book.chapters, start=1)},
    }
    cover = _cover(book)
    return (
        state,
        book_header_html(book),
        gr.update(value=cover, visible=cover is not None),
        gr.update(choices=choices, value=selected),
        "",
        gr.skip(),
    )


def pick_chapters(kind: str):
    """A handler that checks the loaded book's ``all`` or ``defaults`` chapters."""

    def select(book: dict | None) -> list[int]:
        return (book or {}).get(kind, [])

    return select


def estimate_html(
    ctx: UiContext, book: dict | None, chapters: list[int] | None, model_key: str | None
) -> str:
    """How long the checked chapters should take here, from the speed measured on finished books."""
    if not book or not chapters:
        return ""
    words = sum(int((book.get("words") or {}).get(str(n), 0)) for n in chapters)
    estimate = estimate_book(words, ctx.services.library.jobs.list(limit=200), model_key=model_key)
    return f'<div class="ow-dim" id="gen-estimate-line">{esc(estimate.line)}</div>' if estimate.line else ""
