"""Project Gutenberg plain-text boilerplate: the licence header and footer cut off, the header's facts kept.

Gutenberg's text files open with "The Project Gutenberg eBook of ...", a few ``Title:``/``Author:``
lines and a ``*** START OF THE PROJECT GUTENBERG EBOOK ... ***`` line, and end with a ``*** END
OF ...`` line and the licence. None of that is the book.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["END_RE", "START_RE", "GutenbergText", "is_producer_line", "strip_gutenberg"]

START_RE = re.compile(r"^\s*\*{3}\s*START OF (?:THE|THIS) PROJECT GUTENBERG E-?(?:BOOK|TEXT).*$",
                      re.IGNORECASE | re.MULTILINE)
# Old e-texts put the licence ("small print") first and the book right after its last line; later
# ones put it at the end, so this line only starts the book in a text's first half.
_SMALL_PRINT_END_RE = re.compile(r"^\s*\*?END\*?\s*THE SMALL PRINT!.*$", re.IGNORECASE | re.MULTILINE)
END_RE = re.compile(
    r"^\s*(?:\*{3}\s*END OF (?:THE|THIS) PROJECT GUTENBERG E-?(?:BOOK|TEXT)|End of (?:the |this )?Project "
    r"Gutenberg).*$",
    re.IGNORECASE | re.MULTILINE,
)
# Who made the e-text: said once at the top (and again after the end), never part of the book.
_PRODUCER_RE = re.compile(
    r"^\s*(?:Produced by|E-?text (?:was )?prepared by|This e-?(?:text|book) was "
    r"(?:produced|prepared)|Transcribed from"
    r"|Updated editions will replace|The Project Gutenberg E-?(?:text|book) of)|Distributed\s+Proofread|pgdp\.net|\(?https?://\S*gutenberg",
    re.IGNORECASE,
)
_HEAD_CHARS = 4000  # producer lines sit in the first few paragraphs after the START line


def is_producer_line(text: str) -> bool:
    """Whether a paragraph is a producer/transcriber credit ("Produced by ... www.pgdp.net")."""
    return bool(_PRODUCER_RE.search(text))


_FIELD_RE = re.compile(r"^(Title|Author|Language|Release [Dd]ate|Translator|Editor):\s*(.+)$", re.MULTILINE)
_EBOOK_NUMBER_RE = re.compile(r"\[E(?:Book|text) #(\d+)\]", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class GutenbergText:
    """The book's text without the boilerplate, and what the header said ("" where it said nothing)."""

    body: str
    title: str = ""
    author: str = ""
    language: str = ""
    date: str = ""
    identifier: str = ""
    found: bool = False


def strip_gutenberg(text: str) -> GutenbergText:
    """Cut the header before the START line and the footer from the END line on.

    Text without the START line is returned whole (``found`` False).
    """
    start = START_RE.search(text)
    if start is None:
        start = _SMALL_PRINT_END_RE.search(text, 0, len(text) // 2)
    if start is None:
        return GutenbergText(body=text)
    header = text[: start.start()]
    rest = text[start.end() :]
    end = END_RE.search(rest)
    body = _without_producer(rest[: end.start()] if end else rest)
    fields: dict[str, str] = {}
    for match in _FIELD_RE.finditer(header):
        fields.setdefault(match.group(1).lower(), " ".join(match.group(2).split()))
    number = _EBOOK_NUMBER_RE.search(header)
    date = fields.get("release date", "")
    year = re.search(r"\b(1[89]\d\d|20\d\d)\b", date)
    return GutenbergText(
        body=body,
        title=fields.get("title", ""),
        author=fields.get("author", ""),
        language=fields.get("language", ""),
        date=year.group(1) if year else "",
        identifier=f"https://www.gutenberg.org/ebooks/{number.group(1)}" if number else "",
        found=True,
    )


def _without_producer(body: str) -> str:
    """The body without the producer paragraphs at its top."""
    head, tail = body[:_HEAD_CHARS], body[_HEAD_CHARS:]
    paragraphs = re.split(r"(\n[ \t]*\n)", head)
    kept = [p for p in paragraphs if not is_producer_line(p)]
    return "".join(kept) + tail
