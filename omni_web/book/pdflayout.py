"""A PDF's text lines to paragraphs a narrator can read: the pure half of the PDF reader.

A PDF has no paragraphs, only positioned lines. This module gets them per page (from
:mod:`omni_web.book.pdf`) and rebuilds the text:

* columns: a page whose lines fall in a left and a right column is read left column first;
* running headers and footers (the same line, digits aside, at the top or bottom of many pages)
  and page numbers ("12", "- 12 -", "Page 12 of 40", "xii") are dropped;
* footnotes (small print under the body at the foot of a page) are dropped, as the EPUB reader
  drops note bodies inside chapters (:mod:`omni_web.book.extract`), or, when asked, read after the
  paragraph whose line carries their raised marker (the page's last paragraph when none is found);
* lines are joined into paragraphs: a new one starts after a gap, at an indent, or after a short
  line that ends a sentence; a paragraph runs on across pages and columns while it has not ended;
* a word hyphenated at a line end is joined ("compli-" + "cated" → "complicated");
* headings: lines set clearly larger than the body text; each paragraph also says whether it
  is set bold or italic and how many lines it has, so the reader can find headings by style.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from omni_web.book.options import note_paragraph

__all__ = ["Line", "PageLines", "TextPara", "body_size", "heading_sizes", "paragraphs"]

_MIN_ROWS = 3  # a head, some text, a foot
_EDGE_ZONE = 0.2  # ... and only within the top or bottom fifth of the page
_SIDE_SHARE = 0.1  # a column beside the text (an infobox, a sidebar) holds at least this share of it
_PAGE_NUMBER_RE = re.compile(
    r"^(?:[-–—(\[]\s*)?(?:page\s+)?(?:\d{1,5}|[ivxlcdm]{1,7})(?:\s+of\s+\d{1,4})?(?:\s*[-–—)\]])?$",
    re.IGNORECASE,
)
_DIGITS_RE = re.compile(r"\d+")
_SENTENCE_END = (".", "!", "?", ":", "\u201d", '"', "\u2019", "'", ")", "…")
_HEADING_RATIO = 1.18  # a line this much larger than the body is a heading
_NOTE_RATIO = 0.95  # footnotes are set smaller than the body (relative size)
_NOTE_START_RE = re.compile(r"^(?:\d{1,3}|[*†‡§])\.?\s+\S")
_NOTE_MARK_RE = re.compile(r"^(?:\d{1,3}|[*†‡§])\.?\s+")
_SPEAKABLE_RE = re.compile(r"[^\W_]")
_MARKER_LINE_RE = re.compile(r"^[\d*†‡§,\s]{1,8}$")
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
    opens: bool = False  # a bullet or ornament stood before it: it starts a paragraph
    marks: int = 0  # raised note markers removed from it ("storm¹"): the notes it references
    bold: bool = False  # most of its letters are in a bold face (by font name)
    italic: bool = False


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
    bold: bool = False  # every line is bold
    italic: bool = False  # every line is italic
    lines: int = 1


def body_size(pages: Sequence[PageLines]) -> float:
    """The font size most characters are set in."""
    sizes: Counter[float] = Counter()
    for page in pages:
        for line in page.lines:
            sizes[round(line.size, 1)] += len(line.text)
    return sizes.most_common(1)[0][0] if sizes else 10.0


def heading_sizes(pages: Sequence[PageLines], body: float) -> list[float]:
    """Heading font sizes, largest first (rounded to 0.5 pt)."""
    found = {
        round(line.size * 2) / 2
        for page in pages
        for line in page.lines
        if line.size >= body * _HEADING_RATIO and len(line.text.split()) <= 15
    }
    return sorted(found, reverse=True)


def _key(text: str) -> str:
    return _DIGITS_RE.sub("#", " ".join(text.casefold().split()))


def _edge_lines(page: PageLines) -> dict[int, str]:
    """Line index → "top"/"bottom" for the page's outermost rows (where running heads and feet sit).

    Only rows in the outer fifth of the page count, so a short last page's text is never "edge".
    """
    rows: list[tuple[float, list[int]]] = []  # (row's top, line indexes), rows 3 pt apart
    for index, line in sorted(enumerate(page.lines), key=lambda item: -item[1].y1):
        if not line.text.strip():
            continue
        if rows and abs(rows[-1][0] - line.y1) < 3:
            rows[-1][1].append(index)
        else:
            rows.append((line.y1, [index]))
    edge: dict[int, str] = {}
    if len(rows) < 2:
        return edge  # a page of one line: that is its text
    # One row at the head (a running head), two at the foot (a footer line and a folio under it).
    for zone, chosen in (("top", rows[:1]), ("bottom", rows[-2:])):
        for top, indexes in chosen:
            inside = (
                top >= page.height * (1 - _EDGE_ZONE) if zone == "top" else top <= page.height * _EDGE_ZONE
            )
            if inside:
                edge.update({i: zone for i in indexes})
    return edge


def _row_count(page: PageLines) -> int:
    return len({round(line.y1 / 3) for line in page.lines if line.text.strip()})


def _shape(line: Line) -> str:
    """Where and how a line is set, whatever it says: a running head's shape ("@264/20")."""
    return f"@{round(line.y1 / 3)}/{round(line.size * 2)}"


