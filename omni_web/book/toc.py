"""The table of contents (EPUB 3 nav, EPUB 2 NCX, landmarks/guide) and sections in reading order.

Chapters follow the TOC, flattened in reading order; several TOC entries in one file split it at
their ``#fragment`` anchors. Text the TOC does not point at is not lost: leading documents (cover,
title page) become sections of their own, later unlisted documents continue the section before
them. Without a usable TOC every spine document is a section.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import unquote

from lxml import etree

from omni_web.book.extract import DocumentText, Segment, element_text, element_types, localname, parse_markup
from omni_web.book.model import TextBlock

__all__ = [
    "Landmark",
    "Section",
    "SpineDoc",
    "TocEntry",
    "assemble_sections",
    "parse_nav",
    "parse_ncx",
    "resolve_href",
    "split_ids_by_path",
]

_SCHEME_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
# Epub types on a document that mark it as front/back matter, so it stays a section of its own.
_STANDALONE_TYPES = frozenset(
    """
    cover titlepage halftitlepage toc copyright-page colophon index bibliography endnotes rearnotes
    footnotes loi lot landmarks doc-toc doc-index doc-bibliography doc-endnotes doc-colophon
    """.split()
)
# Project Gutenberg's footer starts with this line, before the licence's TOC anchor.
_PG_END_MARKERS = ("end of the project gutenberg", "end of this project gutenberg")


@dataclass(frozen=True, slots=True)
class TocEntry:
    """One table-of-contents link, resolved against the OPF directory."""

    title: str
    path: str  # file name relative to the OPF directory (as ebooklib's item.file_name)
    fragment: str  # "" when the link has no #fragment
    depth: int = 0


@dataclass(frozen=True, slots=True)
class Landmark:
    """An EPUB 3 landmark or EPUB 2 guide reference ("cover", "toc", "bodymatter"/"text", ...)."""

    kinds: frozenset[str]
    path: str
    fragment: str
    title: str


@dataclass(frozen=True, slots=True)
class SpineDoc:
    """One XHTML document of the spine, in reading order."""

    path: str
    linear: bool = True
    is_nav: bool = False


@dataclass(frozen=True, slots=True)
class Section:
    """A future chapter: where it starts, its TOC title ("" if none) and its text segments."""

    toc_title: str
    path: str
    fragment: str
    segments: tuple[Segment, ...]
    doc_title: str = ""
    is_nav: bool = False

    @property
    def href(self) -> str:
        """``path#fragment`` (or just the path)."""
        return f"{self.path}#{self.fragment}" if self.fragment else self.path


def resolve_href(href: str, base_file: str) -> tuple[str, str] | None:
    """Resolve a link found in ``base_file`` to (path, fragment); None for external links."""
    href = href.strip()
    if not href or _SCHEME_RE.match(href):
        return None
    path, _, fragment = href.partition("#")
    if path:
        path = posixpath.normpath(posixpath.join(posixpath.dirname(base_file), unquote(path)))
    else:
        path = base_file
    return path, unquote(fragment)


def parse_nav(data: bytes, nav_path: str) -> tuple[tuple[TocEntry, ...], tuple[Landmark, ...]]:
    """TOC entries (flattened, in order) and landmarks from an EPUB 3 navigation document."""
    root = parse_markup(data)
    navs = [element for element in root.iter() if localname(element) == "nav"]
    toc_nav = next((nav for nav in navs if element_types(nav) & {"toc", "doc-toc"}), None)
    if toc_nav is None and len(navs) == 1 and not element_types(navs[0]):
        toc_nav = navs[0]
    entries: list[TocEntry] = []
    if toc_nav is not None:
        top = next((el for el in toc_nav.iter() if localname(el) in ("ol", "ul")), None)
        if top is not None:
            _walk_nav_list(top, nav_path, 0, entries)
    landmarks: list[Landmark] = []
    for nav in navs:
        if "landmarks" not in element_types(nav):
            continue
        for link in nav.iter():
            target = resolve_href(link.get("href", ""), nav_path) if localname(link) == "a" else None
            if target is not None:
                landmarks.append(Landmark(element_types(link), target[0], target[1], element_text(link)))
    return tuple(entries), tuple(landmarks)


