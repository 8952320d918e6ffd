"""Fetching a book from a link (an OPDS acquisition link, any HTTP URL), with optional basic auth."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlparse

import httpx

from omni_web.errors import BookError
from omni_web.library.intake import keep_book_bytes
from omni_web.paths import DataPaths

__all__ = ["fetch_book"]

MAX_BOOK_BYTES = 200 * 1024 * 1024
_FILENAME = re.compile(r"filename\*?=(?:UTF-8'')?\"?([^\";]+)\"?", re.IGNORECASE)


def _name(response: httpx.Response, url: str) -> str:
    match = _FILENAME.search(response.headers.get("content-disposition", ""))
    if match:
        return Path(unquote(match.group(1))).name
    return Path(unquote(urlparse(str(response.url)).path)).name or "book.epub"


def fetch_book(paths: DataPaths, url: str, *, username: str | None = None, password: str | None = None,
               timeout_s: float = 120.0) -> Path:
    """Download ``url`` into the kept books; returns the local path.

    Raises:
        BookError: not http(s), the server refused, or the book is over 200 MB.
    """
    if urlparse(url).scheme not in ("http", "https"):
        raise BookError(f"'{url}' is not an http(s) link; give the book's download (acquisition) link.")
    auth = httpx.BasicAuth(username, password or "") if username else None
    try:
        with httpx.stream("GET", url, auth=auth, follow_redirects=True, timeout=timeout_s) as response:
            if response.status_code >= 400:
                raise BookError(
                    f"Downloading {url} failed: HTTP {response.status_code}"
                    + (" (check the catalog's user and password)." if response.status_code == 401 else ".")
                )
            chunks, size = [], 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > MAX_BOOK_BYTES:
                    raise BookError(f"The book at {url} is over 200 MB; the app refuses it.")
                chunks.append(chunk)
            name = _name(response, url)
    except httpx.HTTPError as exc:
        raise BookError(
            f"Downloading {url} failed: {exc}. Check the link and that the catalog is reachable."
        ) from exc
    return keep_book_bytes(paths, b"".join(chunks), name)
