"""Where a submitted book comes from, and what a submit hands back."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from omni_web.book import Book
from omni_web.jobs import Job
from omni_web.pipeline import ConvertRequest

__all__ = ["BookSource", "Link", "Prepared", "Submitted", "Upload"]


@dataclass(frozen=True, slots=True)
class Upload:
    """A book's bytes as they arrived (an API upload); kept in the data root by content."""

    data: bytes
    name: str


@dataclass(frozen=True, slots=True)
class Link:
    """A link to a book (an OPDS acquisition link, any HTTP URL), with optional basic auth."""

    url: str
    username: str | None = None
    password: str | None = None


# A path is used where it is (the CLI, a kept inbox copy); an upload or a link is kept first.
BookSource = Path | Upload | Link


@dataclass(frozen=True, slots=True)
class Prepared:
    """A conversion checked and named, ready to queue: the book read once, the jobs scanned once.

    ``twin`` is the newest job that asks for exactly the same audio (queueing refuses it unless
    allowed); ``request`` carries its claimed output name.
    """

    request: ConvertRequest
    book: Book
    twin: Job | None
    text_fingerprint: str

    @property
    def title(self) -> str:
        """The job's title: the book's, or its file name."""
        return self.book.metadata.title or self.request.book_path.stem


@dataclass(frozen=True, slots=True)
class Submitted:
    """A submit's job, and whether this call made it (False: an earlier call with the same key did)."""

    job: Job
    created: bool
