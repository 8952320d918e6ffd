"""How books are read: the choices a user makes that every reader honours, in one frozen record.

:func:`omni_web.book.formats.load_book` hands the same :class:`ReadOptions` to whichever reader the
file's content picks, so a new choice is one field here, not one argument per reader.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["DEFAULT_OPTIONS", "FOOTNOTE_MODES", "ReadOptions", "note_paragraph"]

# skip: note bodies inside chapters are not read; end-of-paragraph: read after the paragraph that
# references them ("Note: ..."), never in the middle of a sentence.
FOOTNOTE_MODES = ("skip", "end-of-paragraph")


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """Reader choices: what to do with footnotes, and where converted books are cached.

    ``cache_dir`` is a folder the MOBI/AZW3 reader keeps its calibre conversions in (keyed by the
    file's SHA-256), so a book uploaded and then converted runs ``ebook-convert`` once; None = no cache.
    """

    footnotes: str = "skip"
    cache_dir: Path | None = None

    def __post_init__(self) -> None:
        if self.footnotes not in FOOTNOTE_MODES:
            raise ValueError(f"footnotes must be one of {', '.join(FOOTNOTE_MODES)}, not {self.footnotes!r}")

    @property
    def notes_at_paragraph_end(self) -> bool:
        """Whether a note's text is read after the paragraph that references it."""
        return self.footnotes == "end-of-paragraph"


DEFAULT_OPTIONS = ReadOptions()


def note_paragraph(text: str) -> str:
    """A note as it is read after its paragraph: "Note: ..." (the marker itself is never read)."""
    return f"Note: {text.strip()}"
