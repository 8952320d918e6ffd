"""XHTML content documents to paragraph and heading blocks, split at TOC anchors.

One walk over a document's tree yields *segments*: the text before the first anchor, then one
segment per anchor id (in document order), so several chapters sharing one file come apart at
their ``#fragment`` targets. The walk keeps paragraph and heading boundaries and drops what must
not be read aloud: note references and page-break markers (``epub:type``/``role``), footnote and
endnote bodies inside chapters, line and page numbers, scripts, styles, images, ruby annotations
and hidden elements.
"""

from __future__ import annotations

import html.entities
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from lxml import etree

from omni_web.book.codeblocks import is_code_block
from omni_web.book.model import BlockKind, TextBlock
from omni_web.book.notemarks import NUMBER_CLASSES, is_note_marker
from omni_web.book.options import DEFAULT_OPTIONS, ReadOptions, note_paragraph, table_lines
from omni_web.book.safety import parse_xml
from omni_web.book.svgtext import svg_paragraphs
from omni_web.book.text import count_words

__all__ = [
    "DocumentText",
    "Segment",
    "element_text",
    "element_types",
    "extract_document",
    "localname",
    "parse_markup",
]

_EPUB_TYPE = "{http://www.idpf.org/2007/ops}type"
_BLOCK_TAGS = frozenset(
    """
    address article aside blockquote body caption center dd details dialog div dl dt fieldset
    figcaption figure footer form header hgroup hr legend li main nav ol p pre section summary
    table tbody td tfoot th thead tr ul
    """.split()
)
_SWITCH_CASE_TAGS = frozenset({"{http://www.idpf.org/2007/ops}case", "epub:case"})
_HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_IMAGE_TAGS = frozenset({"img", "svg", "image"})
# Never spoken: not text, or text that duplicates the main text (ruby annotations).
_SKIP_TAGS = frozenset(
    """
    head script style noscript template img svg math audio video object embed iframe canvas map
    button input select textarea rt rp
    """.split()
)
_NOTEREF_TYPES = frozenset({"noteref", "doc-noteref", "annoref"})
_PAGEBREAK_TYPES = frozenset({"pagebreak", "doc-pagebreak"})
_NOTES_SECTION_TYPES = frozenset({"footnotes", "endnotes", "rearnotes", "doc-endnotes"})
_NOTE_TYPES = _NOTES_SECTION_TYPES | {
    "footnote",
    "endnote",
    "rearnote",
    "note",
    "doc-footnote",
    "doc-endnote",
}
# Web-help navigation kept in book pages (DITA, Sphinx, DocBook): "Previous topic: ... Next topic: ...".
_NAV_CLASSES = frozenset(
    {
        "related-links",
        "familylinks",
        "navheader",
        "navfooter",
        "breadcrumbs",
        "breadcrumb",
        "prev-next",
        "nav-links",
        "relbar",
        "related",
    }
)
_NOTE_ID_RE = re.compile(r"foot-?note|end-?note", re.IGNORECASE)
_SPACE_RE = re.compile(r"\s+")
_HIDDEN_STYLE_RE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
# Note bodies are read only on a notes page: headings only besides the notes, or under a tenth of them.
_NOTES_PAGE_RATIO = 10


@dataclass(frozen=True, slots=True)
class Segment:
    """The text of one stretch of a document: before the first anchor, or from one anchor on.

    ``types`` holds the ``epub:type``/``role`` tokens that cover most of the segment's words (all
    tokens seen, for a segment without words): "titlepage", "cover", "bibliography", ...
    """

    anchor: str | None
    blocks: tuple[TextBlock, ...]
    image_count: int
    link_words: int
    types: frozenset[str]
    word_count: int

    @property
    def is_empty(self) -> bool:
        """No text and no images."""
        return not self.blocks and not self.image_count


@dataclass(frozen=True, slots=True)
class DocumentText:
    """A content document's segments in document order and its ``<title>``."""

    segments: tuple[Segment, ...]
    title: str

    @property
    def anchors(self) -> frozenset[str]:
        """The anchor ids that were found."""
        return frozenset(segment.anchor for segment in self.segments if segment.anchor is not None)


def parse_markup(data: bytes) -> etree._Element:
    """Parse XHTML (or HTML as a fallback) safely, with named entities turned into text."""
    try:
        root = parse_xml(data, recover=True)
    except etree.XMLSyntaxError:
        parser = etree.HTMLParser(no_network=True, remove_comments=True, remove_pis=True)
        root = etree.fromstring(data, parser)
        if root is None:
            raise
    _inline_entities(root)
    return root


