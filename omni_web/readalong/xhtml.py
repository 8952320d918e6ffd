"""Find spoken sentences in a book's XHTML and wrap each in ``<span id=...>``, changing nothing else.

The text a chapter was read from went through extraction and normalisation, so it is not a
substring of the XHTML. Instead the document's visible text is cut into tokens (see
:mod:`omni_web.readalong.tokens`) and the chapter's sentences are aligned to them; each sentence
gets the stretch from its first to its last aligned token, widened over the punctuation that
touches it (quotes, the full stop).

Wrapping a stretch that crosses inline markup (``Hello <em>world. Next</em> one.``) splits the
inline elements at the sentence boundary (``<em>world.</em>`` + ``<em> Next</em>``; the copy
drops the ``id``), so the result stays well-formed and every sentence is one element. A stretch
that would cross block elements (a heading group read as one line) is left unwrapped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from lxml import etree

from omni_web.readalong.tokens import Token, align_tokens_exact, tokenize

__all__ = ["DocumentText", "Placement", "document_text", "place_sentences", "wrap_sentences"]

_XHTML = "http://www.w3.org/1999/xhtml"
_EPUB_TYPE = "{http://www.idpf.org/2007/ops}type"
# Never read aloud, never searched.
_SKIP = frozenset(
    "head script style noscript template svg math rt rp title audio video object iframe".split()
)
_SKIP_TYPES = frozenset({"pagebreak", "doc-pagebreak", "noteref", "doc-noteref"})
# Elements a sentence span may enclose (phrasing content), and the ones that may be split in two.
_SPLITTABLE = frozenset(
    "a abbr b bdi bdo big cite code del dfn em font i ins kbd mark q s samp small span strike strong sub sup "
    "time tt u var".split()
)
_PHRASING = _SPLITTABLE | frozenset(
    "br wbr img data label output meter progress ruby rt rp input button select textarea svg math audio "
    "video "
    "canvas embed object iframe noscript template".split()
)
_MARK = f"{{{_XHTML}}}omni-readalong-mark"
# Put between blocks in the text stream: whitespace to the tokenizer, and a wall no sentence crosses.
_BLOCK_BREAK = "\u2029"


def _local(element: etree._Element) -> str:
    tag = element.tag
    return tag.rsplit("}", 1)[-1].lower() if isinstance(tag, str) else ""


@dataclass(frozen=True, slots=True)
class _Piece:
    """One text string of the tree: an element's ``text`` or ``tail``, at ``offset`` in the stream."""

    element: etree._Element
    attr: str  # "text" | "tail"
    offset: int
    length: int


@dataclass
class DocumentText:
    """A parsed document, its visible text as one stream, and the stream's tokens."""

    root: etree._Element
    stream: str
    pieces: list[_Piece]
    tokens: list[Token]
    id_offsets: dict[str, int] = field(default_factory=dict)  # element id -> where its text starts

    def offset_of(self, fragment: str) -> int | None:
        """Where the element with id ``fragment`` starts in the stream (None: not in the text)."""
        return self.id_offsets.get(fragment) if fragment else None


def _skipped(element: etree._Element) -> bool:
    if _local(element) in _SKIP or element.get("hidden") is not None:
        return True
    types = f"{element.get(_EPUB_TYPE, '')} {element.get('role', '')}".lower().split()
    return any(t.rsplit(":", 1)[-1] in _SKIP_TYPES for t in types)


def document_text(root: etree._Element) -> DocumentText:
    """The visible text of ``root``'s body in reading order, with a map back to the tree."""
    parts: list[str] = []
    pieces: list[_Piece] = []
    id_offsets: dict[str, int] = {}
    offset = 0

    def add(element: etree._Element | None, attr: str, text: str | None) -> None:
        nonlocal offset
        if not text:
            return
        if element is not None:
            pieces.append(_Piece(element, attr, offset, len(text)))
        parts.append(text)
        offset += len(text)

    def walk(element: etree._Element) -> None:
        if not isinstance(element.tag, str) or _skipped(element):
            return
        if element.get("id"):
            id_offsets.setdefault(element.get("id"), offset)
        block = _local(element) not in _PHRASING
        if block:
            add(None, "", _BLOCK_BREAK)  # blocks never run together into one token
        add(element, "text", element.text)
        for child in element:
            walk(child)
            add(child, "tail", child.tail)
        if block:
            add(None, "", _BLOCK_BREAK)

    body = next((e for e in root.iter() if _local(e) == "body"), root)
    walk(body)
    stream = "".join(parts)
    return DocumentText(root, stream, pieces, tokenize(stream), id_offsets)


@dataclass(frozen=True, slots=True)
class Placement:
    """Where one sentence was found: its stream range in one document."""

    sentence: int  # index into the sentences given to :func:`place_sentences`
    document: int  # index into the documents given
    start: int
    end: int


