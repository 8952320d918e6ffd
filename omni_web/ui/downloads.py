"""A finished book's files as download links (Jobs and Shelf tabs), and the ``/downloads`` routes
that serve the ones made on demand (the MP3 zip, the zip of all), behind the UI's own login.

Files already on disk (the m4b, the read-along EPUB, subtitles) are linked through Gradio's file
route, served in place from the output folder (``ui/app.py``). The zips are made by
:mod:`omni_web.deliver.downloads`; these routes only find the book (by job id or shelf id, never
by a path from the request) and check the login the way Gradio's own routes do (its session
cookie, ``gradio/routes.py`` ``get_current_user``), so a stranger gets 401 and a link can only
reach a book the app itself made.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import FileResponse, Response, StreamingResponse
from starlette.routing import Mount

from omni_web.deliver.downloads import (
    BookDownloads,
    book_downloads,
    everything_members,
    mp3_zip,
    stream_zip,
)
from omni_web.deliver.shelf import ShelfBook, book_by_id
from omni_web.errors import JobNotFound, OmniWebError
from omni_web.jobs import Job, JobState
from omni_web.pipeline import ConvertResult
from omni_web.ui.widgets import esc, size_str

__all__ = [
    "DOWNLOADS_PREFIX",
    "build_downloads",
    "current_user",
    "downloads_html",
    "file_url",
    "job_book",
    "logged_in",
    "mount_downloads",
    "shelf_links_html",
]

DOWNLOADS_PREFIX = "/downloads"
_BLOCK_BYTES = 1 << 20
_MP3_ZIP, _ALL_ZIP = "mp3.zip", "all.zip"

log = logging.getLogger(__name__)


def file_url(path: Path) -> str:
    """The page-relative URL that serves ``path`` (only files under allowed paths are served)."""
    return "gradio_api/file=" + quote(str(Path(path).resolve()))


def job_book(job: Job) -> BookDownloads | None:
    """The finished job's book and its files; None until its m4b is on disk."""
    if job.state is not JobState.DONE or not job.result:
        return None
    result = ConvertResult.from_dict(job.result)
    if result.m4b is None or not result.m4b.is_file():
        return None
    return book_downloads(result.m4b, readalong=result.readalong_epub, mp3_dir=result.mp3_dir)


def _size(path: Path) -> str:
    try:
        return size_str(path.stat().st_size)
    except OSError:
        return "-"


def _mp3_note(book: BookDownloads) -> str:
    """What the MP3 zip holds, and whether the first click has to make it."""
    try:
        made = book.cached_zip()
    except OSError:  # the book went between the look and now; the next tick shows it gone
        return ""
    if made.is_file():
        return _size(made)
    if book.exported_mp3s():
        return f"the job's {len(book.exported_mp3s())} MP3 files, zipped on the first click"
    return "one MP3 per chapter, made on the first click (a long book takes a few minutes)"


def _row(anchor: str, note: str) -> str:
    return f'<div class="ow-dl-row">{anchor} <span class="ow-dim">{esc(note)}</span></div>'