def localname(element: etree._Element) -> str:
    """The tag without namespace, lowercased ("" for comments and the like)."""
    tag = element.tag
    if not isinstance(tag, str):
        return ""
    return tag.rsplit("}", 1)[-1].lower()


def element_types(element: etree._Element) -> frozenset[str]:
    """``epub:type`` and ARIA ``role`` tokens of an element, lowercased, prefixes dropped."""
    raw = " ".join(
        value for value in (element.get(_EPUB_TYPE), element.get("epub:type"), element.get("role")) if value
    )
    return frozenset(token.rsplit(":", 1)[-1].lower() for token in raw.split())


def element_text(element: etree._Element) -> str:
    """All text inside an element, whitespace collapsed."""
    return _SPACE_RE.sub(" ", "".join(element.itertext())).strip()


def extract_document(
    data: bytes, *, split_ids: Iterable[str] = (), options: ReadOptions = DEFAULT_OPTIONS
) -> DocumentText:
    """Blocks of one XHTML document, cut into segments at the given element ids.

    Args:
        data: the document's bytes (already checked by :mod:`omni_web.book.safety`).
        split_ids: ids (TOC ``#fragment`` targets) where a new segment starts; ids that do not
            occur are ignored, so ``DocumentText.anchors`` tells which were found.
        options: ``options.footnotes`` says whether note bodies are skipped or read after the
            paragraph that references them.
    """
    root = parse_markup(data)
    title = ""
    for element in root.iter():
        if localname(element) == "title":
            title = element_text(element)
            break
    walker = _Walker(frozenset(split_ids), options)
    walker.walk(root, frozenset())
    return DocumentText(segments=walker.finish(), title=title)


def _inline_entities(root: etree._Element) -> None:
    """Replace undeclared entity references (&nbsp; in XHTML 1.1) with their characters."""
    for entity in list(root.iter(etree.Entity)):
        name = entity.name if isinstance(entity.name, str) else ""
        value = html.entities.html5.get(f"{name};", "")
        replacement = value + (entity.tail or "")
        parent = entity.getparent()
        if parent is None:
            continue
        previous = entity.getprevious()
        if previous is not None:
            previous.tail = (previous.tail or "") + replacement
        else:
            parent.text = (parent.text or "") + replacement
        parent.remove(entity)


@dataclass(frozen=True, slots=True)
class _RawBlock:
    block: TextBlock
    words: int
    context: frozenset[str]
    in_note: bool
    refs: tuple[str, ...] = ()  # the note ids this block's markers point to
    note_id: str | None = None  # the note this block belongs to (the innermost id inside a note)


@dataclass
class _SegmentBuilder:
    anchor: str | None
    keep_notes: bool
    context_types: frozenset[str]
    blocks: list[_RawBlock] = field(default_factory=list)
    image_count: int = 0
    link_words: int = 0
    types_seen: set[str] = field(default_factory=set)

    def keeps_notes(self) -> bool:
        """Whether this segment is a notes page (or starts in a notes section), whose notes are read."""
        note_words = sum(raw.words for raw in self.blocks if raw.in_note)
        main_words = sum(raw.words for raw in self.blocks if not raw.in_note)
        prose_words = sum(raw.words for raw in self.blocks if not raw.in_note and not raw.block.is_heading)
        return self.keep_notes or (
            note_words > 0 and (prose_words == 0 or main_words * _NOTES_PAGE_RATIO < note_words)
        )

    def build(self, moved_notes: dict[str, list[str]]) -> Segment:
        """Drop note bodies unless this segment is a notes page; ``moved_notes`` (note id -> its
        paragraphs) are read after the paragraph that references them."""
        keep_notes = self.keeps_notes()
        kept: list[_RawBlock] = []
        for raw in self.blocks:
            if keep_notes or not raw.in_note:
                kept.append(raw)
            for ref in raw.refs if not raw.in_note else ():
                # Each note once, after the first paragraph that points to it.
                for text in moved_notes.pop(ref, ()):
                    moved = note_paragraph(text)
                    kept.append(
                        _RawBlock(
                            TextBlock(kind=BlockKind.PARAGRAPH, text=moved),
                            count_words(moved),
                            raw.context,
                            in_note=False,
                        )
                    )
        words = sum(raw.words for raw in kept)
        if words:
            type_words: Counter[str] = Counter()
            for raw in kept:
                for token in raw.context:
                    type_words[token] += raw.words
            types = frozenset(t for t, count in type_words.items() if count * 2 >= words)
        else:
            types = frozenset(self.types_seen | self.context_types)
        return Segment(
            anchor=self.anchor,
            blocks=tuple(raw.block for raw in kept),
            image_count=self.image_count,
            link_words=self.link_words,
            types=types,
            word_count=words,
        )