def _walk_nav_list(list_element: etree._Element, nav_path: str, depth: int, out: list[TocEntry]) -> None:
    for item in list_element:
        if localname(item) != "li":
            continue
        label = next((child for child in item if localname(child) not in ("ol", "ul", "")), None)
        if label is not None:
            link = label if localname(label) == "a" else next(
                (el for el in label.iter() if localname(el) == "a"), None
            )
            target = resolve_href(link.get("href", ""), nav_path) if link is not None else None
            if target is not None:
                out.append(TocEntry(element_text(label), target[0], target[1], depth))
        for child in item:
            if localname(child) in ("ol", "ul"):
                _walk_nav_list(child, nav_path, depth + 1, out)


def parse_ncx(data: bytes, ncx_path: str) -> tuple[TocEntry, ...]:
    """TOC entries (flattened, in document order) from an EPUB 2 NCX file."""
    root = parse_markup(data)
    nav_map = next((el for el in root.iter() if localname(el) == "navmap"), None)
    entries: list[TocEntry] = []
    if nav_map is not None:
        _walk_nav_points(nav_map, ncx_path, 0, entries)
    return tuple(entries)


def _walk_nav_points(parent: etree._Element, ncx_path: str, depth: int, out: list[TocEntry]) -> None:
    for point in parent:
        if localname(point) != "navpoint":
            continue
        title, target = "", None
        for child in point:
            name = localname(child)
            if name == "navlabel":
                title = element_text(child)
            elif name == "content":
                target = resolve_href(child.get("src", ""), ncx_path)
        if target is not None:
            out.append(TocEntry(title, target[0], target[1], depth))
        _walk_nav_points(point, ncx_path, depth + 1, out)


def split_ids_by_path(entries: Sequence[TocEntry]) -> dict[str, list[str]]:
    """The fragment ids each document must be split at."""
    ids: dict[str, list[str]] = {}
    for entry in entries:
        if entry.fragment and entry.fragment not in ids.setdefault(entry.path, []):
            ids[entry.path].append(entry.fragment)
    return ids


def assemble_sections(
    spine: Sequence[SpineDoc],
    entries: Sequence[TocEntry],
    documents: Mapping[str, DocumentText],
    *,
    landmark_paths: frozenset[str] = frozenset(),
    fixed_layout: bool = False,
) -> list[Section]:
    """Cut the spine's documents into sections following the TOC (or the spine, if it is useless).

    Args:
        spine: XHTML documents in reading order.
        entries: flattened TOC entries.
        documents: each spine document's text, split at its entries' fragments.
        landmark_paths: documents a landmark or guide reference points at (kept standalone).
        fixed_layout: the book is pre-paginated: its pages join into the chapters its TOC names (even
            one entry), the pages before the first entry into one front section, and a sentence cut
            by a page turn is one paragraph again.
    """
    in_spine = {doc.path for doc in spine}
    usable = [entry for entry in entries if entry.path in in_spine]
    targets = {(entry.path, entry.fragment) for entry in usable}
    text_docs = sum(1 for doc in spine if doc.linear and _has_words(documents.get(doc.path)))
    if not targets or (len(targets) < 2 and text_docs >= 3 and not fixed_layout):
        return _spine_sections(spine, documents)
    by_target: dict[tuple[str, str], TocEntry] = {}
    for entry in usable:
        by_target.setdefault((entry.path, entry.fragment), entry)
    sections: list[Section] = []
    last_toc: int | None = None  # index of the last section that a TOC entry opened
    for doc in spine:
        text = documents.get(doc.path)
        if text is None:
            continue
        doc_entries = [entry for entry in usable if entry.path == doc.path]
        if not doc_entries:
            if not doc.linear:
                continue
            standalone = last_toc is None or doc.is_nav or doc.path in landmark_paths or _matter_doc(text)
            if fixed_layout and sections and not doc.is_nav:
                standalone = False  # a page of a picture book continues the section before it
            if standalone:
                sections.append(_section("", doc, "", text.segments, text))
            else:
                sections[-1] = _extend(sections[-1], text.segments)
            continue
        last_toc = _cut_document(doc, text, by_target, sections, last_toc)
    return [_join_page_turns(section) for section in sections] if fixed_layout else sections


