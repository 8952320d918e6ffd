"""The book's metadata as it is delivered: the EPUB's, with the user's corrections applied.

One record (:class:`~omni_web.book.BookMetadata`) travels from the reader to every place that
names the book: the m4b tags (:func:`audiobook_tags`), the layout, the sidecars
(:mod:`omni_web.deliver.sidecars`), the read-along EPUB and the OPDS shelf.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from omni_web.assemble.records import AudiobookTags
from omni_web.book import Book, BookMetadata
from omni_web.errors import BookError

__all__ = [
    "EDITABLE_FIELDS",
    "audiobook_tags",
    "editable_values",
    "effective_metadata",
    "metadata_overrides",
    "tags_for_paths",
]

# Field → what the Generate tab calls it. Authors are one line, separated by ";" or " and ".
EDITABLE_FIELDS: Mapping[str, str] = {
    "title": "Title",
    "subtitle": "Subtitle",
    "authors": "Authors",
    "series": "Series",
    "series_index": "Number in series",
    "description": "Description",
}
_AUTHOR_SPLIT = re.compile(r"\s*;\s*|\s+and\s+|\s*&\s*")
_INDEX = re.compile(r"^\d{1,4}(\.\d{1,2})?$")


def editable_values(meta: BookMetadata) -> dict[str, str]:
    """The book's own value of every :data:`EDITABLE_FIELDS` field, as the form shows it."""
    return {
        field: "; ".join(meta.authors) if field == "authors" else str(getattr(meta, field))
        for field in EDITABLE_FIELDS
    }


def metadata_overrides(values: Mapping[str, str], own: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The (field, value) pairs of ``values`` that differ from the book's ``own`` (see
    :func:`editable_values`), for a request.

    Raises:
        BookError: a series number that is not a number.
    """
    pairs: list[tuple[str, str]] = []
    for field, value in values.items():
        if field not in EDITABLE_FIELDS:
            continue
        value = " ".join(str(value).split()) if field != "description" else str(value).strip()
        if field == "series_index" and value and not _INDEX.match(value):
            raise BookError(
                f"The number in series '{value}' is not a number. Write it like 2 or 2.5, or leave it empty."
            )
        if value != own.get(field, ""):
            pairs.append((field, value))
    return tuple(pairs)


def effective_metadata(meta: BookMetadata, overrides: Iterable[tuple[str, str]]) -> BookMetadata:
    """``meta`` with the user's corrections (unknown fields are ignored; an empty title keeps the book's)."""
    changes: dict[str, object] = {}
    for field, value in overrides:
        if field not in EDITABLE_FIELDS:
            continue
        if field == "authors":
            changes["authors"] = tuple(name for name in _AUTHOR_SPLIT.split(value.strip()) if name)
        elif field == "title" and not value.strip():
            continue
        else:
            changes[field] = value
    return dataclasses.replace(meta, **changes) if changes else meta


def tags_for_paths(book: Book, overrides: Iterable[tuple[str, str]] = ()) -> AudiobookTags:
    """The tags that place a book's folder (title, author, series and number), as the plan sets them."""
    meta = effective_metadata(book.metadata, overrides)
    return AudiobookTags(
        title=meta.title or Path(book.source_path).stem,
        author=meta.authors_str,
        series=meta.series,
        series_part=meta.series_index if meta.series else "",
    )


def audiobook_tags(
    book: Book, overrides: Iterable[tuple[str, str]], *, narrator: str, comment: str
) -> AudiobookTags:
    """Every tag of the m4b and the MP3s, from the book's metadata and the user's corrections."""
    meta = effective_metadata(book.metadata, overrides)
    return AudiobookTags(
        title=meta.title or Path(book.source_path).stem,
        author=meta.authors_str,
        narrator=narrator,
        year=meta.year,
        description=meta.description,
        language=meta.language,
        publisher=meta.publisher,
        comment=comment,
        series=meta.series,
        series_part=meta.series_index if meta.series else "",
        subtitle=meta.subtitle,
        isbn=meta.isbn,
        asin=meta.asin,
    )