def _links(book: BookDownloads, base: str, ids: str) -> list[str]:
    """The book's rows: m4b, MP3 zip, zip of all, read-along EPUB, subtitles (by chapter)."""
    rows = [
        _row(
            f'<a class="ow-download" id="{ids}-download" href="{esc(file_url(book.book))}" download>'
            f"⬇ {esc(book.book.name)}</a>",
            _size(book.book),
        ),
        # `download`: a click saves the file and never leaves the page, even while the zip is made.
        _row(
            f'<a class="ow-dl-link" id="{ids}-download-mp3" href="{esc(base)}/{_MP3_ZIP}" download>MP3 files '
            '(zip)</a>',
            _mp3_note(book),
        ),
        _row(
            f'<a class="ow-dl-link" id="{ids}-download-all" href="{esc(base)}/{_ALL_ZIP}" download>'
            "Download all (zip)</a>",
            "the m4b, the MP3s"
            + (", the read-along EPUB" if book.readalong else "")
            + (", the subtitles" if book.subtitles else ""),
        ),
    ]
    if book.readalong is not None:
        rows.append(
            _row(
                f'<a class="ow-dl-link" id="{ids}-download-epub" href="{esc(file_url(book.readalong))}" '
                f"download>{esc(book.readalong.name)}</a>",
                _size(book.readalong),
            )
        )
    if book.subtitles:
        items = "".join(
            f'<li><a href="{esc(file_url(p))}" download>{esc(book.subtitle_name(p))}</a> '
            f'<span class="ow-dim">{esc(_size(p))}</span></li>'
            for p in book.subtitles
        )
        rows.append(
            f'<details id="{ids}-subtitles" class="ow-fold"><summary>Subtitles (VTT, SRT) · '
            f'{len(book.subtitles)} files</summary><ul class="ow-scroll ow-links">{items}</ul></details>'
        )
    return rows


def _exported_mp3s(book: BookDownloads) -> str:
    """MP3s the job exported itself (the "also MP3" setting), one link each, folded."""
    mp3s = book.exported_mp3s()
    if not mp3s:
        return ""
    items = "".join(
        f'<li><a href="{esc(file_url(p))}" download>{esc(p.stem)}</a> '
        f'<span class="ow-dim">{esc(_size(p))}</span></li>'
        for p in mp3s
    )
    return (
        f'<details id="jobs-mp3s" class="ow-fold"><summary>MP3 chapters · {len(mp3s)} files</summary>'
        f'<ul class="ow-scroll ow-links">{items}</ul></details>'
    )


def downloads_html(job: Job, *, output_root: Path) -> str:
    """The Jobs tab's downloads: links with names and sizes once the job is done, and, small, where
    the book is on the server (for copying by hand)."""
    book = job_book(job)
    if book is None:
        if job.state is JobState.DONE:
            return '<div class="ow-dim">This job left no book file to download.</div>'
        return '<div class="ow-dim">The downloads appear here when the job is done.</div>'
    rows = _links(book, f"downloads/job/{quote(job.id, safe='')}", "jobs")
    where = f'<div class="ow-dim ow-where">{_where(book.book, output_root)}</div>'
    return f'<div class="ow-dl" id="jobs-dl-list">{"".join(rows)}</div>{_exported_mp3s(book)}{where}'


def _where(book: Path, output_root: Path) -> str:
    """Where the book is, for copying by hand, named from the output folder the user chose in
    Settings: never the server's absolute path (a newcomer on another machine has no use for it)."""
    try:
        inside = book.resolve().relative_to(Path(output_root).resolve())
    except (OSError, ValueError):
        inside = Path(book.name)
    return f"In the output folder: <code>{esc(inside.as_posix())}</code>"


def shelf_links_html(book: ShelfBook) -> str:
    """A Shelf card's download links (an MP3-only book offers its file alone)."""
    if book.audio is None or book.audio.suffix.lower() != ".m4b":
        return (
            f'<a href="{esc(file_url(book.audio))}" download>{esc(book.audio.name)}</a>' if book.audio else ""
        )
    rows = _links(
        book_downloads(book.audio, readalong=book.readalong), f"downloads/book/{book.id}", f"shelf-{book.id}"
    )
    return "".join(rows)


def logged_in(gradio_app: Any, request: Request) -> bool:
    """True when ``request`` carries a login of the launched Gradio app (or the app has none)."""
    if gradio_app.auth is None and getattr(gradio_app, "auth_dependency", None) is None:
        return True  # no login at all (loopback only, or --no-auth): as open as the UI
    return current_user(gradio_app, request) is not None


