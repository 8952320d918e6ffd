"""Books, chapters, voices, lexicons, ffmpeg and the disk they are written to."""

from __future__ import annotations

from pathlib import Path

from omni_web.errors.base import OmniWebError

__all__ = [
    "BookError",
    "BookNotFound",
    "ChapterSelectionError",
    "DiskFullError",
    "DrmProtected",
    "EmptyBook",
    "FfmpegError",
    "LexiconError",
    "NotAnEpub",
    "OutputNotWritable",
    "PreviewError",
    "ScannedBook",
    "UnsafeBook",
    "UnsupportedFormat",
    "VoiceError",
]


class BookError(OmniWebError):
    """The book file cannot be read; the message names the problem and what to do."""


class BookNotFound(BookError, FileNotFoundError):
    """The book file does not exist (any more); ``path`` is where it was looked for."""

    def __init__(self, path: Path, *, remedy: str = "Check the path.") -> None:
        self.path = path
        super().__init__(f"The book {path} does not exist. {remedy}")

    def __str__(self) -> str:  # FileNotFoundError would format errno/filename
        return str(self.args[0])


class NotAnEpub(BookError):
    """The file is not a readable EPUB: not a ZIP, no container or package document, broken XML."""


class UnsafeBook(BookError):
    """The EPUB looks built to exhaust memory (decompression bomb, XML entity expansion)."""


class DrmProtected(BookError):
    """The EPUB's content is encrypted (``META-INF/encryption.xml``)."""


class EmptyBook(BookError):
    """The EPUB opened fine but has no text to read aloud (image-only or empty pages)."""


class ScannedBook(EmptyBook):
    """A PDF whose pages are pictures with no text layer: it needs OCR before it can be read."""


class UnsupportedFormat(BookError):
    """The file's content is no format omni-web reads, or its reader needs a program that is missing."""


class ChapterSelectionError(OmniWebError):
    """The chapters asked for cannot be rendered: numbers the book lacks, a bad range, or none."""


class PreviewError(OmniWebError):
    """A preview cannot be played (e.g. the server sent audio in a sample format the page cannot show)."""


class LexiconError(OmniWebError):
    """A pronunciation lexicon entry (empty, bad regular expression) or file (bad YAML) is unusable."""


class VoiceError(OmniWebError):
    """A reference clip or voice name cannot be used."""


class FfmpegError(OmniWebError):
    """ffmpeg or ffprobe failed or is missing; carries the command's stderr tail."""

    def __init__(self, message: str, *, stderr_tail: str = "", returncode: int | None = None) -> None:
        self.stderr_tail = stderr_tail
        self.returncode = returncode
        super().__init__(message)


class DiskFullError(OmniWebError, OSError):
    """A write failed for lack of space; nothing already written is removed."""

    def __str__(self) -> str:
        return str(self.args[0])


class OutputNotWritable(OmniWebError, OSError):
    """An output folder cannot be created or written (permissions, missing mount, read-only disk)."""

    def __str__(self) -> str:
        return str(self.args[0])
