"""Notes in plain texts: the marker in the sentence and the note's own paragraph.

Gutenberg's plain texts set a note's marker in the sentence ("Wanderers[*] in his family", "I am
strong,[1] for", "Pétersbourg, * was also there", "merveille.*(2)") and its text as a paragraph of
its own that starts with the same label, right after the paragraph or in a list at the book's end
("[*] The emancipation of the serfs in 1861 is meant.", "[1] In Russian, “silen.”", "* The most
fascinating woman in Petersburg."). A label is a note's only where the text before used it as a
marker, and a paragraph of lines that each start with it is a list ("* bread" / "* a knife"). The
markers are never read; the notes follow the footnote setting (skip them, or read them where they
stand as "Note: ...").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from omni_web.book.options import note_paragraph
from omni_web.book.spacing import Paragraph

__all__ = ["notes_in_place"]

_LABEL = r"\[(?:\d{1,3}|\*{1,3})\]|\{\d{1,3}\}|\*\(\d{1,2}\)|\*{1,3}"
# A note's paragraph: its label, then its text ("[1] In Russian", "* The most fascinating").
_BODY_RE = re.compile(rf"^({_LABEL})[.:]?(?:\s+(?=\S)|(?=[A-Z“\"]))")  # "*The mutineers": Treasure Island
_EMPHASIS_RE = re.compile(r"(?<![\w*])\*(?=[^\s*(])([^*\n]+?)(?<=\S)\*(?![\w*(])")
# A marker: a bracketed label anywhere, or asterisks after a word and before a space or a stop.
_MARKER_RE = re.compile(
    r"\s?(\[(?:\d{1,3}|\*{1,3})\]|\{\d{1,3}\}|\*\(\d{1,2}\))"
    r"|(?<=[\w,.;:!?”’\"')])\s?(\*{1,3})(?=[\s,.;:!?]|$)"
)


def notes_in_place(paragraphs: Sequence[Paragraph], mode: str) -> list[Paragraph]:
    """The paragraphs with the notes' markers taken out and their notes skipped or read as "Note: ..."
    (``mode``: "skip" or "end-of-paragraph", :data:`omni_web.book.options.FOOTNOTE_MODES`)."""
    marked: set[str] = set()
    out: list[Paragraph] = []
    for paragraph in paragraphs:
        body = _BODY_RE.match(paragraph.lines[0])
        if body is not None and body.group(1) in marked and not _not_a_note(paragraph, body.group(1)):
            if mode != "skip":
                text = " ".join((paragraph.lines[0][body.end() :], *paragraph.lines[1:]))
                out.append(Paragraph(gap=paragraph.gap, lines=(note_paragraph(text),)))
            continue
        paragraph = _without_emphasis(paragraph)
        found = {m.group(1) or m.group(2) for line in paragraph.lines for m in _MARKER_RE.finditer(line)}
        marked |= found
        out.append(_unmarked(paragraph) if found else paragraph)
    return out


def _not_a_note(paragraph: Paragraph, label: str) -> bool:
    """A paragraph that starts with a note's label yet is none: lines that each start with it, a
    list's items ("* bread" / "* a knife"), or asterisks set around words ("*Really*, he said")."""
    text = " ".join(paragraph.lines)
    return sum(line.startswith(label) for line in paragraph.lines) >= 2 or (
        label.startswith("*") and "*" in text[len(label) :].replace("*(", "")
    )


def _without_emphasis(paragraph: Paragraph) -> Paragraph:
    """ "Then *he* came." as "Then he came.": asterisks around words set them off, they are no marker."""
    if "*" not in "".join(paragraph.lines):
        return paragraph
    lines = tuple(_EMPHASIS_RE.sub(r"\1", line) for line in paragraph.lines)
    return Paragraph(gap=paragraph.gap, lines=lines)


def _unmarked(paragraph: Paragraph) -> Paragraph:
    return Paragraph(gap=paragraph.gap, lines=tuple(_MARKER_RE.sub("", line) for line in paragraph.lines))