def _set_apart(page: PageLines, indexes: list[int], zone: str, body: float) -> bool:
    """Whether the edge row ``indexes`` stands apart from the text (a gap wider than a line's)."""
    edge = [page.lines[i] for i in indexes]
    rest = [x for i, x in enumerate(page.lines) if i not in indexes and x.text.strip()]
    if zone == "top":
        below = [x.y1 for x in rest if x.y1 <= min(e.y0 for e in edge) + 1]
        return bool(below) and min(e.y0 for e in edge) - max(below) > body * 0.9
    above = [x.y0 for x in rest if x.y0 >= max(e.y1 for e in edge) - 1]
    return bool(above) and min(above) - max(e.y1 for e in edge) > body * 0.9


def running_lines(pages: Sequence[PageLines], body: float = 10.0) -> set[tuple[str, str]]:
    """(text key, zone) of lines repeated in the top or bottom rows of many pages: running heads and
    feet; and (shape, zone) of rows set apart at the same height in the same size on many pages,
    whatever they say ("1.2. METRISCHE RÄUME" over one section, the next section's title over the next)."""
    if len(pages) < 3:
        return set()
    counts: Counter[tuple[str, str]] = Counter()
    shapes: Counter[tuple[str, str]] = Counter()
    for page in pages:
        edge = _edge_lines(page)
        if _row_count(page) >= _MIN_ROWS:
            counts.update({(_key(page.lines[i].text), zone) for i, zone in edge.items()})
            for zone in ("top", "bottom"):
                row = [i for i, z in edge.items() if z == zone]
                # Set no larger than the text: a chapter heading at the top of each page is no running head.
                if row and _set_apart(page, row, zone, body):
                    shapes.update(
                        {(_shape(page.lines[i]), zone) for i in row if page.lines[i].size <= body * 1.05}
                    )
    threshold = max(2, int(len(pages) * 0.25))
    found = {item for item, count in counts.items() if count >= threshold and item[0].strip("# ")}
    return found | {item for item, count in shapes.items() if count >= max(3, threshold)}


def _running(page: PageLines, index: int, zone: str, running: set[tuple[str, str]], body: float) -> bool:
    line = page.lines[index]
    if _row_count(page) < _MIN_ROWS:
        return False  # a page of two rows keeps its text: only a page number is furniture there
    if (_key(line.text.strip()), zone) in running:
        return True
    row = [i for i, x in enumerate(page.lines) if abs(x.y1 - line.y1) < 3 and x.text.strip()]
    return (_shape(line), zone) in running and _set_apart(page, row, zone, body)


