"""How books are read: the choices a user makes that every reader honours, in one frozen record.

:func:`omni_web.book.formats.load_book` hands the same :class:`ReadOptions` to whichever reader the
file's content picks, so a new choice is one field here, not one argument per reader.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["DEFAULT_OPTIONS", "FOOTNOTE_MODES", "TABLE_MODES", "ReadOptions", "note_paragraph", "table_lines"]

# skip: note bodies inside chapters are not read; end-of-paragraph: read after the paragraph that
# references them ("Note: ..."), never in the middle of a sentence.
FOOTNOTE_MODES = ("skip", "end-of-paragraph")
# rows: each row read as one sentence ("Lebron James, Basketball, Very High."); note: a short
# "Table: ..." line naming it (its caption or first row), the rest not read.
TABLE_MODES = ("rows", "note")


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """Reader choices: what to do with footnotes and tables, and where converted books are cached.

    ``cache_dir`` is a folder the MOBI/AZW3 reader keeps its calibre conversions in (keyed by the
    file's SHA-256), so a book uploaded and then converted runs ``ebook-convert`` once; None = no cache.
    """

    footnotes: str = "skip"
    cache_dir: Path | None = None
    tables: str = "rows"

    def __post_init__(self) -> None:
        if self.footnotes not in FOOTNOTE_MODES:
            raise ValueError(f"footnotes must be one of {', '.join(FOOTNOTE_MODES)}, not {self.footnotes!r}")
        if self.tables not in TABLE_MODES:
            raise ValueError(f"tables must be one of {', '.join(TABLE_MODES)}, not {self.tables!r}")

    @property
    def notes_at_paragraph_end(self) -> bool:
        """Whether a note's text is read after the paragraph that references it."""
        return self.footnotes == "end-of-paragraph"


DEFAULT_OPTIONS = ReadOptions()


def note_paragraph(text: str) -> str:
    """A note as it is read after its paragraph: "Note: ..." (the marker itself is never read)."""
    return f"Note: {text.strip()}"


def table_lines(rows: list[list[str]], *, mode: str, caption: str = "") -> list[str]:
    """What is read of a table: one sentence per row, or one "Table: ..." note (``mode``, TABLE_MODES)."""
    rows = [[cell for cell in (" ".join(c.split()) for c in row) if cell] for row in rows]
    rows = [row for row in rows if row]
    if mode == "note":
        name = " ".join(caption.split()) or (", ".join(rows[0]) if rows else "")
        return [f"Table: {name.rstrip('.')}."] if name else []
    return [_sentence(", ".join(row)) for row in rows]


def _sentence(text: str) -> str:
    return text if text[-1:] in ".!?:;…" else f"{text}."
