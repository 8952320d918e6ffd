"""Plain-text markup that is never spoken: ``_italics_``, ``=bold=``, ``{1}`` and ``word[1]`` note marks,
``[Illustration]``.

Gutenberg's plain-text editions (and many texts made like them) mark emphasis with underscores or
equals signs, footnote references with braces, and pictures or transcriber's notes with
bracketed lines. A listener hears the words, not the marks.
"""

from __future__ import annotations

import re

__all__ = ["is_unspoken_paragraph", "strip_bracket_notes", "strip_plain_marks"]

_ITALIC_RE = re.compile(r"(?<![\w_])_(?=\S)([^_]+?)(?<=\S)_(?![\w_])")
_BOLD_RE = re.compile(r"(?<![\w=])=(?=\S)([^=]+?)(?<=\S)=(?![\w=])")
_NOTE_MARK_RE = re.compile(r"\{(?:\d{1,3}|[ivxlc]{1,6}|[a-z]|[*†‡]|[a-z]+)\}", re.IGNORECASE)
# "boebi's[1]": a bracketed note number set against the word it annotates.
_BRACKET_MARK_RE = re.compile(r"(?<=[^\s\[])\[\d{1,3}\]")
_BRACKET_NOTE_RE = re.compile(
    r"\[(?:Illustration|Picture|Image|Decoration|Transcriber'?s?'? [Nn]ote|Note Project Gutenberg|Note PG|"
    r"Sidenote|Footnote mark)\b[^\]]{0,2000}\]",
    re.IGNORECASE,
)
_LEFTOVER_RE = re.compile(r"[_{}]+")
_SPACE_RE = re.compile(r"[ \t]+")
# TeX/LilyPond notation some e-texts carry for their music ("\layout { \context ... }").
_NOTATION_RE = re.compile(r"\\[a-zA-Z]+\s*[{\[<]")
# A picture's name left on its own line where the HTML edition shows it: Monte Cristo's "0023m"
# (0023m.jpg), 439 of them; "frontispiece.jpg".
_PICTURE_NAME_RE = re.compile(r"^\s*(?:\d{3,6}[a-z]|[\w/-]+\.(?:jpe?g|png|gif|svg))\s*$", re.IGNORECASE)


def strip_plain_marks(text: str) -> str:
    """``text`` without emphasis marks, note marks, picture and transcriber notes, stray braces."""
    text = _BRACKET_NOTE_RE.sub(" ", text)
    text = _ITALIC_RE.sub(r"\1", text)
    text = _BOLD_RE.sub(r"\1", text)
    text = _NOTE_MARK_RE.sub("", text)
    text = _BRACKET_MARK_RE.sub("", text)
    text = _LEFTOVER_RE.sub(" ", text)
    return _SPACE_RE.sub(" ", text).strip()


def strip_bracket_notes(text: str) -> str:
    """``text`` without its picture and transcriber's notes, over as many lines as they run ("[Illustration:
    B. Franklin From an engraving by J. Thomson from the" / "original picture by J. A. Duplessis]")."""
    return _BRACKET_NOTE_RE.sub(" ", text)


def is_unspoken_paragraph(text: str) -> bool:
    """A paragraph of music notation or typesetting code, or a picture's file name, not prose."""
    return len(_NOTATION_RE.findall(text)) >= 2 or bool(_PICTURE_NAME_RE.match(text))
