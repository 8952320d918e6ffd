"""A Word document's body in reading order: paragraphs, tables, content controls and text boxes.

python-docx's ``Document.paragraphs`` sees only top-level paragraphs: text inside content controls
(``w:sdt``), tables and text boxes is missed, and a Strict Open XML file does not open at all.
This walk reads ``word/document.xml`` by local names (so both the transitional and the strict
namespaces work), with the styles from ``word/styles.xml`` for heading levels.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from lxml import etree

from omni_web.book.options import table_lines

__all__ = ["BodyItem", "StyleMap", "body_items", "style_map"]

_HEADING_RE = re.compile(r"^heading\s*(\d)$", re.IGNORECASE)
_SKIPPED = frozenset({"del", "delText", "instrText", "fldData", "footnoteReference", "endnoteReference",
                      "commentReference", "Fallback", "rPr", "pPr"})


@dataclass(frozen=True, slots=True)
class BodyItem:
    """One paragraph's text, its heading level (0 is the title, None for body text), its note ids."""

    level: int | None
    text: str
    notes: tuple[tuple[str, str], ...] = ()  # (kind, id) of footnote/endnote references in it


@dataclass(frozen=True, slots=True)
class StyleMap:
    """Paragraph style id -> heading level (0 = Title), from the document's styles part."""

    levels: dict[str, int]

    def level(self, style_id: str) -> int | None:
        """The heading level of a paragraph style, None for body text."""
        return self.levels.get(style_id)


def style_map(styles: etree._Element | None) -> StyleMap:
    """Heading levels of the styles in ``word/styles.xml`` (Title, Heading N, an outline level, or based on one)."""
    if styles is None:
        return StyleMap(levels={})
    own: dict[str, int | None] = {}
    based: dict[str, str] = {}
    for style in styles:
        if _local(style) != "style":
            continue
        style_id = _attr(style, "styleId")
        name = next((_attr(child, "val") for child in style if _local(child) == "name"), "").strip()
        based_on = next((_attr(child, "val") for child in style if _local(child) == "basedOn"), "")
        outline = next((_attr(e, "val") for e in style.iter() if _local(e) == "outlineLvl"), "")
        match = _HEADING_RE.match(name) or _HEADING_RE.match(style_id)
        own[style_id] = (
            0
            if name.lower() == "title"
            else int(match.group(1))
            if match
            else (int(outline) + 1 if outline.isdigit() and int(outline) < 9 else None)
        )
        if based_on:
            based[style_id] = based_on
    levels = {}
    for style_id in own:
        seen, current = set(), style_id
        while current and current not in seen and own.get(current) is None:
            seen.add(current)
            current = based.get(current, "")
        if current and own.get(current) is not None:
            levels[style_id] = own[current]
    return StyleMap(levels=levels)


def body_items(body: etree._Element, styles: StyleMap, *, tables: str) -> list[BodyItem]:
    """The body's paragraphs in order; a table as one item per row (or a "Table: ..." note, ``tables``)."""
    return list(_walk(body, styles, tables))


def _walk(element: etree._Element, styles: StyleMap, tables: str) -> Iterator[BodyItem]:
    for child in element:
        tag = _local(child)
        if tag == "p":
            yield from _paragraph(child, styles, tables)
        elif tag == "tbl":
            rows = [
                [_cell_text(cell) for cell in row if _local(cell) in ("tc", "sdt")]
                for row in child
                if _local(row) == "tr"
            ]
            yield from (BodyItem(None, line) for line in table_lines(rows, mode=tables))
        elif tag in ("sdt", "sdtContent", "customXml", "smartTag", "ins", "body"):
            yield from _walk(child, styles, tables)


def _paragraph(p: etree._Element, styles: StyleMap, tables: str) -> Iterator[BodyItem]:
    texts, notes, boxes = [], [], []
    for node in _inline(p):
        tag = _local(node)
        if tag == "t":
            texts.append(node.text or "")
        elif tag in ("tab", "br", "cr"):
            texts.append(" ")
        elif tag in ("footnoteReference", "endnoteReference"):
            notes.append((tag.removesuffix("Reference"), _attr(node, "id")))
        elif tag == "txbxContent":
            boxes.append(node)
    text = " ".join("".join(texts).split())
    if text:
        yield BodyItem(_paragraph_level(p, styles), text, tuple(notes))
    for box in boxes:
        yield from _walk(box, styles, tables)


def _inline(element: etree._Element) -> Iterator[etree._Element]:
    """The paragraph's text-bearing nodes in order, not descending into deleted text or fallbacks."""
    for child in element:
        if not isinstance(child.tag, str):
            continue
        tag = _local(child)
        if tag in _SKIPPED:
            if tag in ("footnoteReference", "endnoteReference"):
                yield child
            continue
        yield child
        if tag != "txbxContent":
            yield from _inline(child)


def _paragraph_level(p: etree._Element, styles: StyleMap) -> int | None:
    props = next((child for child in p if _local(child) == "pPr"), None)
    if props is None:
        return None
    for child in props:
        if _local(child) == "pStyle":
            level = styles.level(_attr(child, "val"))
            if level is not None:
                return level
        elif _local(child) == "outlineLvl" and _attr(child, "val").isdigit() and int(_attr(child, "val")) < 9:
            return int(_attr(child, "val")) + 1
    return None


def _cell_text(cell: etree._Element) -> str:
    return " ".join(
        "".join(
            node.text or ""
            for node in cell.iter()
            if _local(node) == "t" and not any(_local(a) in ("del", "Fallback") for a in node.iterancestors())
        ).split()
    )


def _local(element: etree._Element) -> str:
    tag = element.tag
    return etree.QName(tag).localname if isinstance(tag, str) else ""


def _attr(element: etree._Element, name: str) -> str:
    """An attribute by local name, whatever its namespace (``w:val`` in either OOXML flavour)."""
    for key, value in element.attrib.items():
        if key == name or key.endswith("}" + name):
            return value
    return ""
