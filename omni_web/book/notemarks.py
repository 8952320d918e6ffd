"""Note markers in markup: a link or raised number that points to a note ("[1]", "*"), never read.

A Project Gutenberg HTML marker may hold the printed page number set inside it
("[9]<span class=pagenum>[Pg 96]</span>"): the page number is not part of the marker's text.
"""

from __future__ import annotations

import re

from lxml import etree

__all__ = ["NUMBER_CLASSES", "is_note_marker"]

# Publisher classes for printed page and line numbers ("pagenum" is Project Gutenberg's).
NUMBER_CLASSES = frozenset(
    {"pagenum", "pageno", "page-number", "pagenumber", "lnum", "linenum", "linenumber", "line-number"}
)
_LETTER_RE = re.compile(r"[^\W\d_]")
_MARKER_MAX_CHARS = 8  # "[12]", "*", "†": longer link texts without letters are kept


def is_note_marker(element: etree._Element, tag: str) -> bool:
    """A note marker: an internal link or a linked <sup> whose text has no letters ("[1]", "*")."""
    if tag == "a":
        href = element.get("href", "")
        if "#" not in href or href.startswith(("http:", "https:", "mailto:")):
            return False
    elif not any(isinstance(c.tag, str) and etree.QName(c).localname == "a" for c in element.iter()):
        return False
    text = " ".join(_text_without_page_numbers(element).split())
    return len(text) <= _MARKER_MAX_CHARS and not _LETTER_RE.search(text)


def _text_without_page_numbers(element: etree._Element) -> str:
    """The element's text, leaving out page numbers set inside it ("[9]<span class=pagenum>[Pg 96]")."""
    parts = [element.text or ""]
    for child in element:
        page_number = isinstance(child.tag, str) and NUMBER_CLASSES.intersection(
            (child.get("class") or "").lower().split()
        )
        if isinstance(child.tag, str) and not page_number:
            parts.append(_text_without_page_numbers(child))
        parts.append(child.tail or "")
    return "".join(parts)
