"""Vertical writing in a PDF: Japanese or Chinese set in columns, read top to bottom, right to left.

pdfminer lays such a page out as rows unless told to look for vertical lines, and a row then holds
one letter of every column ("み す ん べ な て"). A page whose letters come mostly one to a word like
that is read again with vertical lines; each column becomes a line of the page, placed so that the
rest of the PDF reader (which reads lines top to bottom) takes the columns right to left, and a
column that starts lower than the others (an indented first line) opens a paragraph.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from omni_web.book.pdflayout import Line

__all__ = ["columns_as_lines", "reads_down"]

_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]")
_MIN_CJK = 20  # letters: fewer on a page say nothing
_SPACED_SHARE = 0.6  # of a page's CJK letters standing alone between spaces: columns read as rows
_LINE_PITCH = 1.5  # a column's place below the last, in its letters' size
_INDENT = 0.8  # a column starting this many letters lower than the page's top opens a paragraph


def reads_down(lines: Sequence[Line]) -> bool:
    """Whether a page's row lines are vertical writing read across: CJK letters standing one to a word."""
    cjk = alone = 0
    for line in lines:
        for word in line.text.split():
            letters = len(_CJK_RE.findall(word))
            cjk += letters
            alone += letters if len(word) == 1 else 0
    return cjk >= _MIN_CJK and alone >= _SPACED_SHARE * cjk


def columns_as_lines(columns: Sequence[Line], page_height: float) -> list[Line]:
    """The page's vertical lines, right to left, as lines one under the other (top to bottom)."""
    out: list[Line] = []
    y = page_height
    for band in _bands(columns):
        top = max(column.y1 for column in band)
        for column in sorted(band, key=lambda column: -column.x1):
            indented = top - column.y1 >= _INDENT * column.size
            y -= column.size * (_LINE_PITCH * (2 if indented and out else 1))
            width = column.size * len(column.text)
            line = Line(column.text, column.size, 0.0, width, y - column.size, y, marks=column.marks)
            out.append(line)
        y -= 2 * _LINE_PITCH * band[0].size  # the next band of columns is a new paragraph
    return out


def _bands(columns: Sequence[Line]) -> list[list[Line]]:
    """Columns side by side in bands down the page (a page set in an upper and a lower half), top first."""
    bands: list[list[Line]] = []
    for column in sorted(columns, key=lambda column: -column.y1):
        band = bands[-1] if bands else None
        if band is not None and column.y1 > min(c.y0 for c in band):
            band.append(column)
        else:
            bands.append([column])
    return bands