def _gutter(lines: list[Line], left_x: float, right_x: float) -> float | None:
    """The x of the gap between two columns of the lines set between ``left_x`` and ``right_x``,
    or None for one column.

    Looked for in the middle of that width, not at its centre: a LaTeX column may run a few points
    past the middle. The gap no line crosses with the most text on its lesser side wins; each side
    must hold at least four lines and a tenth of the text (a sidebar beside the text counts).
    """
    total = sum(len(x.text) for x in lines)
    width = right_x - left_x
    if len(lines) < 8 or not total or width <= 0:
        return None
    best: tuple[int, int, float] | None = None  # (lines across it, -text on the lesser side, x)
    for step in range(int(width * 0.2)):  # every 2 pt from 30 % to 70 % of the width
        gap = left_x + width * 0.3 + step * 2
        left = [x for x in lines if x.x1 <= gap]
        right = [x for x in lines if x.x0 >= gap]
        if len(left) < 4 or len(right) < 4:
            continue
        lesser = min(sum(len(x.text) for x in left), sum(len(x.text) for x in right))
        crossing = len(lines) - len(left) - len(right)
        if (
            lesser > _SIDE_SHARE * total
            and crossing <= len(lines) * 0.25
            and (best is None or (crossing, -lesser) < best[:2])
        ):
            best = (crossing, -lesser, gap)
    return best[2] if best else None


def _columns(page: PageLines, lines: list[Line], depth: int = 0) -> list[Line]:
    """Reading order: top to bottom; on a page of columns the left column before the right.

    A line across the gutter (a title, a wide figure) above the columns is read first; one under
    them after; one between two stretches of columns ends the stretch above it. Each side is
    split again, so three columns (a journal, a gazette) read one after the other.
    """

    def down(group: list[Line]) -> list[Line]:
        return sorted(group, key=lambda x: (-round(x.y1), x.x0))

    left_x = 0.0 if depth == 0 else min((x.x0 for x in lines), default=0.0)
    right_x = page.width if depth == 0 else max((x.x1 for x in lines), default=0.0)
    gap = _gutter(lines, left_x, right_x) if depth < 3 else None
    if gap is None:
        return down(lines)
    spanning = down([x for x in lines if x.x0 < gap < x.x1])
    columns = [x for x in lines if not x.x0 < gap < x.x1]
    out: list[Line] = []
    for wide in [*spanning, None]:
        floor = wide.y1 if wide is not None else float("-inf")
        band = [x for x in columns if x.y0 >= floor - 1]
        columns = [x for x in columns if x not in band]
        out += _columns(page, [x for x in band if x.x1 <= gap], depth + 1)
        out += _columns(page, [x for x in band if x.x0 >= gap], depth + 1)
        if wide is not None:
            out.append(wide)
    return out


def _drop_notes(lines: list[Line], body: float) -> tuple[list[Line], list[str]]:
    """Small print under the page's last line of body text that starts with a note mark: footnotes.

    Returns the other lines and the notes' texts (marks stripped), top down. A smaller block
    without a mark (a quotation set small at the foot of a page) is kept.
    """
    body_lines = [x for x in lines if x.size >= body * _NOTE_RATIO]
    if not body_lines:
        return lines, []
    floor = min(x.y0 for x in body_lines)
    below = sorted(
        (x for x in lines if x.y1 <= floor + 1 and x.size < body * _NOTE_RATIO), key=lambda x: -x.y1
    )
    if not below:
        return lines, []
    first = next((x for x in below if not _MARKER_LINE_RE.match(x.text.strip())), below[0])
    marked = _NOTE_START_RE.match(first.text.strip()) or any(
        _MARKER_LINE_RE.match(x.text.strip()) and x.x0 < first.x0 and x.y0 <= first.y1 and x.y1 >= first.y0
        for x in below
    )
    if not marked:
        return lines, []
    dropped = [x for x in below if x.y1 <= first.y1 + 1]
    return [x for x in lines if x not in dropped], _note_texts(dropped)


