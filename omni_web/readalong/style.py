"""A visible highlight for the sentence being read: a CSS rule for the book's ``media:active-class``.

Reading systems put the declared active class on the element whose audio plays, and only the
book's own CSS gives it a look: Thorium (r2-navigator-js) uses the publication's class instead of
its own yellow ``r2-mo-active`` in the default theme, so a class without a rule highlights nothing.
The rule goes at the end of the last stylesheet a page already links (the XHTML stays as it is);
a page that links none gets one ``<link>`` to a small stylesheet of ours.
"""

from __future__ import annotations

import posixpath
import zipfile
from collections.abc import Iterable
from pathlib import Path

from lxml import etree

from omni_web.readalong.package import Package

__all__ = ["add_highlight_rule", "highlight_rule"]

_XHTML_NS = "http://www.w3.org/1999/xhtml"


def highlight_rule(active_class: str) -> str:
    """The CSS rule for ``active_class``: a pale yellow background, legible on white and sepia."""
    return (f"\n/* omni-web read-along: the sentence being read aloud */\n"
            f".{active_class} {{ background-color: #fde68a; color: #1a1a1a; }}\n")


def _linked_stylesheets(
    root: etree._Element, page: str, package: Package, archive: zipfile.ZipFile
) -> list[str]:
    """ZIP entry names of the book stylesheets ``page`` links, in document order."""
    names = set(archive.namelist())
    sheets: list[str] = []
    for link in root.iter(f"{{{_XHTML_NS}}}link"):
        rels = (link.get("rel") or "").lower().split()
        href = (link.get("href") or "").partition("#")[0]
        if "stylesheet" not in rels or "alternate" in rels or not href or "://" in href:
            continue
        path = posixpath.normpath(posixpath.join(posixpath.dirname(page), href))
        item = package.item_by_path(path)
        if item is not None and item.media_type == "text/css" and path in names:
            sheets.append(path)
    return sheets


def add_highlight_rule(
    package: Package,
    archive: zipfile.ZipFile,
    pages: dict[str, etree._Element],
    marked: Iterable[str],
    files: dict[str, bytes | Path],
    *,
    active_class: str,
    own_css_path: str,
) -> None:
    """Give every page in ``marked`` the highlight rule; new and changed files go into ``files``.

    ``pages`` maps page paths to their parsed roots (serialised later by the caller); a page
    without a stylesheet of its own gets a ``<link>`` to ``own_css_path``, added to the manifest once.
    """
    rule = highlight_rule(active_class).encode("utf-8")
    for page in marked:
        root = pages[page]
        sheets = _linked_stylesheets(root, page, package, archive)
        if sheets:
            target = sheets[-1]  # the last linked sheet wins the cascade
            if target not in files:
                files[target] = archive.read(target) + rule
            continue
        if own_css_path not in files:
            files[own_css_path] = rule.lstrip()
            package.add_item("ra-style", own_css_path, "text/css")
        head = root.find(f"{{{_XHTML_NS}}}head")
        if head is None:
            head = etree.Element(f"{{{_XHTML_NS}}}head")
            root.insert(0, head)
        href = posixpath.relpath(own_css_path, posixpath.dirname(page))
        etree.SubElement(
            head, f"{{{_XHTML_NS}}}link", {"rel": "stylesheet", "type": "text/css", "href": href}
        )