def current_user(gradio_app: Any, request: Request) -> str | None:
    """The user ``request``'s login cookie names on the launched Gradio app, None without one."""
    cookie_id = gradio_app.cookie_id
    token = request.cookies.get(f"access-token-{cookie_id}") or request.cookies.get(
        f"access-token-unsecure-{cookie_id}"
    )
    return gradio_app.tokens.get(token) if token is not None else None


def _attachment(name: str) -> dict[str, str]:
    return {"Content-Disposition": f"attachment; filename*=UTF-8''{quote(name)}"}


def _serve(book: BookDownloads, kind: str) -> Response:
    """The zip at once when it is made; else a stream whose headers go out now and whose bytes follow
    once the MP3s are cut, so the browser shows the download from the click on (a long book's MP3s
    take minutes) instead of a page waiting on a request."""
    made = book.cached_zip()
    if kind == _MP3_ZIP and made.is_file():
        return FileResponse(made, filename=book.mp3_zip_name, media_type="application/zip")
    if kind == _MP3_ZIP:
        return StreamingResponse(_made_later(book), media_type="application/zip",
                                 headers=_attachment(book.mp3_zip_name))
    return StreamingResponse(_everything_later(book), media_type="application/zip",
                             headers=_attachment(book.everything_name))


def _made_later(book: BookDownloads) -> Iterator[bytes]:
    """The MP3 zip's bytes once it is made (the same file later clicks get), read when the response
    body is first read (in Starlette's thread pool); a failure then can only end the download."""
    try:
        made = mp3_zip(book)
    except OmniWebError as exc:
        log.warning("The MP3 zip of %s failed: %s", book.book, exc)
        raise
    with made.open("rb") as source:
        while block := source.read(_BLOCK_BYTES):
            yield block


def _everything_later(book: BookDownloads) -> Iterator[bytes]:
    """The zip of all, its members worked out (and the MP3s cut) once the body is first read."""
    try:
        members = everything_members(book)
    except OmniWebError as exc:
        log.warning("The zip of all of %s failed: %s", book.book, exc)
        raise
    yield from stream_zip(members)


def build_downloads(gradio_app: Any, jobs: Any, output_root: Callable[[], Path]) -> FastAPI:
    """The ``/downloads`` app: ``/job/<id>/{mp3,all}.zip`` and ``/book/<shelf id>/{mp3,all}.zip``.

    ``gradio_app`` is the launched Gradio app (its login table is read on each request, so saved
    logins restored after a restart count); ``jobs`` the job store; ``output_root`` is asked on
    every request (the setting may change).
    """
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)

    def login(request: Request) -> None:
        if not logged_in(gradio_app, request):
            raise HTTPException(401, "Log in to omni-web first, then open the link again.")

    def check(kind: str) -> None:
        if kind not in (_MP3_ZIP, _ALL_ZIP):
            raise HTTPException(404, "No such download.")

    @app.get("/job/{job_id}/{kind}", dependencies=[Depends(login)])
    def for_job(job_id: str, kind: str) -> Response:
        check(kind)
        try:
            book = job_book(jobs.get(job_id))
        except JobNotFound:
            book = None
        if book is None:
            raise HTTPException(404, "That job has no finished book (it was deleted, or is not done yet).")
        return _serve(book, kind)

    @app.get("/book/{book_id}/{kind}", dependencies=[Depends(login)])
    def for_book(book_id: str, kind: str) -> Response:
        check(kind)
        found = book_by_id(output_root(), book_id)
        if found is None or found.audio is None or found.audio.suffix.lower() != ".m4b":
            raise HTTPException(404, "No such book on the shelf.")
        return _serve(book_downloads(found.audio, readalong=found.readalong), kind)

    return app


def mount_downloads(gradio_app: Any, jobs: Any, output_root: Callable[[], Path]) -> None:
    """Put ``/downloads`` in front of Gradio's routes on its running FastAPI app."""
    gradio_app.router.routes.insert(
        0, Mount(DOWNLOADS_PREFIX, app=build_downloads(gradio_app, jobs, output_root))
    )
