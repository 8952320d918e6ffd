"""Code samples in book pages: shown for the eye, never read aloud.

A listener gains nothing from ``<ruby>2H<sub>2</sub>...`` read out symbol by symbol, so a block of
code is skipped like a picture. A block is code when a ``<pre>`` holds ``<code>``, ``<samp>`` or
``<kbd>`` (HTML's own way to mark it), or when a block carries a class that code highlighters and
DocBook/Sphinx/pandoc give listings. A bare ``<pre>`` is not enough: old Project Gutenberg HTML sets
whole chapters of prose in ``<pre>``. Inline ``<code>`` in a sentence (a name) is still read.
"""

from __future__ import annotations

from lxml import etree

__all__ = ["is_code_block"]

_CODE_TAGS = frozenset({"code", "samp", "kbd"})
_LISTING_TAGS = frozenset({"pre", "div", "figure", "section", "p", "table"})
_LISTING_CLASSES = frozenset(
    {
        "programlisting",
        "screen",
        "sourcecode",
        "highlight",
        "codehilite",
        "hljs",
        "listing",
        "literal-block",
        "code-block",
        "codeblock",
        "prettyprint",
    }
)


def _localname(element: etree._Element) -> str:
    return etree.QName(element).localname.lower() if isinstance(element.tag, str) else ""


def is_code_block(element: etree._Element, tag: str) -> bool:
    """Whether ``element`` (its local name ``tag``) is a listing of code rather than prose."""
    if tag not in _LISTING_TAGS:
        return False
    classes = element.get("class", "").lower().split()
    if _LISTING_CLASSES.intersection(classes) or any(c.startswith(("language-", "lang-")) for c in classes):
        return True
    return tag == "pre" and any(_localname(child) in _CODE_TAGS for child in element.iter())
