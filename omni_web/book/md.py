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

_FRONT_MATTER_RE = re.compile(r"\A---[ \t]*\n(.*?)\n(?:---|\.\.\.)[ \t]*\n", re.DOTALL)
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
    renderer = MarkdownIt("commonmark", {"html": False}).enable("table")
    html = f"<html><head><meta charset=\"utf-8\"/></head><body>{renderer.render(text)}</body></html>"
    root = parse_html(html.encode("utf-8"))
    author = fields.get("author", "")
    return book_from_html(root, path=path, source_format="markdown", title=fields.get("title", ""),
                          authors=(author,) if author else (), options=options)
