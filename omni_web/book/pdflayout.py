"""A PDF's text lines to paragraphs a narrator can read: the pure half of the PDF reader.

A PDF has no paragraphs, only positioned lines. This module gets them per page (from
:mod:`omni_web.book.pdf`) and rebuilds the text:

* columns: a page whose lines fall in a left and a right column is read left column first;
* running headers and footers (the same line, digits aside, at the top or bottom of many pages)
  and page numbers ("12", "- 12 -", "Page 12 of 40", "xii") are dropped;
* footnotes (small print under the body at the foot of a page) are dropped, as the EPUB reader
  drops note bodies inside chapters (:mod:`omni_web.book.extract`);
* lines are joined into paragraphs: a new one starts after a gap, at an indent, or after a short
  line that ends a sentence; a paragraph runs on across pages and columns while it has not ended;
* a word hyphenated at a line end is joined ("compli-" + "cated" → "complicated");
* headings: lines set clearly larger than the body text.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Line", "PageLines", "TextPara", "body_size", "heading_sizes", "paragraphs"]

_EDGE_SHARE = 0.09  # top and bottom 9% of the page: where running heads and folios sit
_PAGE_NUMBER_RE = re.compile(
    r"^(?:[-–—(\[]\s*)?(?:page\s+)?(?:\d{1,4}|[ivxlcdm]{1,7})(?:\s+of\s+\d{1,4})?(?:\s*[-–—)\]])?$", re.IGNORECASE
)
_DIGITS_RE = re.compile(r"\d+")
_SENTENCE_END = (".", "!", "?", ":", "\u201d", '"', "\u2019", "'", ")", "…")
_HEADING_RATIO = 1.18  # a line this much larger than the body is a heading
_NOTE_RATIO = 0.9  # footnotes are set at most this large (relative to the body)
_HYPHEN_END_RE = re.compile(r"[^\W\d_][-\u00ad]$")


@dataclass(frozen=True, slots=True)
class Line:
    """One text line as laid out: its text, font size and box (PDF units, y grows upwards)."""

    text: str
    size: float
    x0: float
    x1: float
    y0: float
    y1: float


@dataclass(frozen=True, slots=True)
class PageLines:
    """A page's lines (in the order the layout analysis gave them) and its size."""

    number: int  # 0-based page index
    lines: tuple[Line, ...]
    width: float
    height: float


@dataclass(frozen=True, slots=True)
class TextPara:
    """A rebuilt paragraph or heading and the page it starts on."""

    text: str
    page: int
    is_heading: bool
    size: float
    top: float = 0.0  # y of its first line's top (PDF units, from the page's bottom)


def body_size(pages: Sequence[PageLines]) -> float:
    """The font size most characters are set in."""
    sizes: Counter[float] = Counter()
    for page in pages:
        for line in page.lines:
            sizes[round(line.size, 1)] += len(line.text)
    return sizes.most_common(1)[0][0] if sizes else 10.0


def heading_sizes(pages: Sequence[PageLines], body: float) -> list[float]:
    """Heading font sizes, largest first (rounded to 0.5 pt)."""
    found = {round(line.size * 2) / 2 for page in pages for line in page.lines
             if line.size >= body * _HEADING_RATIO and len(line.text.split()) <= 15}
    return sorted(found, reverse=True)


def _key(text: str) -> str:
    return _DIGITS_RE.sub("#", " ".join(text.casefold().split()))


def _edge_lines(page: PageLines) -> set[int]:
    """Indexes of the page's top and bottom lines when they stand apart from the body (a head or foot)."""
    lines = [(i, line) for i, line in enumerate(page.lines) if line.text.strip()]
    if len(lines) < 2:
        return {i for i, line in lines if line.y0 >= page.height * (1 - _EDGE_SHARE) or line.y1 <= page.height * _EDGE_SHARE}
    edge: set[int] = set()
    for reverse in (True, False):  # top first, then bottom
        ordered = sorted(lines, key=lambda item: item[1].y1, reverse=reverse)
        outer = ordered[0][1]
        same_row = [(i, x) for i, x in ordered if abs((x.y0 if reverse else x.y1) - (outer.y0 if reverse else outer.y1)) < 2]
        inner = next((x for _, x in ordered[len(same_row):]), None)
        gap = (outer.y0 - inner.y1) if (inner and reverse) else (inner.y0 - outer.y1) if inner else 0.0
        at_edge = outer.y0 >= page.height * (1 - _EDGE_SHARE) if reverse else outer.y1 <= page.height * _EDGE_SHARE
        if at_edge or gap > outer.size * 1.2:
            edge.update(i for i, _ in same_row)
    return edge


def running_lines(pages: Sequence[PageLines]) -> set[str]:
    """Keys of lines repeated at the top or bottom of many pages (running heads and feet)."""
    if len(pages) < 3:
        return set()
    counts: Counter[str] = Counter()
    for page in pages:
        edge = _edge_lines(page)
        counts.update({_key(page.lines[i].text) for i in edge})
    threshold = max(2, int(len(pages) * 0.25))
    return {key for key, count in counts.items() if count >= threshold and key.strip("# ")}


