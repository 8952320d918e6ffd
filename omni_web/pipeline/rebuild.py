"""Rebuild one chapter and the book after a chunk was replaced (QA review: regenerate a chunk).

The chunk cache already holds every chunk (the replaced one under its old key, or a new key), so
the run renders nothing: the named chapters are mastered and encoded again from their chunks,
every other chapter's mastered files are reused as they are, and the m4b is joined again by
stream copy, with the MP3/ACX files and the levels report. It costs one chapter's mastering plus
the join, whatever the book's length.
"""

from __future__ import annotations

from collections.abc import Iterable

from omni_web.book import Book
from omni_web.client import SpeechClient
from omni_web.paths import DataPaths
from omni_web.pipeline.convert import ConvertResult, ProgressCallback, run_conversion
from omni_web.pipeline.request import ConvertRequest
from omni_web.settings import Settings

__all__ = ["rebuild_chapters"]


def rebuild_chapters(
    request: ConvertRequest,
    chapters: Iterable[int],
    *,
    paths: DataPaths,
    settings: Settings,
    client: SpeechClient,
    progress: ProgressCallback | None = None,
    book: Book | None = None,
) -> ConvertResult:
    """Master ``chapters`` (1-based numbers) again and rebuild the book from the same request.

    ``client`` is only asked to resolve the voice's spelling (as the original run did) and for
    chunks that are missing from the cache; with every chunk cached it renders nothing.

    Raises:
        The errors of :func:`~omni_web.pipeline.convert.run_conversion`.
    """
    return run_conversion(
        request, paths=paths, settings=settings, client=client, progress=progress, book=book,
        remaster=tuple(chapters),
    )
