"""HTML (a web page, a Gutenberg HTML book) to a Book: chapters at the headings, read by the EPUB extractor.

The page is parsed with lxml's HTML parser (no network, no huge trees), Project Gutenberg's header
and footer sections are removed, and the shallowest heading level used at least twice (``<h1>``,
else ``<h2>``, ...) cuts it into chapters. The text is then read exactly as an EPUB page is
(:func:`omni_web.book.parts.parts_from_markup`): notes, note markers, page numbers, scripts and
hidden elements are not read.
"""

from __future__ import annotations

import re
from pathlib import Path

from lxml import etree

from omni_web.book.extract import element_text, localname
from omni_web.book.gutenberg import END_RE, START_RE, is_producer_line
from omni_web.book.model import Book, BookMetadata
from omni_web.book.options import DEFAULT_OPTIONS, ReadOptions
from omni_web.book.parts import book_from_parts, parts_from_markup
from omni_web.book.safety import DEFAULT_LIMITS, ArchiveLimits, has_entity_declaration, read_limited
from omni_web.book.txt import decode_text, language_code
from omni_web.errors import UnsafeBook

__all__ = ["book_from_html", "load_html", "parse_html"]

_CHARSET_RE = re.compile(rb"<meta[^>]+charset\s*=", re.IGNORECASE)
_XML_DECL_RE = re.compile(r"^\s*<\?xml[^>]*\?>")
_PG_BOILERPLATE_RE = re.compile(
    r"pg-(?:header|footer|boilerplate|machine-header|start-separator|end-separator)"
)
_HEADINGS = ("h1", "h2", "h3")
_CHAPTER_WORDS = 150  # a heading followed by less text is a title-page line, not a chapter


def load_html(
    path: Path, *, limits: ArchiveLimits = DEFAULT_LIMITS, options: ReadOptions = DEFAULT_OPTIONS
) -> Book:
    """Read an HTML book.

    Raises:
        UnsafeBook: over the size limit, or it declares XML entities.
        EmptyBook: nothing to read aloud.
    """
    data = read_limited(path, name=path.name, limit=limits.max_text_file_bytes)
    if has_entity_declaration(data):
        raise UnsafeBook(
            f"'{path.name}' declares XML entities, which web pages do not need and which can exhaust "
            "memory; it was not opened."
        )
    return book_from_html(parse_html(data), path=path, source_format="html", options=options)


def parse_html(data: bytes | str) -> etree._Element:
    """An HTML document's tree (bytes with a declared charset are left to lxml; others are decoded first)."""
    parser = etree.HTMLParser(no_network=True, remove_comments=True, remove_pis=True, huge_tree=False)
    if isinstance(data, bytes) and not _CHARSET_RE.search(data[:4096]):
        data = decode_text(data)
    if isinstance(data, str):
        data = _XML_DECL_RE.sub("", data)
    root = etree.fromstring(data, parser) if data else None
    if root is None:
        root = etree.fromstring("<html><body></body></html>", parser)
    return root


def book_from_html(
    root: etree._Element,
    *,
    path: Path,
    source_format: str,
    title: str = "",
    authors: tuple[str, ...] = (),
    options: ReadOptions = DEFAULT_OPTIONS,
) -> Book:
    """The Book of a parsed HTML document (Markdown comes here too, rendered to HTML)."""
    for element in list(root.iter()):
        label = f"{element.get('id', '')} {element.get('class', '')}"
        if (
            isinstance(element.tag, str)
            and _PG_BOILERPLATE_RE.search(label)
            and element.getparent() is not None
        ):
            element.getparent().remove(element)
    _cut_gutenberg(root)
    h1s = [e for e in root.iter() if localname(e) == "h1" and element_text(e)]
    metadata = _metadata(root, path, title or (element_text(h1s[0]) if len(h1s) == 1 else ""), authors)
    split_ids = _split_headings(root)
    xml = etree.tostring(root, method="xml", encoding="utf-8")
    parts = parts_from_markup(xml, split_ids, options)
    return book_from_parts(parts, path=path, metadata=metadata, cover=None, source_format=source_format)


def _cut_gutenberg(root: etree._Element) -> None:
    """Remove a Gutenberg page's licence header and footer when they are plain text, not marked sections.

    Older Gutenberg HTML keeps them in ``<pre>`` or ``<p>`` blocks: everything up to the block with the
    START line, producer credits just after it, and everything from the "End of the Project
    Gutenberg" or END line on are not the book (else the last chapter shares a chapter with the licence).
    """
    body = next((e for e in root.iter() if localname(e) == "body"), None)
    if body is None:
        return
    start = _deepest(body, START_RE)
    if start is not None:
        _remove_around(start, body, before=True)
        for element in list(body.iter())[1:40]:
            if (
                element.getparent() is not None
                and len(element) == 0
                and is_producer_line(element_text(element))
            ):
                element.getparent().remove(element)
    end = _deepest(body, END_RE)
    if end is not None:
        _remove_around(end, body, before=False)


