"""Text inside SVG ``<text>`` (fixed-layout pages) in the order a reader sees it.

Fixed-layout books often set each line, or each word, as its own ``<text>`` element placed with
``x``/``y`` and ``transform``; the document order is whatever the authoring tool wrote. So every
piece is placed on the page (its transforms composed), lines are gathered by their baseline,
read left to right (right to left for RTL text, top to bottom and right to left for vertical
writing), and a large gap between lines starts a new paragraph.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from lxml import etree

from omni_web.book.text import join_text

__all__ = ["svg_paragraphs"]

Matrix = tuple[float, float, float, float, float, float]  # a b c d e f, as in SVG
_IDENTITY: Matrix = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)
_NUMBER_RE = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_TRANSFORM_RE = re.compile(r"(matrix|translate|scale|rotate|skewX|skewY)\s*\(([^)]*)\)")
_FONT_SIZE_RE = re.compile(r"font-size\s*:\s*([-+]?[\d.]+)")
_WRITING_MODE_RE = re.compile(r"writing-mode\s*:\s*([\w-]+)")
_HIDDEN_RE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden")
_SKIP = frozenset({"defs", "title", "desc", "metadata", "style", "script", "symbol", "clippath", "mask"})
_DEFAULT_FONT_SIZE = 16.0
# Lines further apart than this many font sizes belong to different paragraphs.
_PARAGRAPH_GAP = 1.9


def _local(element: etree._Element) -> str:
    tag = element.tag
    return tag.rsplit("}", 1)[-1].lower() if isinstance(tag, str) else ""


def _multiply(m: Matrix, n: Matrix) -> Matrix:
    a, b, c, d, e, f = m
    a2, b2, c2, d2, e2, f2 = n
    return (
        a * a2 + c * b2,
        b * a2 + d * b2,
        a * c2 + c * d2,
        b * c2 + d * d2,
        a * e2 + c * f2 + e,
        b * e2 + d * f2 + f,
    )


def _parse_transform(value: str) -> Matrix:
    """The matrix of an SVG ``transform`` attribute (unknown functions are ignored)."""
    matrix = _IDENTITY
    for name, raw in _TRANSFORM_RE.findall(value or ""):
        args = [float(x) for x in _NUMBER_RE.findall(raw)]
        step = _IDENTITY
        if name == "matrix" and len(args) == 6:
            step = tuple(args)  # type: ignore[assignment]
        elif name == "translate" and args:
            step = (1, 0, 0, 1, args[0], args[1] if len(args) > 1 else 0)
        elif name == "scale" and args:
            step = (args[0], 0, 0, args[1] if len(args) > 1 else args[0], 0, 0)
        elif name == "rotate" and args:
            angle = math.radians(args[0])
            cos, sin = math.cos(angle), math.sin(angle)
            step = (cos, sin, -sin, cos, 0, 0)
            if len(args) == 3:
                cx, cy = args[1], args[2]
                step = _multiply(_multiply((1, 0, 0, 1, cx, cy), step), (1, 0, 0, 1, -cx, -cy))
        elif name == "skewX" and args:
            step = (1, 0, math.tan(math.radians(args[0])), 1, 0, 0)
        elif name == "skewY" and args:
            step = (1, math.tan(math.radians(args[0])), 0, 1, 0, 0)
        matrix = _multiply(matrix, step)
    return matrix


def _first(value: str | None) -> float | None:
    found = _NUMBER_RE.search(value or "")
    return float(found.group(0)) if found else None


@dataclass
class _Piece:
    x: float
    y: float
    size: float  # font size on the page
    text: str


@dataclass(frozen=True, slots=True)
class _Style:
    matrix: Matrix
    font_size: float
    vertical: bool
    rtl: bool


def _style(element: etree._Element, parent: _Style) -> _Style:
    style = element.get("style", "")
    size = _first(element.get("font-size")) or (
        float(m.group(1)) if (m := _FONT_SIZE_RE.search(style)) else None
    )
    mode = element.get("writing-mode") or (m.group(1) if (m := _WRITING_MODE_RE.search(style)) else "")
    direction = element.get("direction") or ("rtl" if "direction:rtl" in style.replace(" ", "") else "")
    return _Style(
        matrix=_multiply(parent.matrix, _parse_transform(element.get("transform", ""))),
        font_size=size if size and size > 0 else parent.font_size,
        vertical=parent.vertical or mode.startswith(("tb", "vertical")),
        rtl=parent.rtl or direction == "rtl",
    )


def _place(style: _Style, x: float, y: float, text: str) -> _Piece:
    a, b, c, d, e, f = style.matrix
    scale = math.hypot(c, d) or 1.0
    return _Piece(a * x + c * y + e, b * x + d * y + f, style.font_size * scale, text)


def _text_pieces(element: etree._Element, style: _Style) -> list[_Piece]:
    """One <text>: a piece per separately positioned run (a <tspan> with its own x, y, dx or dy)."""
    x, y = _first(element.get("x")) or 0.0, _first(element.get("y")) or 0.0
    pieces = [_place(style, x, y, element.text or "")]

    def run(span: etree._Element, span_style: _Style) -> None:
        nonlocal x, y
        if _local(span) in _SKIP or _HIDDEN_RE.search(span.get("style", "")):
            pieces[-1].text += span.tail or ""
            return
        moved = False
        for attr in ("x", "y"):
            value = _first(span.get(attr))
            if value is not None:
                x, y = (value, y) if attr == "x" else (x, value)
                moved = True
        for attr in ("dx", "dy"):
            value = _first(span.get(attr))
            if value:
                x, y = (x + value, y) if attr == "dx" else (x, y + value)
                moved = True
        inner = _style(span, span_style)
        if moved:
            pieces.append(_place(inner, x, y, ""))
        pieces[-1].text += span.text or ""
        for child in span:
            run(child, inner)
        pieces[-1].text += span.tail or ""

    for child in element:
        run(child, style)
    return [p for p in pieces if p.text.strip()]


def _collect(element: etree._Element, parent: _Style, out: list[tuple[_Piece, _Style]]) -> None:
    tag = _local(element)
    if tag in _SKIP or _HIDDEN_RE.search(element.get("style", "")) or element.get("display") == "none":
        return
    style = _style(element, parent)
    if tag == "text":
        out.extend((piece, style) for piece in _text_pieces(element, style))
        return
    for child in element:
        _collect(child, style, out)


def svg_paragraphs(svg: etree._Element) -> list[str]:
    """The SVG's text as paragraphs, each its lines joined in reading order."""
    found: list[tuple[_Piece, _Style]] = []
    _collect(svg, _Style(_IDENTITY, _DEFAULT_FONT_SIZE, False, False), found)
    if not found:
        return []
    vertical = sum(style.vertical for _, style in found) * 2 > len(found)
    rtl = sum(style.rtl for _, style in found) * 2 > len(found)
    pieces = [piece for piece, _ in found]
    for piece in pieces:
        piece.text = " ".join(piece.text.split())
    if vertical:  # columns right to left, each top to bottom: swap the axes
        pieces = [_Piece(p.y, -p.x, p.size, p.text) for p in pieces]
    lines: list[list[_Piece]] = []
    for piece in sorted(pieces, key=lambda p: p.y):
        if lines and abs(piece.y - lines[-1][0].y) <= 0.5 * max(piece.size, lines[-1][0].size):
            lines[-1].append(piece)
        else:
            lines.append([piece])
    paragraphs: list[str] = []
    current = ""
    previous: _Piece | None = None
    for line in lines:
        line.sort(key=lambda p: -p.x if rtl and not vertical else p.x)
        text = ""
        for piece in line:
            text = join_text(text, piece.text)
        head = line[0]
        if previous is not None and head.y - previous.y > _PARAGRAPH_GAP * max(head.size, previous.size):
            paragraphs.append(current)
            current = ""
        current = _join_lines(current, text)
        previous = head
    if current:
        paragraphs.append(current)
    return [p for p in paragraphs if p.strip()]


def _join_lines(left: str, right: str) -> str:
    """Join two lines; a word hyphenated at the line's end ("beauti-" + "ful") is joined back."""
    if left.endswith("-") and right[:1].islower() and len(left) > 1 and left[-2].isalpha():
        return left[:-1] + right
    return join_text(left, right)