def _join_page_turns(section: Section) -> Section:
    """A paragraph cut by a page turn ("... où" | "le vent serait chaud ...") made one again."""
    segments: list[Segment] = []
    for segment in section.segments:
        previous = next((s for s in reversed(segments) if s.blocks), None)
        if previous is not None and segment.blocks and _continues(previous.blocks[-1], segment.blocks[0]):
            joined = TextBlock(kind=previous.blocks[-1].kind,
                               text=f"{previous.blocks[-1].text} {segment.blocks[0].text}")
            segments[segments.index(previous)] = dataclasses.replace(
                previous, blocks=(*previous.blocks[:-1], joined)
            )
            segment = dataclasses.replace(segment, blocks=segment.blocks[1:])
        segments.append(segment)
    return dataclasses.replace(section, segments=tuple(segments))


def _continues(last: TextBlock, first: TextBlock) -> bool:
    """Whether ``first`` goes on with the sentence ``last`` leaves open."""
    if last.is_heading or first.is_heading:
        return False
    ended = last.text.rstrip("\"'»\u201d\u2019)").endswith((".", "!", "?", "…", ":"))
    return not ended and first.text[:1].islower()


def _cut_document(
    doc: SpineDoc,
    text: DocumentText,
    by_target: Mapping[tuple[str, str], TocEntry],
    sections: list[Section],
    last_toc: int | None,
) -> int | None:
    """Add the sections one TOC-listed document yields; returns the new ``last_toc``."""
    whole = by_target.get((doc.path, ""))
    if whole is None:  # an entry whose #fragment is missing points at the file start instead
        whole = next(
            (e for (path, frag), e in by_target.items() if path == doc.path and frag not in text.anchors),
            None,
        )
    pending: list[Segment] = []
    for segment in text.segments:
        if segment.anchor is None:
            if whole is not None:
                sections.append(_section(whole.title, doc, whole.fragment, (segment,), text))
                last_toc = len(sections) - 1
            elif segment.is_empty:
                continue
            elif last_toc is None:
                sections.append(_section("", doc, "", (segment,), text))
            elif _starts_pg_footer(segment):
                pending.append(segment)  # belongs with the licence that follows, not the last chapter
            else:
                sections[-1] = _extend(sections[-1], (segment,))
            continue
        entry = by_target.get((doc.path, segment.anchor))
        if entry is None:
            sections[-1] = _extend(sections[-1], (segment,))
            continue
        sections.append(_section(entry.title, doc, segment.anchor, (*pending, segment), text))
        pending.clear()
        last_toc = len(sections) - 1
    if pending and sections:
        sections[-1] = _extend(sections[-1], tuple(pending))
    return last_toc


def _spine_sections(spine: Sequence[SpineDoc], documents: Mapping[str, DocumentText]) -> list[Section]:
    """One section per linear spine document."""
    return [
        _section("", doc, "", documents[doc.path].segments, documents[doc.path])
        for doc in spine
        if doc.linear and doc.path in documents
    ]


def _section(
    title: str, doc: SpineDoc, fragment: str, segments: tuple[Segment, ...], text: DocumentText
) -> Section:
    return Section(
        toc_title=title,
        path=doc.path,
        fragment=fragment,
        segments=segments,
        doc_title=text.title,
        is_nav=doc.is_nav,
    )


def _extend(section: Section, segments: tuple[Segment, ...]) -> Section:
    return Section(
        toc_title=section.toc_title,
        path=section.path,
        fragment=section.fragment,
        segments=section.segments + segments,
        doc_title=section.doc_title,
        is_nav=section.is_nav,
    )


def _has_words(text: DocumentText | None) -> bool:
    return text is not None and any(segment.word_count for segment in text.segments)


def _matter_doc(text: DocumentText) -> bool:
    """The document as a whole is marked as front/back matter by its epub:type."""
    return bool(text.segments) and bool(text.segments[0].types & _STANDALONE_TYPES)


def _starts_pg_footer(segment: Segment) -> bool:
    head = " ".join(block.text for block in segment.blocks[:3]).casefold()
    return any(marker in head for marker in _PG_END_MARKERS)