def place_sentences(
    sentences: Sequence[str],
    documents: Sequence[DocumentText],
    *,
    ranges: Sequence[tuple[int, int | None]] | None = None,
) -> list[Placement]:
    """Align sentences (in reading order) to the documents' text (in spine order).

    Sentences found nowhere (a spoken title that is not in the text, a sentence the text package
    rewrote beyond recognition) get no placement. Placements never overlap.

    Args:
        ranges: per document, the stream range ``(start, end or None)`` the sentences may be found
            in: a chapter that starts or ends inside a page (at its anchor) is searched only there,
            so its spoken title is not found in a table of contents or another chapter above it.
    """
    ref_keys: list[str] = []
    ref_sentence: list[int] = []
    for n, sentence in enumerate(sentences):
        for token in tokenize(sentence):
            ref_keys.append(token.key)
            ref_sentence.append(n)
    bounds = list(ranges) if ranges is not None else [(0, None)] * len(documents)
    doc_tokens = [
        (d, token)
        for d, doc in enumerate(documents)
        for token in doc.tokens
        if token.start >= bounds[d][0] and (bounds[d][1] is None or token.end <= bounds[d][1])
    ]
    mapping, equal = align_tokens_exact(ref_keys, [token.key for _, token in doc_tokens])
    paired: dict[int, int] = {}  # doc token index -> sentence
    exact: dict[int, list[int]] = {}  # sentence -> doc token indexes matched word for word
    for i, j in enumerate(mapping):
        if j is not None:
            paired[j] = ref_sentence[i]
            if equal[i]:
                exact.setdefault(ref_sentence[i], []).append(j)
    placements: list[Placement] = []
    for n in sorted(exact):
        # The range runs between the sentence's exact matches, widened over neighbouring tokens
        # paired with it as substitutions; a stretch spread thin over unrelated text (another
        # chapter on the same page, a title not in the text) is never taken in.
        d = doc_tokens[exact[n][0]][0]
        same = [j for j in exact[n] if doc_tokens[j][0] == d]
        first, last = same[0], same[-1]
        while first - 1 in paired and paired[first - 1] == n and doc_tokens[first - 1][0] == d:
            first -= 1
        while last + 1 in paired and paired[last + 1] == n and doc_tokens[last + 1][0] == d:
            last += 1
        start, end = doc_tokens[first][1].start, doc_tokens[last][1].end
        wall = documents[d].stream.find(_BLOCK_BREAK, start, end)
        if wall >= 0:  # a sentence lives in one block: keep the part in the block it starts in
            end = len(documents[d].stream[start:wall].rstrip()) + start
        if placements and placements[-1].document == d and start < placements[-1].end:
            continue
        placements.append(Placement(n, d, start, end))
    return _widen(placements, documents)


def _widen(placements: list[Placement], documents: Sequence[DocumentText]) -> list[Placement]:
    """Take in the punctuation touching each range (opening quotes, the full stop, closing quotes)."""
    out: list[Placement] = []
    for k, p in enumerate(placements):
        stream = documents[p.document].stream
        floor = out[-1].end if out and out[-1].document == p.document else 0
        ceiling = (
            placements[k + 1].start
            if k + 1 < len(placements) and placements[k + 1].document == p.document
            else len(stream)
        )
        start, end = p.start, p.end
        while start > floor and not stream[start - 1].isspace() and not stream[start - 1].isalnum():
            start -= 1
        while end < ceiling and not stream[end].isspace() and not stream[end].isalnum():
            end += 1
        out.append(Placement(p.sentence, p.document, start, end))
    return out


def _position(doc: DocumentText, offset: int, *, at_end: bool) -> tuple[etree._Element, str, int]:
    """The (element, "text"|"tail", index) of a stream offset (an end prefers the earlier string)."""
    for piece in doc.pieces:
        inside = piece.offset <= offset < piece.offset + piece.length
        if at_end:
            inside = piece.offset < offset <= piece.offset + piece.length
        if inside:
            return piece.element, piece.attr, offset - piece.offset
    raise ValueError(f"offset {offset} is not in any text of the document")


def _insert_mark(element: etree._Element, attr: str, index: int) -> etree._Element:
    mark = etree.Element(_MARK)
    if attr == "text":
        text = element.text or ""
        element.text, mark.tail = text[:index], text[index:]
        element.insert(0, mark)
    else:
        text = element.tail or ""
        element.tail, mark.tail = text[:index], text[index:]
        element.addnext(mark)
    return mark


def _ancestors(element: etree._Element) -> list[etree._Element]:
    out = []
    parent = element.getparent()
    while parent is not None:
        out.append(parent)
        parent = parent.getparent()
    return out


