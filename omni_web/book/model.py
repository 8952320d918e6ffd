"""Records of the book layer: a parsed book, its chapters and text blocks, and speech chunks.

Everything here is a frozen value: the book is read once by :func:`omni_web.book.load_book` and
then only looked at (chapter selection lives with the job, not in the book).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "BlockKind",
    "Book",
    "BookMetadata",
    "Chapter",
    "Chunk",
    "CoverImage",
    "Identifier",
    "PauseKind",
    "TextBlock",
]

_EXTENSIONS = {
    "image/jpeg": "jpg",
    "image/png": "png",
    "image/gif": "gif",
    "image/webp": "webp",
    "image/svg+xml": "svg",
    "image/bmp": "bmp",
    "image/tiff": "tiff",
}


class BlockKind(enum.StrEnum):
    """What a block of text is; headings get a longer pause after them."""

    PARAGRAPH = "paragraph"
    HEADING = "heading"


class PauseKind(enum.StrEnum):
    """The pause assembly inserts after a chunk, shortest first."""

    CLAUSE = "clause"  # the voice changes mid-sentence ("Well," | said Ahab)
    CHUNK = "chunk"  # the chunk ends mid-paragraph (between sentences)
    PARAGRAPH = "paragraph"  # the chunk ends a paragraph
    HEADING = "heading"  # the chunk ends a heading (or the spoken chapter title)
    SCENE_BREAK = "scene_break"  # a separator line ("* * *", "⁂") follows: nothing to say, a long pause
    CHAPTER_END = "chapter_end"  # the last chunk of a chapter


@dataclass(frozen=True, slots=True)
class TextBlock:
    """One paragraph or heading as it appears in the book (whitespace collapsed, not yet normalised)."""

    kind: BlockKind
    text: str

    @property
    def is_heading(self) -> bool:
        """True for headings."""
        return self.kind is BlockKind.HEADING


@dataclass(frozen=True, slots=True)
class Identifier:
    """One identifier of the book: ``scheme`` is upper case ("ISBN", "ASIN", "UUID", "DOI") or ""."""

    scheme: str
    value: str


@dataclass(frozen=True, slots=True)
class BookMetadata:
    """What the package document says about the book; empty strings where it says nothing.

    Every reader fills what its format has; the delivery layer (omni_web/deliver) writes all of it
    into the m4b tags and the library sidecars. ``series_index`` is kept as written ("2", "2.5").
    """

    title: str
    authors: tuple[str, ...] = ()
    language: str = ""
    description: str = ""
    date: str = ""  # as written in the OPF, e.g. "2008-06-27" or "2012"
    publisher: str = ""
    identifier: str = ""  # the package's unique identifier, as written
    subtitle: str = ""
    series: str = ""
    series_index: str = ""
    identifiers: tuple[Identifier, ...] = ()
    subjects: tuple[str, ...] = ()

    def identifier_of(self, scheme: str) -> str:
        """The first identifier of ``scheme`` ("ISBN", "ASIN"), "" when there is none."""
        wanted = scheme.upper()
        return next((item.value for item in self.identifiers if item.scheme == wanted), "")

    @property
    def isbn(self) -> str:
        """The book's ISBN, "" when unknown."""
        return self.identifier_of("ISBN")

    @property
    def asin(self) -> str:
        """The book's Amazon ASIN, "" when unknown."""
        return self.identifier_of("ASIN")

    @property
    def year(self) -> int | None:
        """The four-digit year at the start of ``date``, if any."""
        head = self.date[:4]
        return int(head) if len(head) == 4 and head.isdigit() else None

    @property
    def authors_str(self) -> str:
        """Authors joined for display ("A, B and C"); "" when unknown."""
        if len(self.authors) <= 1:
            return "".join(self.authors)
        return ", ".join(self.authors[:-1]) + " and " + self.authors[-1]


@dataclass(frozen=True, slots=True)
class CoverImage:
    """The cover picture's bytes as stored in the EPUB."""

    data: bytes
    media_type: str

    @property
    def extension(self) -> str:
        """File extension without the dot ("jpg", "png", ...), from the media type."""
        return _EXTENSIONS.get(self.media_type.lower(), self.media_type.rsplit("/", 1)[-1] or "bin")

    @property
    def size_bytes(self) -> int:
        """Size of the image data."""
        return len(self.data)


@dataclass(frozen=True, slots=True)
class Chapter:
    """One chapter in reading order, with the text to speak and whether it is preselected.

    ``matter_reason`` is "" for real chapters; otherwise it names why the chapter is not selected by
    default ("table of contents", "copyright page", "Project Gutenberg licence", ...).
    """

    index: int  # 0-based position in Book.chapters
    title: str
    blocks: tuple[TextBlock, ...]
    word_count: int
    selected_by_default: bool
    matter_reason: str
    source_href: str  # the XHTML file (and #fragment) the chapter starts at, relative to the OPF

    @property
    def number(self) -> int:
        """1-based chapter number, as shown to users."""
        return self.index + 1

    @property
    def has_text(self) -> bool:
        """True when the chapter has anything to speak."""
        return self.word_count > 0


@dataclass(frozen=True, slots=True)
class Book:
    """A parsed book: metadata, optional cover, and chapters in reading order.

    ``source_format`` is the reader that made it ("epub", "pdf", "txt", "markdown", "html", "fb2",
    "docx", "odt", "mobi"); only :mod:`omni_web.book` looks at it (a non-EPUB book's read-along
    EPUB is written from the Book, an EPUB's from the file itself).
    """

    metadata: BookMetadata
    cover: CoverImage | None
    chapters: tuple[Chapter, ...]
    source_path: Path
    source_format: str = "epub"
    # What the reader could not read well, in words for the user ("312 letters ... were left out");
    # shown where the book is shown (the Generate tab, the CLI's chapter table).
    warnings: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        """The book's title (shortcut for ``metadata.title``)."""
        return self.metadata.title

    @property
    def word_count(self) -> int:
        """Words in all chapters."""
        return sum(chapter.word_count for chapter in self.chapters)

    def selected_by_default(self) -> tuple[int, ...]:
        """Indexes of the chapters preselected for rendering."""
        return tuple(chapter.index for chapter in self.chapters if chapter.selected_by_default)


@dataclass(frozen=True, slots=True)
class Chunk:
    """One request's worth of text: whole sentences of one paragraph or heading.

    ``pause_after`` tells assembly how long a silence to put after this chunk's audio.
    ``speaker`` labels who speaks it when the chapter was cut by speaker (omni_web.cast): "" is
    the narrator.
    """

    chapter_index: int
    index: int  # 0-based within the chapter
    text: str
    words: int
    pause_after: PauseKind
    speaker: str = ""