def _columns(page: PageLines, lines: list[Line]) -> list[Line]:
    """Reading order: top to bottom; on a two-column page the left column before the right."""
    mid = page.width / 2
    left = [line for line in lines if line.x1 <= mid + 2]
    right = [line for line in lines if line.x0 >= mid - 2]
    spanning = [line for line in lines if line not in left and line not in right]
    two_columns = (len(left) >= 4 and len(right) >= 4
                   and sum(len(x.text) for x in left) > 0.2 * sum(len(x.text) for x in lines)
                   and sum(len(x.text) for x in right) > 0.2 * sum(len(x.text) for x in lines))

    def down(group: list[Line]) -> list[Line]:
        return sorted(group, key=lambda x: (-round(x.y1), x.x0))

    if not two_columns:
        return down(lines)
    top_of_columns = max(x.y1 for x in left + right)
    above = [x for x in spanning if x.y0 >= top_of_columns - 1]
    below = [x for x in spanning if x not in above]
    return down(above) + down(left) + down(right) + down(below)


def _drop_notes(lines: list[Line], body: float) -> list[Line]:
    """Small print under the last body-size line of the page: footnotes."""
    body_lines = [x for x in lines if x.size >= body * _NOTE_RATIO]
    if not body_lines:
        return lines
    floor = min(x.y0 for x in body_lines)
    return [x for x in lines if not (x.size < body * _NOTE_RATIO and x.y1 <= floor + 1)]


def clean_page(page: PageLines, running: set[str], body: float) -> list[Line]:
    """The page's lines in reading order without running heads, page numbers and footnotes."""
    edge = _edge_lines(page)
    kept = [line for i, line in enumerate(page.lines)
            if line.text.strip() and not (i in edge and (_PAGE_NUMBER_RE.match(line.text.strip())
                                                         or _key(line.text) in running))]
    return _columns(page, _drop_notes(kept, body))


def _join(text: str, line: str) -> str:
    """Append a line to a paragraph, joining a word hyphenated across the line end."""
    if _HYPHEN_END_RE.search(text) and line[:1].islower():
        return text[:-1] + line
    if text.endswith("\u00ad"):
        return text[:-1] + line
    return f"{text} {line}"


def paragraphs(pages: Sequence[PageLines], *, body: float | None = None, min_heading: float | None = None) -> list[TextPara]:
    """Rebuilt paragraphs and headings of all pages, in reading order."""
    size = body if body is not None else body_size(pages)
    heading_min = min_heading if min_heading is not None else size * _HEADING_RATIO
    running = running_lines(pages)
    out: list[TextPara] = []
    open_para: dict | None = None  # the paragraph being built: text, page, last line, left edge
    cleaned = [(page, clean_page(page, running, size)) for page in pages]
    # The usual gap between lines of the book (not a blank line's), measured over all pages: a
    # page with two lines says nothing about it.
    gaps = sorted(a.y1 - b.y1 - b.size for _, lines in cleaned for a, b in zip(lines, lines[1:], strict=False)
                  if 0 < a.y0 - b.y1 < size * 3 and abs(a.size - size) < 1 and abs(b.size - size) < 1)
    leading = gaps[len(gaps) // 4] if gaps else size * 0.3
    for page, lines in cleaned:
        left_edge = min((x.x0 for x in lines), default=0.0)
        previous: Line | None = None
        for line in lines:
            text = " ".join(line.text.split())
            if line.size >= heading_min and len(text.split()) <= 15:
                if open_para and open_para["heading"] and previous is not None and abs(previous.size - line.size) < 0.6 \
                        and 0 <= previous.y0 - line.y1 < size * 2:
                    sep = " " if open_para["text"][-1:] in ".:;!?" else ": "
                    open_para["text"] += sep + text
                else:
                    _close(open_para, out)
                    open_para = {"text": text, "page": page.number, "heading": True, "size": line.size,
                                 "top": line.y1}
                previous = line
                continue
            if open_para is None or open_para["heading"] or _starts_paragraph(line, previous, open_para, leading,
                                                                               left_edge, size):
                _close(open_para, out)
                open_para = {"text": text, "page": page.number, "heading": False, "size": line.size,
                             "top": line.y1}
            else:
                open_para["text"] = _join(open_para["text"], text)
            open_para["right"] = max(open_para.get("right", 0.0), line.x1)
            previous = line
    _close(open_para, out)
    return out


def _starts_paragraph(line: Line, previous: Line | None, para: dict, leading: float, left_edge: float,
                      size: float) -> bool:
    ended = para["text"].rstrip().endswith(_SENTENCE_END)
    if previous is None:  # first line on a new page or column run: carry on unless the last one ended
        return ended and not line.text[:1].islower()
    if line.y1 > previous.y1 + size:  # moved up: the next column; same rule as a new page
        return ended and not line.text[:1].islower()
    gap = previous.y0 - line.y1
    if gap > max(leading * 1.8, size * 0.6):
        return True
    if ended and line.x0 > previous.x0 + size * 0.8:  # first-line indent
        return True
    short = previous.x1 < para.get("right", previous.x1) - size * 4
    return ended and short


def _close(para: dict | None, out: list[TextPara]) -> None:
    if para and para["text"].strip():
        out.append(TextPara(text=para["text"].strip(), page=para["page"], is_heading=para["heading"],
                            size=para["size"], top=para.get("top", 0.0)))
