"""Markdown to a Book: rendered to HTML by markdown-it-py (CommonMark), then read as a web page.

``#`` headings become ``<h1>``..., so chapters start at the shallowest heading level used at
least twice (:mod:`omni_web.book.webpage`). A YAML front-matter block (``---`` lines) gives the
title and author and is not read aloud. Raw HTML in the Markdown is not rendered.
"""

from __future__ import annotations

import re
from pathlib import Path

from omni_web.book.model import Book
from omni_web.book.options import DEFAULT_OPTIONS, ReadOptions
from omni_web.book.safety import DEFAULT_LIMITS, ArchiveLimits, read_limited
from omni_web.book.txt import decode_text
from omni_web.book.webpage import book_from_html, parse_html

__all__ = ["load_markdown"]

# pandoc's attribute blocks ("[span]{.class}", "# Heading {#id}", "![img](url){width=50%}") and
# fenced-div fences (":::"), which CommonMark leaves as text.
_ATTRIBUTES_RE = re.compile(r"(?<=[\])])\{[^{}\n]*\}|[ \t]+\{[#.][^{}\n]*\}[ \t]*$", re.MULTILINE)
_FENCED_DIV_RE = re.compile(r"^:{3,}.*$", re.MULTILINE)
_FRONT_MATTER_RE = re.compile(r"\A---[ \t]*\n(.*?)\n(?:---|\.\.\.)[ \t]*\n", re.DOTALL)
# pandoc's title block: "% Title", "% Author; Author", "% Date", each continued on indented lines.
_TITLE_BLOCK_RE = re.compile(r"\A(%[^\n]*\n(?:[ \t]+\S[^\n]*\n)*){1,3}")
_FIELD_RE = re.compile(r"^(title|author)\s*:\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)


def load_markdown(path: Path, *, limits: ArchiveLimits = DEFAULT_LIMITS,
                  options: ReadOptions = DEFAULT_OPTIONS) -> Book:
    """Read a Markdown book.

    Raises:
        UnsafeBook: over the size limit.
        EmptyBook: nothing to read aloud.
    """
    from markdown_it import MarkdownIt

    text = decode_text(read_limited(path, name=path.name, limit=limits.max_text_file_bytes))
    text = text.replace("\r\n", "\n")
    fields: dict[str, str] = {}
    front = _FRONT_MATTER_RE.match(text)
    if front:
        fields = {m.group(1).lower(): m.group(2).strip("\"' ") for m in _FIELD_RE.finditer(front.group(1))}
        text = text[front.end():]
    block = _TITLE_BLOCK_RE.match(text)
    if block:
        lines = [" ".join(part.split()) for part in re.split(r"^%", block.group(0), flags=re.MULTILINE)[1:]]
        fields = {"title": lines[0], **({"author": lines[1].split(";")[0].strip()} if len(lines) > 1 else {})}
        text = text[block.end():]
    text = _ATTRIBUTES_RE.sub("", _FENCED_DIV_RE.sub("", text))
    renderer = MarkdownIt("commonmark", {"html": False}).enable("table")
    html = f"<html><head><meta charset=\"utf-8\"/></head><body>{renderer.render(text)}</body></html>"
    root = parse_html(html.encode("utf-8"))
    for pre in [e for e in root.iter("pre")]:
        pre.getparent().remove(pre)  # code blocks are for the eye: commands and markup, not sentences
    author = fields.get("author", "")
    return book_from_html(root, path=path, source_format="markdown", title=fields.get("title", ""),
                          authors=(author,) if author else (), options=options)
