"""An httpx client for the few Audiobookshelf endpoints delivery needs.

What the server does with each (advplyr/audiobookshelf v2.36.0):

- ``GET /api/libraries`` → ``{"libraries": [{id, name, mediaType, folders: [{id, fullPath}]}]}``
  (``LibraryController.findAll``).
- ``POST /api/upload`` (multipart; the user needs the upload permission) reads only the form fields
  ``title`` (required), ``author``, ``series``, ``library`` and ``folder`` and moves every file to
  ``<folder>/<author>/<series>/<title>/<file name>``, each part through its ``sanitizeFilename``
  (``MiscController.handleUpload``); no scan follows, the library's watcher finds the files. Each
  file goes under its own form field: files sharing a field would arrive as a list, which the
  handler does not expect.
- ``POST /api/libraries/<id>/scan`` (admin) scans the library's folders; ``POST /api/items/<id>/scan``
  rescans one item, which a file rewritten in place needs (the watcher ignores ``change`` events).
- ``GET /api/libraries/<id>/items`` → ``{"results": [{id, relPath, media: …}], "total": N}``.

httpx errors are translated here, once, into :class:`~omni_web.errors.DeliveryError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from omni_web.errors import DeliveryError, exception_detail

__all__ = ["AbsClient", "AbsFolder", "AbsLibrary"]

_TIMEOUT_S = 30.0
# An m4b of many hours over a LAN: the upload gets its own, long, write/read time.
_UPLOAD_TIMEOUT_S = 3600.0


@dataclass(frozen=True, slots=True)
class AbsFolder:
    """One folder of a library, as the server sees it."""

    id: str
    full_path: str


@dataclass(frozen=True, slots=True)
class AbsLibrary:
    """One library: its id, name, media type ("book" or "podcast") and folders."""

    id: str
    name: str
    media_type: str
    folders: tuple[AbsFolder, ...]

    @property
    def label(self) -> str:
        """``Audiobooks (book, 1 folder)`` for a list."""
        count = len(self.folders)
        return f"{self.name} ({self.media_type}, {count} folder{'s' if count != 1 else ''})"


class AbsClient:
    """Talks to one Audiobookshelf server with an API token (``Authorization: Bearer``)."""

    def __init__(self, base_url: str, token: str, *, transport: httpx.BaseTransport | None = None) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise DeliveryError(f"The Audiobookshelf URL '{base_url}' must start with http:// or https://. "
                                "Fix it in Settings → Audiobookshelf.")
        if not token.strip():
            raise DeliveryError(
                "No Audiobookshelf API token is set. Create one in Audiobookshelf (Settings → "
                "API Keys, or your user's API token) and paste it in Settings → Audiobookshelf."
            )
        self.base_url = base_url.rstrip("/")
        self._http = httpx.Client(
            base_url=self.base_url,
            transport=transport,
            timeout=_TIMEOUT_S,
            headers={"Authorization": f"Bearer {token.strip()}"},
        )

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def __enter__(self) -> AbsClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise DeliveryError(
                f"Audiobookshelf at {self.base_url} could not be reached ({exception_detail(exc)}). "
                "Check the URL in Settings → Audiobookshelf and that the server runs."
            ) from exc
        if response.status_code in (401, 403):
            raise DeliveryError(
                f"Audiobookshelf refused the API token for {method} {path} (HTTP {response.status_code}). "
                "Check the token, and that its user may upload (or, for a scan, is an admin).",
                status=response.status_code,
            )
        if response.status_code >= 400:
            detail = " ".join(response.text.split())[:200]
            raise DeliveryError(
                f"Audiobookshelf answered {method} {path} with HTTP {response.status_code}: {detail}",
                status=response.status_code,
            )
        return response

    def libraries(self) -> list[AbsLibrary]:
        """Every library the token's user can see."""
        doc = self._call("GET", "/api/libraries").json()
        return [
            AbsLibrary(
                id=str(lib["id"]),
                name=str(lib.get("name", "")),
                media_type=str(lib.get("mediaType", "")),
                folders=tuple(
                    AbsFolder(str(f["id"]), str(f.get("fullPath", ""))) for f in lib.get("folders", [])
                ),
            )
            for lib in doc.get("libraries", [])
        ]

    def library(self, library_id: str) -> AbsLibrary:
        """The library with this id (or name)."""
        for lib in self.libraries():
            if library_id in (lib.id, lib.name):
                return lib
        raise DeliveryError(
            f"Audiobookshelf has no library '{library_id}' this token can see. "
            "Pick one with Test in Settings → Audiobookshelf."
        )

    def upload(
        self,
        library: AbsLibrary,
        *,
        title: str,
        author: str,
        series: str,
        files: Sequence[Path],
        folder_id: str = "",
    ) -> None:
        """Upload ``files`` as one item into ``<folder>/<author>/<series>/<title>/``."""
        folder = folder_id or (library.folders[0].id if library.folders else "")
        if not folder:
            raise DeliveryError(f"The Audiobookshelf library '{library.name}' has no folder to upload into.")
        data = {"title": title, "author": author, "series": series, "library": library.id, "folder": folder}
        with ExitStack() as stack:
            parts = {
                str(i): (path.name, stack.enter_context(path.open("rb")), _media_type(path))
                for i, path in enumerate(files)
            }
            self._call(
                "POST",
                "/api/upload",
                data={k: v for k, v in data.items() if v},
                files=parts,
                timeout=_UPLOAD_TIMEOUT_S,
            )

    def scan_library(self, library_id: str) -> None:
        """Ask the server to scan the library's folders (the files were written there directly)."""
        self._call("POST", f"/api/libraries/{library_id}/scan")

    def scan_item(self, item_id: str) -> None:
        """Ask the server to scan one item again (its files were rewritten)."""
        self._call("POST", f"/api/items/{item_id}/scan")

    def find_item(self, library_id: str, rel_path: str) -> str | None:
        """The id of the library's item at ``rel_path`` (``Author/Series/Title``), None when not there
        (yet)."""
        doc = self._call(
            "GET", f"/api/libraries/{library_id}/items", params={"limit": 0, "minified": 1}
        ).json()
        wanted = rel_path.strip("/")
        for item in doc.get("results", []):
            if str(item.get("relPath", "")).strip("/") == wanted:
                return str(item["id"])
        return None


def _media_type(path: Path) -> str:
    return {
        ".m4b": "audio/mp4",
        ".mp3": "audio/mpeg",
        ".epub": "application/epub+zip",
        ".jpg": "image/jpeg",
        ".jpeg": "image/jpeg",
        ".png": "image/png",
        ".json": "application/json",
        ".opf": "application/oebps-package+xml",
        ".txt": "text/plain",
    }.get(path.suffix.lower(), "application/octet-stream")