class _Walker:
    """One document walk; collects blocks into segments (private, one per call)."""

    def __init__(self, split_ids: frozenset[str], options: ReadOptions) -> None:
        self.split_ids = split_ids
        self.options = options
        self.refs: list[str] = []
        self.note_id: str | None = None
        self.done: list[_SegmentBuilder] = []
        self.current = _SegmentBuilder(anchor=None, keep_notes=False, context_types=frozenset())
        self.buffer: list[str] = []
        self.kinds: list[BlockKind] = [BlockKind.PARAGRAPH]
        self.note_depth = 0

    def finish(self) -> tuple[Segment, ...]:
        self.flush(frozenset())
        builders = [*self.done, self.current]
        moved: dict[str, list[str]] = {}
        if self.options.notes_at_paragraph_end:
            for builder in builders:
                if not builder.keeps_notes():
                    for raw in builder.blocks:
                        if raw.in_note and raw.note_id and not raw.block.is_heading:
                            moved.setdefault(raw.note_id, []).append(raw.block.text)
        return tuple(builder.build(moved) for builder in builders)

    def flush(self, context: frozenset[str]) -> None:
        """Close the block being collected (if it has text) into the current segment."""
        text = _SPACE_RE.sub(" ", "".join(self.buffer)).strip()
        self.buffer.clear()
        refs, self.refs = tuple(self.refs), []
        if not text:
            return
        block = TextBlock(kind=self.kinds[-1], text=text)
        raw = _RawBlock(
            block=block,
            words=count_words(text),
            context=context,
            in_note=self.note_depth > 0,
            refs=refs,
            note_id=self.note_id if self.note_depth > 0 else None,
        )
        self.current.blocks.append(raw)
        self.current.types_seen.update(context)

    def start_segment(self, anchor: str, *, before: frozenset[str], inside: frozenset[str]) -> None:
        """Close the text so far into the old segment and open the anchor's segment."""
        self.flush(before)
        self.done.append(self.current)
        keep_notes = bool(inside & _NOTES_SECTION_TYPES)
        self.current = _SegmentBuilder(anchor=anchor, keep_notes=keep_notes, context_types=inside)

    def walk(self, element: etree._Element, context: frozenset[str]) -> None:
        tag = localname(element)
        if not tag:
            self.buffer.append(element.tail or "")
            return
        types = element_types(element)
        inner = context | types if types else context
        element_id = element.get("id")
        if element_id in self.split_ids:
            self.start_segment(element_id, before=context, inside=inner)
        if tag == "svg" and self._read_svg(element, inner):
            self.buffer.append(element.tail or "")
            return
        if self._skipped(element, tag, types):
            if types & _NOTEREF_TYPES or tag in ("a", "sup"):
                self.refs.extend(_fragments(element))
            if tag in _IMAGE_TAGS:
                self.current.image_count += 1
                self.current.types_seen.update(inner)
            self.buffer.append(element.tail or "")
            return
        if tag == "br":
            self.buffer.append(" " + (element.tail or ""))
            return
        if tag == "table":
            self._read_table(element, inner)
            self.buffer.append(element.tail or "")
            return
        is_heading = tag in _HEADING_TAGS or "heading" in types
        is_block = is_heading or tag in _BLOCK_TAGS
        is_note = _is_note(element, tag, types)
        if is_block or is_note:
            self.flush(context)
            self.kinds.append(BlockKind.HEADING if is_heading else self.kinds[-1])
        self.note_depth += is_note
        outer_note_id = self.note_id
        if self.note_depth and element_id:
            self.note_id = element_id
        first_block = len(self.current.blocks)
        self.buffer.append(_letter_gap(element.text or "", element[0] if len(element) else None))
        for child in element:
            self.walk(child, inner)
        if tag == "a" and element.get("href"):
            self.current.link_words += count_words(element_text(element))
        if is_block or is_note:
            self.flush(inner)
            self.kinds.pop()
        self.note_depth -= is_note
        self.note_id = outer_note_id
        if tag in ("header", "hgroup"):
            self._join_heading_group(first_block)
        tail = element.tail or ""
        self.buffer.append(_letter_gap(tail, element.getnext()) if _is_letter(element.text) else tail)

    def _read_svg(self, element: etree._Element, context: frozenset[str]) -> bool:
        """Text set in SVG (fixed-layout pages) as paragraphs in visual order; False when it has none."""
        if element.get("hidden") is not None or _HIDDEN_STYLE_RE.search(element.get("style", "")):
            return False
        paragraphs = svg_paragraphs(element)
        if not paragraphs:
            return False
        self.flush(context)
        self.kinds.append(BlockKind.PARAGRAPH)
        for paragraph in paragraphs:
            self.buffer.append(paragraph)
            self.flush(context)
        self.kinds.pop()
        if any(localname(child) == "image" for child in element.iter()):
            self.current.image_count += 1
        return True

    def _read_table(self, table: etree._Element, context: frozenset[str]) -> None:
        """A table as the table setting says: one sentence per row, or a "Table: ..." note."""
        rows = [
            [element_text(cell) for cell in row if localname(cell) in ("td", "th")]
            for row in table.iter()
            if localname(row) == "tr"
        ]
        caption = next((element_text(e) for e in table.iter() if localname(e) == "caption"), "")
        self.flush(context)
        self.kinds.append(BlockKind.PARAGRAPH)
        for line in table_lines(rows, mode=self.options.tables, caption=caption):
            self.buffer.append(line)
            self.flush(context)
        self.kinds.pop()
        self.current.link_words += sum(
            count_words(element_text(a)) for a in table.iter() if localname(a) == "a" and a.get("href")
        )

    @staticmethod
    def _skipped(element: etree._Element, tag: str, types: frozenset[str]) -> bool:
        """Whether an element's content must not be read (its tail still is)."""
        if tag in _SKIP_TAGS or element.get("hidden") is not None:
            return True
        if element.tag in _SWITCH_CASE_TAGS:
            return True  # <epub:switch>: read only its XHTML <epub:default> fallback
        if _HIDDEN_STYLE_RE.search(element.get("style", "")):
            return True
        if types & (_NOTEREF_TYPES | _PAGEBREAK_TYPES) or is_code_block(element, tag):
            return True
        classes = element.get("class", "").lower().split()
        if NUMBER_CLASSES.intersection(classes) or _NAV_CLASSES.intersection(classes):
            return True
        return tag in ("a", "sup") and is_note_marker(element, tag)

    def _join_heading_group(self, first_block: int) -> None:
        """A <header>/<hgroup> of several headings ("Chapter 2" + "What is cancer?") is one heading."""
        group = self.current.blocks[first_block:]
        if len(group) < 2 or not all(raw.block.is_heading for raw in group):
            return
        text = group[0].block.text
        for raw in group[1:]:
            separator = " " if text[-1:] in ".:;!?\u061f" else ": "
            text = f"{text}{separator}{raw.block.text}"
        joined = TextBlock(kind=BlockKind.HEADING, text=text)
        raw = _RawBlock(
            block=joined,
            words=sum(r.words for r in group),
            context=group[0].context,
            in_note=group[0].in_note,
        )
        del self.current.blocks[first_block:]
        self.current.blocks.append(raw)