def _lift(mark: etree._Element, level: etree._Element) -> bool:
    """Move ``mark`` up until ``level`` is its parent, splitting inline elements it sits in."""
    while (parent := mark.getparent()) is not level:
        if parent is None or _local(parent) not in _SPLITTABLE:
            return False
        index = parent.index(mark)
        nothing_before = index == 0 and not parent.text
        nothing_after = not mark.tail and index == len(parent) - 1
        grand = parent.getparent()
        if nothing_before:
            parent.text = mark.tail
            parent.remove(mark)
            mark.tail = None
            _insert_before(parent, mark)
        elif nothing_after:
            parent.remove(mark)
            mark.tail = parent.tail
            parent.tail = None
            parent.addnext(mark)
        else:
            twin = etree.Element(
                parent.tag, {k: v for k, v in parent.attrib.items() if k != "id"}, nsmap=None
            )
            twin.text = mark.tail
            for child in list(parent)[index + 1 :]:
                twin.append(child)  # moves it with its tail
            parent.remove(mark)
            twin.tail = parent.tail
            parent.tail = None
            mark.tail = None
            parent.addnext(mark)
            mark.addnext(twin)
        assert grand is mark.getparent()
    return True


def _insert_before(element: etree._Element, new: etree._Element) -> None:
    """Insert ``new`` (no tail) just before ``element``, keeping the text before it in place."""
    element.addprevious(new)


def _top_child(mark: etree._Element, level: etree._Element) -> etree._Element:
    """The child of ``level`` that holds ``mark`` (or the mark itself)."""
    node = mark
    while node.getparent() is not level:
        node = node.getparent()
    return node


def _wrappable(start_mark: etree._Element, end_mark: etree._Element, level: etree._Element) -> bool:
    """Whether the stretch between the marks can become one span without splitting a block."""
    if _local(level) == "html":
        return False
    for mark in (start_mark, end_mark):
        parent = mark.getparent()
        while parent is not level:
            if _local(parent) not in _SPLITTABLE:
                return False
            parent = parent.getparent()
    first, last = _top_child(start_mark, level), _top_child(end_mark, level)
    node = first.getnext()
    while node is not None and node is not last:
        if isinstance(node.tag, str) and _local(node) not in _PHRASING:
            return False
        node = node.getnext()
    return node is last or first is last


def _wrap_one(doc: DocumentText, start: int, end: int, span_id: str) -> bool:
    end_el, end_attr, end_index = _position(doc, end, at_end=True)
    start_el, start_attr, start_index = _position(doc, start, at_end=False)
    end_mark = _insert_mark(end_el, end_attr, end_index)
    start_mark = _insert_mark(start_el, start_attr, start_index)
    start_chain = [start_mark.getparent(), *_ancestors(start_mark.getparent())]
    end_chain = set(map(id, [end_mark.getparent(), *_ancestors(end_mark.getparent())]))
    level = next(e for e in start_chain if id(e) in end_chain)
    ok = _wrappable(start_mark, end_mark, level) and _lift(end_mark, level) and _lift(start_mark, level)
    if ok:
        between = []
        sibling = start_mark.getnext()
        while sibling is not None and sibling is not end_mark:
            between.append(sibling)
            sibling = sibling.getnext()
        span = etree.Element(f"{{{_XHTML}}}span" if _namespaced(level) else "span", nsmap=None)
        span.set("id", span_id)
        span.text = start_mark.tail
        for element in between:
            span.append(element)
        span.tail = end_mark.tail
        start_mark.tail = None
        end_mark.tail = None
        start_mark.addnext(span)
    _drop(start_mark)
    _drop(end_mark)
    return ok


def _namespaced(element: etree._Element) -> bool:
    return isinstance(element.tag, str) and element.tag.startswith(f"{{{_XHTML}}}")


def _drop(mark: etree._Element) -> None:
    """Remove a marker, giving its tail back to the text before it."""
    parent = mark.getparent()
    if parent is None:
        return
    tail = mark.tail or ""
    previous = mark.getprevious()
    if previous is not None:
        previous.tail = (previous.tail or "") + tail
    else:
        parent.text = (parent.text or "") + tail
    parent.remove(mark)


def existing_ids(root: etree._Element) -> set[str]:
    """Every id in a document."""
    return {value for element in root.iter() if isinstance(element.tag, str) and (value := element.get("id"))}


def wrap_sentences(doc: DocumentText, ranges: Sequence[tuple[int, int, str]]) -> dict[str, bool]:
    """Wrap each (start, end, id) stream range of ``doc`` in a span; returns id → wrapped.

    Ranges must not overlap. They are wrapped from the last to the first, so the tree positions
    of the ones still to do stay valid.
    """
    done: dict[str, bool] = {}
    for start, end, span_id in sorted(ranges, reverse=True):
        if end <= start:
            done[span_id] = False
            continue
        done[span_id] = _wrap_one(doc, start, end, span_id)
    return done