def _deepest(body: etree._Element, pattern: re.Pattern[str]) -> etree._Element | None:
    """The innermost element whose text has a line matching ``pattern`` (None when there is none)."""
    found = None
    for element in body.iter():
        if (
            isinstance(element.tag, str)
            and element is not body
            and pattern.search("".join(element.itertext()))
        ):
            found = element  # descendants come after their ancestors: the last match is the deepest
        elif found is not None and not _is_inside(element, found):
            break
    return found


def _is_inside(element: etree._Element, ancestor: etree._Element) -> bool:
    return any(parent is ancestor for parent in element.iterancestors())


def _remove_around(marker: etree._Element, body: etree._Element, *, before: bool) -> None:
    """Remove ``marker`` and everything before it (``before``) or after it, up to ``body``."""
    node = marker
    while node is not body and node.getparent() is not None:
        parent = node.getparent()
        siblings = node.itersiblings(preceding=before)
        for sibling in list(siblings):
            parent.remove(sibling)
        if before and parent.text:
            parent.text = None
        node = parent
    parent = marker.getparent()
    if parent is not None:
        if not before and marker.tail:
            marker.tail = None
        parent.remove(marker)


def _split_headings(root: etree._Element) -> list[str]:
    """Give the chapter headings ids and return them in order.

    The chapter level is the shallowest one used at least twice where most headings open a
    chapter-long stretch of text: a title set as two ``<h1>`` lines, or ``<h2>`` title-page lines
    above ``<h3>`` chapter titles, do not cut the book.
    """
    by_level = {tag: [e for e in root.iter() if localname(e) == tag and element_text(e)] for tag in _HEADINGS}
    usable = [tag for tag in _HEADINGS if len(by_level[tag]) >= 2]
    level = next(
        (tag for tag in usable if _opens_chapters(root, by_level[tag])), usable[0] if usable else None
    )
    if level is None:
        return []
    ids = []
    for number, element in enumerate(by_level[level], start=1):
        element.set("id", f"ow-chapter-{number}")
        ids.append(f"ow-chapter-{number}")
    return ids


def _opens_chapters(root: etree._Element, headings: list[etree._Element]) -> bool:
    """Whether more than half of ``headings`` are followed by chapter-long text before the next one."""
    marks = {id(element) for element in headings}
    words, lengths = -1, []
    for element in root.iter():
        if id(element) in marks:
            if words >= 0:
                lengths.append(words)
            words = 0
        elif words >= 0 and isinstance(element.tag, str) and localname(element) not in ("script", "style"):
            words += len((element.text or "").split())
        if words >= 0:
            words += len((element.tail or "").split())
    lengths.append(max(words, 0))
    return 2 * sum(length >= _CHAPTER_WORDS for length in lengths) > len(lengths)


_GUTENBERG_TITLE_RE = re.compile(r"(?i)^the\s+project\s+gutenberg\s+e-?book\s+of\s+")
_GUTENBERG_TAIL_RE = re.compile(r"(?i),?\s+an?\s+project\s+gutenberg\s+e-?book\.?$")
_BY_RE = re.compile(r"(?i),?\s+by\s+(?P<author>[^,]{3,80}?)\.?$")
_BY_COMMA_RE = re.compile(r"(?i),\s+by\s+(?P<author>[^,]{3,80}?)\.?$")


def _title_and_author(page_title: str) -> tuple[str, str]:
    """A page title without Gutenberg's "The Project Gutenberg eBook of" and its ", by Author" (given
    apart): "The Project Gutenberg eBook of The Little Colonel's Hero, by Annie Fellows Johnston."."""
    title = _GUTENBERG_TITLE_RE.sub("", page_title.strip())
    untailed = _GUTENBERG_TAIL_RE.sub("", title)
    # "X by Y, a Project Gutenberg eBook" names its author without a comma; other titles need one
    # ("Stand by Me" is a title).
    by = _BY_RE.search(untailed) if untailed != title else _BY_COMMA_RE.search(title)
    title = untailed
    if by is None:
        return title, ""
    return title[: by.start()].strip(), by.group("author").strip()


def _metadata(root: etree._Element, path: Path, title: str, authors: tuple[str, ...]) -> BookMetadata:
    metas: dict[str, str] = {}
    page_title = ""
    for element in root.iter():
        tag = localname(element)
        if tag == "meta" and element.get("content"):
            key = (element.get("name") or element.get("property") or "").lower()
            metas.setdefault(key, " ".join(element.get("content", "").split()))
        elif tag == "title" and not page_title:
            page_title = element_text(element)
    language = (
        root.get("lang")
        or root.get("{http://www.w3.org/XML/1998/namespace}lang")
        or metas.get("dc.language", "")
    )
    author = metas.get("author") or metas.get("dc.creator") or metas.get("dcterms.creator") or ""
    page_title, by = _title_and_author(page_title)
    author = author or by
    return BookMetadata(
        title=metas.get("dc.title") or metas.get("dcterms.title") or page_title or title or path.stem,
        authors=authors or ((author,) if author else ()),
        language=language_code(language),
        description=metas.get("description") or metas.get("dc.description", ""),
        date=metas.get("dc.date") or metas.get("dcterms.created", ""),
        publisher=metas.get("dc.publisher", ""),
        identifier=metas.get("dc.identifier") or metas.get("dcterms.identifier", ""),
    )