def _is_letter(text: str | None) -> bool:
    return text is not None and len(text.strip()) == 1 and text.strip().isalpha()


def _letter_gap(text: str, following: etree._Element | None) -> str:
    """Text before a one-letter element, without the source's line-break indentation when it only
    separates letters set one per element (small capitals: "T<span>h</span><span>i</span>..." is "Thi...")."""
    if following is None or not _is_letter(following.text) or "\n" not in text:
        return text
    stripped = text.rstrip()
    if stripped and not stripped[-1].isalpha():
        return text
    return stripped if stripped else ""


def _fragments(element: etree._Element) -> list[str]:
    """The ``#id`` targets of a note marker's links (the element itself or links inside it)."""
    hrefs = [
        a.get("href") or a.get("{http://www.w3.org/1999/xlink}href") or ""
        for a in element.iter()
        if localname(a) == "a"
    ]
    return [href.split("#", 1)[1] for href in hrefs if "#" in href and href.split("#", 1)[1]]


def _is_note(element: etree._Element, tag: str, types: frozenset[str]) -> bool:
    """A footnote/endnote body or a notes section (by epub:type/role, or an aside named so)."""
    if types & _NOTE_TYPES:
        return True
    if tag == "aside":
        label = f"{element.get('id', '')} {element.get('class', '')}"
        return bool(_NOTE_ID_RE.search(label))
    return False