def _note_texts(lines: list[Line]) -> list[str]:
    """The notes in a page's small print (top-down lines): a new note at each leading mark."""
    notes: list[str] = []
    for line in lines:
        text = " ".join(line.text.split())
        if _MARKER_LINE_RE.match(text):
            notes.append("")  # a mark set apart, left of its note: the next line starts that note
            continue
        starts = _NOTE_MARK_RE.match(text)
        if starts or not notes:
            if not (notes and not notes[-1]):
                notes.append("")
            text = text[starts.end() :] if starts else text
        notes[-1] = _join(notes[-1], text) if notes[-1] else text
    return [n for n in notes if n]


def _credit_marks(kept: list[Line], marks: list[Line]) -> list[Line]:
    """Raised markers laid out as lines of their own count for the body line they sit at the end of."""
    out = list(kept)
    for mark in marks:
        row = [i for i, x in enumerate(out) if x.x1 <= mark.x0 + 2 and x.y0 - 2 <= mark.y0 <= x.y1 + 2]
        if row:
            i = max(row, key=lambda i: out[i].x1)
            out[i] = dataclasses.replace(out[i], marks=out[i].marks + 1)
    return out


def _letters_down_the_margin(page: PageLines) -> set[int]:
    """Lines of one letter stacked in a column of three or more: text turned along the margin
    ("PROPOSED RULES" set sideways comes out as "S", "E", "L", ...), never a sentence."""
    stacks: dict[int, list[int]] = {}
    for index, line in enumerate(page.lines):
        # CJK set vertically is the text itself (one letter a line), not a margin note
        if len(line.text.strip()) == 1 and line.text.strip().isalpha() and ord(line.text.strip()) < 0x2E80:
            stacks.setdefault(round(line.x0 / 3), []).append(index)
    found: set[int] = set()
    for group in stacks.values():
        run: list[int] = []
        for index in sorted(group, key=lambda i: -page.lines[i].y1):
            # letters one under the other, no line's height apart (footnote marks sit lines apart)
            if run and page.lines[run[-1]].y0 - page.lines[index].y1 > page.lines[index].size:
                found.update(run if len(run) >= 3 else ())
                run = []
            run.append(index)
        found.update(run if len(run) >= 3 else ())
    return found


def clean_page(page: PageLines, running: set[tuple[str, str]], body: float) -> tuple[list[Line], list[str]]:
    """The page's lines in reading order without running heads, page numbers, stray marks and
    footnotes, and the footnotes' texts."""
    edge = _edge_lines(page)
    furniture = set()
    for index, line in enumerate(page.lines):
        zone = edge.get(index)
        text = line.text.strip()
        if zone and text and (_running(page, index, zone, running, body) or _PAGE_NUMBER_RE.match(text)):
            furniture.add(index)
    kept = []
    bullets = [x for x in page.lines if x.text.strip() and not _SPEAKABLE_RE.search(x.text)]
    margin = _letters_down_the_margin(page)
    for index, line in enumerate(page.lines):
        text = line.text.strip()
        if not text or not _SPEAKABLE_RE.search(text) or index in margin:
            continue  # bullets and ornaments drawn as glyphs ("!" in a symbol font) are not read...
        if any(abs(b.y1 - line.y1) < 3 and b.x1 <= line.x0 + 1 for b in bullets):
            line = dataclasses.replace(line, opens=True)  # ... but the item after one starts a paragraph
        if index in furniture and not _running(page, index, edge[index], running, body):
            # A bare number is a folio only when nothing but furniture shares its row (a note
            # mark beside its note is not).
            row = [i for i, x in enumerate(page.lines) if abs(x.y1 - line.y1) < 3 and x.text.strip()]
            if any(i not in furniture for i in row):
                kept.append(line)
            continue
        if index in furniture:
            continue
        kept.append(line)
    # A note marker raised so far it became a line of its own is never read (its note may be).
    kept, notes = _drop_notes(kept, body)
    marks = [x for x in kept if x.size < body * _NOTE_RATIO and _MARKER_LINE_RE.match(x.text.strip())]
    kept = _credit_marks([x for x in kept if x not in marks], marks)
    return _columns(page, kept), notes


def _join(text: str, line: str) -> str:
    """Append a line to a paragraph, joining a word hyphenated across the line end."""
    if _HYPHEN_END_RE.search(text) and line[:1].islower():
        return text[:-1] + line
    if text.endswith("\u00ad"):
        return text[:-1] + line
    return f"{text} {line}"


