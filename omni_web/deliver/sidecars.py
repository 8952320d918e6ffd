"""The files a library reads beside the audio: ``metadata.json``, ``<Title>.opf``, ``desc.txt``,
``reader.txt``.

Audiobookshelf applies its sources in this order, later ones winning (audiobookshelf
``server/models/Library.js`` ``defaultMetadataPrecedence``): folder names < audio tags < ``.nfo``
< ``desc.txt``/``reader.txt`` < ``.opf`` < ``metadata.json``. All four are written, each complete
on its own, so the book reads the same whichever of them a library (or another tool) honours.
Their forms follow what ABS parses: ``metadata.json`` with its own keys, series as ``"Name #2"``
and chapters as ``{start, end, title}`` in seconds (a chapter without a title voids the whole list:
``server/utils/generators/abmetadataGenerator.js``); an EPUB 2 style OPF with ``opf:role``
``aut``/``nrt``, ``opf:scheme`` ISBN/ASIN and ``calibre:series``/``calibre:series_index``
(``server/utils/parsers/parseOpfMetadata.js``); ``reader.txt`` is read on its first line only.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lxml import etree

from omni_web.assemble.metadata import ChapterMark
from omni_web.book import BookMetadata
from omni_web.files import write_atomic

__all__ = [
    "DESC_TXT",
    "METADATA_JSON",
    "READER_TXT",
    "Narration",
    "abs_metadata",
    "opf_document",
    "sidecar_files",
    "write_sidecars",
]

METADATA_JSON = "metadata.json"
DESC_TXT = "desc.txt"
READER_TXT = "reader.txt"
_OPF = "http://www.idpf.org/2007/opf"
_DC = "http://purl.org/dc/elements/1.1/"


@dataclass(frozen=True, slots=True)
class Narration:
    """Who reads this version: the narrator as shown (``Qwen3-TTS 0.6B CustomVoice (Vivian)``)
    and its parts, the voice and the model."""

    narrator: str
    voice: str
    model: str


def _series(meta: BookMetadata) -> list[str]:
    if not meta.series.strip():
        return []
    return [f"{meta.series.strip()} #{meta.series_index}" if meta.series_index else meta.series.strip()]


def abs_metadata(meta: BookMetadata, narration: Narration, marks: Sequence[ChapterMark]) -> dict[str, object]:
    """The ``metadata.json`` document in Audiobookshelf's keys."""
    return {
        "title": meta.title,
        "subtitle": meta.subtitle or None,
        "authors": list(meta.authors),
        "narrators": [narration.narrator],
        "series": _series(meta),
        "genres": list(meta.subjects),
        "publishedYear": str(meta.year) if meta.year else None,
        "publishedDate": meta.date or None,
        "publisher": meta.publisher or None,
        "description": meta.description or None,
        "isbn": meta.isbn or None,
        "asin": meta.asin or None,
        "language": meta.language or None,
        "explicit": False,
        "abridged": False,
        "tags": ["omni-web", narration.model],
        "chapters": [
            {"id": number, "start": mark.start_ms / 1000, "end": mark.end_ms / 1000, "title": mark.title}
            for number, mark in enumerate(marks)
        ],
    }


def opf_document(meta: BookMetadata, narration: Narration) -> bytes:
    """A package-document sidecar (EPUB 2 form, as calibre writes it) for the audiobook."""
    nsmap = {None: _OPF, "opf": _OPF, "dc": _DC}
    package = etree.Element(
        f"{{{_OPF}}}package", nsmap=nsmap, version="2.0", attrib={"unique-identifier": "id"}
    )
    metadata = etree.SubElement(package, f"{{{_OPF}}}metadata")

    def dc(name: str, text: str, **attrs: str) -> None:
        if text:
            element = etree.SubElement(
                metadata, f"{{{_DC}}}{name}", {f"{{{_OPF}}}{k}": v for k, v in attrs.items()}
            )
            element.text = text

    dc("title", meta.title)
    dc("subtitle", meta.subtitle)  # not Dublin Core; Audiobookshelf reads it
    for author in meta.authors:
        dc("creator", author, role="aut")
    dc("creator", narration.narrator, role="nrt")
    dc("date", meta.date)
    dc("publisher", meta.publisher)
    dc("description", meta.description)
    dc("language", meta.language)
    for subject in meta.subjects:
        dc("subject", subject)
    for item in meta.identifiers:
        if item.scheme:
            dc("identifier", item.value, scheme=item.scheme)
        else:
            dc("identifier", item.value)
    if meta.series.strip():
        etree.SubElement(metadata, f"{{{_OPF}}}meta", name="calibre:series", content=meta.series.strip())
        if meta.series_index:
            etree.SubElement(
                metadata, f"{{{_OPF}}}meta", name="calibre:series_index", content=meta.series_index
            )
    return etree.tostring(package, xml_declaration=True, encoding="utf-8", pretty_print=True)


def sidecar_files(
    meta: BookMetadata, narration: Narration, marks: Sequence[ChapterMark], *, stem: str
) -> dict[str, bytes]:
    """File name → bytes of every sidecar for one book folder (``stem`` names the OPF)."""
    files = {
        METADATA_JSON: json.dumps(abs_metadata(meta, narration, marks), indent=2, ensure_ascii=False).encode()
        + b"\n",
        f"{stem}.opf": opf_document(meta, narration),
        READER_TXT: (narration.narrator + "\n").encode(),
    }
    if meta.description.strip():
        files[DESC_TXT] = (meta.description.strip() + "\n").encode()
    return files


def write_sidecars(folder: Path, files: dict[str, bytes]) -> list[Path]:
    """Write each file atomically (a dot-named temporary file renamed into place)."""
    written = []
    for name, data in files.items():
        target = Path(folder) / name
        write_atomic(target, data)
        written.append(target)
    return written