def paragraphs(pages: Sequence[PageLines], *, body: float | None = None, min_heading: float | None = None,
               notes: bool = False) -> list[TextPara]:
    """Rebuilt paragraphs and headings of all pages, in reading order; with ``notes``, each
    footnote follows the paragraph that references it ("Note: ...")."""
    size = body if body is not None else body_size(pages)
    heading_min = min_heading if min_heading is not None else size * _HEADING_RATIO
    running = running_lines(pages, size)
    out: list[TextPara] = []
    open_para: dict | None = None  # the paragraph being built: text, page, last line, left edge
    cleaned = [(page, clean_page(page, running, size)) for page in pages]
    # The usual gap between lines of the book (not a blank line's), measured over all pages: a
    # page with two lines says nothing about it.
    gaps = sorted(a.y1 - b.y1 - b.size for _, (lines, _notes) in cleaned for a, b in zip(lines, lines[1:],
                                                                                         strict=False)
                  if 0 < a.y0 - b.y1 < size * 3 and abs(a.size - size) < 1 and abs(b.size - size) < 1)
    leading = gaps[len(gaps) // 4] if gaps else size * 0.3
    for page, (lines, page_notes) in cleaned:
        queue = list(page_notes) if notes else []
        left_edge = min((x.x0 for x in lines), default=0.0)
        previous: Line | None = None
        for line in lines:
            text = " ".join(line.text.split())
            if line.size >= heading_min and len(text.split()) <= 15:
                same_row = previous is not None and abs(previous.y1 - line.y1) < 2 and line.x0 >= previous.x1
                if (
                    open_para
                    and open_para["heading"]
                    and previous is not None
                    and abs(previous.size - line.size) < 0.6
                    and (0 <= previous.y0 - line.y1 < size * 2 or same_row)
                ):
                    # "1." and "Introduction" set apart on one row are one heading
                    sep = " " if same_row or open_para["text"][-1:] in ".:;!?" else ": "
                    open_para["text"] += sep + text
                else:
                    _close(open_para, out)
                    open_para = {
                        "text": text,
                        "page": page.number,
                        "heading": True,
                        "size": line.size,
                        "top": line.y1,
                    }
                previous = line
                continue
            if (
                open_para is None
                or open_para["heading"]
                or _starts_paragraph(line, previous, open_para, leading, left_edge, size)
            ):
                _close(open_para, out)
                open_para = {
                    "text": text,
                    "page": page.number,
                    "heading": False,
                    "size": line.size,
                    "top": line.y1,
                    "bold": line.bold,
                    "italic": line.italic,
                    "lines": 1,
                }
            else:
                open_para["text"] = _join(open_para["text"], text)
                open_para.update(
                    bold=open_para.get("bold") and line.bold,
                    italic=open_para.get("italic") and line.italic,
                    lines=open_para.get("lines", 1) + 1,
                )
            open_para["right"] = max(open_para.get("right", 0.0), line.x1)
            open_para.setdefault("notes", []).extend(queue[: line.marks])
            del queue[: line.marks]
            previous = line
        if queue and open_para is not None:
            open_para.setdefault("notes", []).extend(
                queue
            )  # no marker found: after the page's last paragraph
    _close(open_para, out)
    return out


def _starts_paragraph(
    line: Line, previous: Line | None, para: dict, leading: float, left_edge: float, size: float
) -> bool:
    if line.opens:
        return True
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
        out.append(
            TextPara(
                text=para["text"].strip(),
                page=para["page"],
                is_heading=para["heading"],
                size=para["size"],
                top=para.get("top", 0.0),
                bold=bool(para.get("bold")),
                italic=bool(para.get("italic")),
                lines=para.get("lines", 1),
            )
        )
    for note in para.get("notes", ()) if para else ():
        out.append(
            TextPara(
                text=note_paragraph(note),
                page=para["page"],
                is_heading=False,
                size=para["size"],
                top=para.get("top", 0.0),
            )
        )
