"""A fake Audiobookshelf server for delivery tests, written from ABS v2.36.0's own rules.

Its API (as an ``httpx.MockTransport`` handler, so real multipart bodies are encoded by httpx and
parsed here with the standard library's MIME parser) and its scanner follow advplyr/audiobookshelf:

- ``POST /api/upload`` (``server/controllers/MiscController.js`` handleUpload): Bearer token, only
  the fields title/author/series/library/folder; 400 without library, folder or title; files go to
  ``<folder>/<author>/<series>/<title>/`` through sanitizeFilename (``server/utils/fileUtils.js``).
  No scan follows: the folder watcher (``server/Watcher.js``) adds a *new* item once its files
  settle, and ignores ``change`` events, so files rewritten in an existing item change nothing
  until that item is scanned.
- ``POST /api/libraries/<id>/scan`` adds new items (and updates changed ones); ``POST
  /api/items/<id>/scan`` rescans one item (``LibraryController.scan``, ``LibraryItemController.scan``).
- The scanner (``server/scanner/BookScanner.js``): a folder is one item, every audio file in it a
  track; metadata from the sources in ``defaultMetadataPrecedence`` order, later ones winning:
  folderStructure (``server/utils/scandir.js`` getBookDataFromDir: Author/Series/Title, ``Vol N - ``
  sequence, ``{narrators}``), audioMetatags (``server/utils/prober.js`` keys and
  ``AudioFileScanner.setBookMetadataFromAudioMetaTags``), txtFiles (desc.txt, first line of
  reader.txt), opfFile (``server/utils/parsers/parseOpfMetadata.js``), absMetadata (metadata.json,
  ``server/utils/generators/abmetadataGenerator.js``). Chapters come from the first audio file's
  chapter marks unless metadata.json has a valid list; the ebook is the folder's EPUB.
Every narrator and author read from a folder name, an audio tag or ``reader.txt`` goes through
ABS's real name parser (``tests/fakes/abs_names.py``, re-implemented from
``server/utils/parsers/parseNameString.js`` and ``parseFullName.js``): nicknames in parentheses,
titles and suffixes are dropped, commas split, "Last, First" is reordered. ``watcher=False`` is a
library whose folder watcher is off: an upload then shows nothing until a scan.
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import re
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
from lxml import etree

from tests.fakes.abs_names import parse_name_string

AUDIO = (".m4b", ".mp3", ".m4a", ".flac", ".opus", ".ogg")
_OPF = "http://www.idpf.org/2007/opf"
_DC = "http://purl.org/dc/elements/1.1/"
_ILLEGAL = re.compile(r'[/?<>\\:*|"]')


def sanitize_filename(name: str) -> str:
    """ABS's sanitizeFilename for the cases a test meets: first ':' → ' - ', illegal chars dropped."""
    name = name.replace(":", " - ", 1)
    name = _ILLEGAL.sub("", name)
    name = re.sub(r"[. ]+$", "", name)
    return re.sub(r"\s+", " ", name)


def split_names(text: str) -> list[str]:
    """parseNameString.parse(text).names, as ABS reads a narrator or author string."""
    return parse_name_string(text)


def _js_number(text: str) -> str:
    """``Number(text).toString()`` for the sequence strings getSequence matches."""
    value = float(text) if text else 0.0
    return str(int(value)) if value.is_integer() else repr(value)


def parse_series_string(text: str) -> dict[str, str | None]:
    """parseSeriesString: ``"Name #2"`` → name and sequence."""
    match = re.search(r" #([^#\s]+)$", text)
    return {"name": text[: match.start()] if match else text, "sequence": match.group(1) if match else None}


def folder_structure(rel_path: str) -> dict[str, Any]:
    """getBookDataFromDir: ``Author/Series/Title``; from the title ``[ASIN]``, a ``{narrators}`` end,
    ``Vol N - `` (in a series folder) and a leading ``(1999) - `` year, in that order."""
    parts = rel_path.split("/")
    title = parts.pop()
    series = parts.pop() if len(parts) > 1 else None
    author = parts.pop() if parts else None
    found: dict[str, Any] = {}
    asin = re.search(r"(?: |^)\[([A-Z0-9]{10})](?= |$)", title)
    if asin:
        found["asin"], title = asin.group(1), title.replace(asin.group(0), "", 1)
    title = title.strip()
    narrators = None
    match = re.match(r"^(?P<title>.*) \{(?P<narrators>.*)\}$", title)
    if match:
        title, narrators = match["title"], match["narrators"]
    sequence = None
    if series:
        pieces = title.split(" - ")
        for i, piece in enumerate(pieces):
            vol = re.match(
                r"^(vol\.? |volume |book )?(\d{0,3}(?:\.\d{1,2})?)(\.?)(?: (.*))?$", piece, re.IGNORECASE
            )
            if vol and not (vol.group(4) and not (vol.group(1) or vol.group(3))):
                sequence = _js_number(vol.group(2))
                pieces[i : i + 1] = [vol.group(4)] if vol.group(4) else []
                break
        title = " - ".join(pieces)
    year = re.match(r"^ *\(?([0-9]{4})\)? * - *(.+)", title)
    if year:
        found["publishedYear"], title = year.group(1), year.group(2)
    return {
        **found,
        "title": title,
        "authors": split_names(author or ""),
        "narrators": split_names(narrators or ""),
        "series": [{"name": series, "sequence": sequence}] if series else [],
    }


def _ffprobe(path: Path) -> dict[str, Any]:
    done = subprocess.run(
        ["ffprobe", "-v", "error", "-show_format", "-show_chapters", "-of", "json", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


def audio_metatags(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """prober.js's tag keys and setBookMetadataFromAudioMetaTags's mapping; the file's chapters."""
    probe = _ffprobe(path)
    tags = {k.lower(): v for k, v in probe.get("format", {}).get("tags", {}).items()}

    def grab(*keys: str) -> str:
        return next((str(tags[k]).strip() for k in keys if tags.get(k)), "")

    found: dict[str, Any] = {}
    if grab("composer", "tcom", "tcm"):
        found["narrators"] = split_names(grab("composer", "tcom", "tcm"))
    if grab("album", "title"):
        found["title"] = grab("album", "title")
    if grab("artist", "album_artist"):
        found["authors"] = split_names(grab("artist", "album_artist"))
    for key, names in (
        ("description", ("description", "comment")),
        ("publisher", ("publisher",)),
        ("isbn", ("isbn",)),
        ("asin", ("asin", "audible_asin")),
        ("language", ("language",)),
    ):
        if grab(*names):
            found[key] = grab(*names)
    series, part = grab("series", "show", "mvnm"), grab("series-part", "episode_id", "mvin", "part")
    if series:
        found["series"] = [{"name": series, "sequence": part or None}]
    elif grab("grouping"):
        found["series"] = [parse_series_string(s.strip()) for s in grab("grouping").split(";") if s.strip()]
    chapters = [
        {
            "id": i,
            "start": float(c["start_time"]),
            "end": float(c["end_time"]),
            "title": c.get("tags", {}).get("title", ""),
        }
        for i, c in enumerate(probe.get("chapters", []))
    ]
    return found, chapters


def opf_file(path: Path) -> dict[str, Any]:
    """parseOpfMetadata: dc fields, creators by opf:role, identifiers by opf:scheme, calibre:series."""
    root = etree.fromstring(path.read_bytes())
    meta = root.find(f"{{{_OPF}}}metadata")
    assert meta is not None

    def texts(name: str) -> list[str]:
        return [e.text.strip() for e in meta.findall(f"{{{_DC}}}{name}") if e.text and e.text.strip()]

    creators = [(e.get(f"{{{_OPF}}}role"), (e.text or "").strip()) for e in meta.findall(f"{{{_DC}}}creator")]
    scheme = {
        e.get(f"{{{_OPF}}}scheme"): (e.text or "").strip() for e in meta.findall(f"{{{_DC}}}identifier")
    }
    metas = [(e.get("name"), e.get("content")) for e in meta.findall(f"{{{_OPF}}}meta")]
    found: dict[str, Any] = {
        "title": next(iter(texts("title")), None),
        "subtitle": next(iter(texts("subtitle")), None),
        "authors": [v for r, v in creators if r == "aut" and v],
        "narrators": [v for r, v in creators if r == "nrt" and v],
        "publishedYear": (texts("date") or [""])[0].split("-")[0] or None,
        "publisher": next(iter(texts("publisher")), None),
        "isbn": scheme.get("ISBN"),
        "asin": scheme.get("ASIN"),
        "description": next(iter(texts("description")), None),
        "genres": texts("subject"),
        "language": next(iter(texts("language")), None),
        "series": [],
    }
    for i, (name, content) in enumerate(metas):
        if name == "calibre:series" and content:
            after = metas[i + 1] if i + 1 < len(metas) else (None, None)
            found["series"] = [
                {"name": content, "sequence": after[1] if after[0] == "calibre:series_index" else None}
            ]
    return {k: v for k, v in found.items() if v not in (None, "", [])}


def abs_metadata(path: Path) -> dict[str, Any]:
    """metadata.json through abmetadataGenerator.parseJson (a chapter without title voids the list)."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    keys = (
        "title",
        "subtitle",
        "authors",
        "narrators",
        "series",
        "genres",
        "publishedYear",
        "publishedDate",
        "publisher",
        "description",
        "isbn",
        "asin",
        "language",
        "explicit",
        "abridged",
        "tags",
    )
    found = {k: doc[k] for k in keys if k in doc and doc[k] is not None}
    if "series" in found:
        found["series"] = [parse_series_string(s) for s in found["series"]]
    chapters = doc.get("chapters")
    if isinstance(chapters, list) and all(
        isinstance(c.get("start"), (int, float))
        and isinstance(c.get("end"), (int, float))
        and isinstance(c.get("title"), str)
        and c["title"]
        for c in chapters
    ):
        found["chapters"] = [
            {"id": i, "start": c["start"], "end": c["end"], "title": c["title"]}
            for i, c in enumerate(chapters)
        ]
    for key in ("authors", "genres", "tags", "chapters"):
        if key in found and not found[key]:
            del found[key]
    return found


def scan_folder(folder: Path, rel_path: str) -> dict[str, Any]:
    """One book item from a folder, under ABS's metadata precedence."""
    files = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
    audio = [p for p in files if p.suffix.lower() in AUDIO]
    book: dict[str, Any] = {"narrators": [], "authors": [], "series": [], "chapters": [], "genres": []}
    book.update(folder_structure(rel_path))
    if audio:
        tags, chapters = audio_metatags(audio[0])
        book.update(tags)
        book["chapters"] = chapters
    desc, reader = folder / "desc.txt", folder / "reader.txt"
    if desc.is_file() and desc.read_text().strip():
        book["description"] = desc.read_text().strip()
    if reader.is_file() and reader.read_text().splitlines()[0].strip():
        book["narrators"] = split_names(reader.read_text().splitlines()[0].strip())
    opf = next((p for p in files if p.suffix == ".opf"), None)
    if opf is not None:
        book.update(opf_file(opf))
    if (folder / "metadata.json").is_file():
        book.update(abs_metadata(folder / "metadata.json"))
    epubs = [p for p in files if p.suffix == ".epub"]
    covers = [p for p in files if p.stem == "cover" and p.suffix in (".jpg", ".jpeg", ".png", ".webp")]
    return {
        "relPath": rel_path,
        "audioFiles": [p.name for p in audio],
        "ebookFile": epubs[0].name if epubs else None,
        "coverPath": covers[0].name if covers else None,
        "metadata": book,
    }


@dataclass
class FakeAbs:
    """One server with one book library whose single folder is ``library_dir``."""

    library_dir: Path
    token: str = "abs-token"
    library_id: str = "lib_books"
    folder_id: str = "fol_books"
    uploads: list[dict[str, Any]] = field(default_factory=list)
    library_scans: list[str] = field(default_factory=list)
    item_scans: list[str] = field(default_factory=list)
    items: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> scanned item
    watcher: bool = True  # the library's folder watcher (off: a new folder waits for a scan)
    busy_scans: int = 0  # library scan requests answered while "already scanning" (ignored)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def transport(self) -> httpx.MockTransport:
        """The transport an ``AbsClient`` is given."""
        return httpx.MockTransport(self.handle)

    def item_at(self, rel_path: str) -> dict[str, Any] | None:
        """The item whose folder is ``rel_path``."""
        return next((dict(item, id=i) for i, item in self.items.items() if item["relPath"] == rel_path), None)

    def _scan(self, rel_path: str, item_id: str | None = None) -> str:
        item_id = (
            item_id
            or next((i for i, it in self.items.items() if it["relPath"] == rel_path), None)
            or f"li_{len(self.items) + 1}"
        )
        self.items[item_id] = scan_folder(self.library_dir / rel_path, rel_path)
        return item_id

    def _book_folders(self) -> list[str]:
        found = []
        for path in sorted(self.library_dir.rglob("*")):
            rel = path.relative_to(self.library_dir)
            if (
                path.is_dir()
                and not any(part.startswith(".") for part in rel.parts)
                and any(p.is_file() and p.suffix.lower() in (*AUDIO, ".epub") for p in path.iterdir())
            ):
                found.append(rel.as_posix())
        return found

    def handle(self, request: httpx.Request) -> httpx.Response:
        """Route one request the way ABS's ApiRouter does."""
        if request.headers.get("authorization") != f"Bearer {self.token}":
            return httpx.Response(401, text="Unauthorized")
        path, method = request.url.path, request.method
        with self._lock:
            if method == "GET" and path == "/api/libraries":
                return httpx.Response(
                    200,
                    json={
                        "libraries": [
                            {
                                "id": self.library_id,
                                "name": "Audiobooks",
                                "mediaType": "book",
                                "folders": [
                                    {
                                        "id": self.folder_id,
                                        "fullPath": str(self.library_dir),
                                        "libraryId": self.library_id,
                                    }
                                ],
                            }
                        ]
                    },
                )
            if method == "POST" and path == "/api/upload":
                return self._upload(request)
            if method == "POST" and path == f"/api/libraries/{self.library_id}/scan":
                self.library_scans.append(self.library_id)
                if self.busy_scans > 0:
                    # ABS 2.36 while a scan runs: logs "Already scanning" and answers 200, doing nothing.
                    self.busy_scans -= 1
                    return httpx.Response(200)
                for rel in self._book_folders():
                    self._scan(rel)
                return httpx.Response(200)
            match = re.fullmatch(r"/api/items/([^/]+)/scan", path)
            if method == "POST" and match:
                if match.group(1) not in self.items:
                    return httpx.Response(404, text="Not Found")
                self.item_scans.append(match.group(1))
                self._scan(self.items[match.group(1)]["relPath"], match.group(1))
                return httpx.Response(200, json={"result": "UPDATED"})
            if method == "GET" and path == f"/api/libraries/{self.library_id}/items":
                results = [
                    {"id": i, "relPath": it["relPath"], "media": {"metadata": it["metadata"]}}
                    for i, it in self.items.items()
                ]
                return httpx.Response(200, json={"results": results, "total": len(results)})
        return httpx.Response(404, text="Not Found")

    def _upload(self, request: httpx.Request) -> httpx.Response:
        body = b"Content-Type: " + request.headers["content-type"].encode() + b"\r\n\r\n" + request.read()
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(body)
        fields: dict[str, str] = {}
        files: list[tuple[str, str, bytes]] = []  # (field, file name, data)
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            filename = part.get_filename()
            if filename is None:
                fields[name] = part.get_content()
            else:
                files.append((name, filename, part.get_payload(decode=True)))
        self.uploads.append({"fields": dict(fields), "files": [(f, n, len(d)) for f, n, d in files]})
        if not files:
            return httpx.Response(400, text="Invalid request, no files")
        if len({f for f, _, _ in files}) != len(files):
            return httpx.Response(500, text="files under one field arrive as a list")
        if not fields.get("library") or not fields.get("folder") or not fields.get("title"):
            return httpx.Response(400, text="Invalid request body")
        if fields["library"] != self.library_id:
            return httpx.Response(404, text="Library not found")
        if fields["folder"] != self.folder_id:
            return httpx.Response(404, text="Folder not found")
        parts = [fields.get("author"), fields.get("series"), fields["title"]]
        rel_path = "/".join(sanitize_filename(p) for p in parts if p)
        target = self.library_dir / rel_path
        is_new = not target.is_dir()
        target.mkdir(parents=True, exist_ok=True)
        for _field, filename, data in files:
            (target / sanitize_filename(filename)).write_bytes(data)
        if is_new and self.watcher:
            self._scan(rel_path)  # the watcher adds a new folder; rewritten files wait for a scan
        return httpx.Response(200, text="OK")


class _Handler(BaseHTTPRequestHandler):
    fake: FakeAbs

    def _relay(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        request = httpx.Request(
            self.command, f"http://fake{self.path}", headers=dict(self.headers.items()), content=body
        )
        response = self.fake.handle(request)
        self.send_response(response.status_code)
        for key, value in response.headers.items():
            if key.lower() not in ("content-length", "transfer-encoding", "connection"):
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(response.content)))
        self.end_headers()
        self.wfile.write(response.content)

    do_GET = do_POST = _relay

    def log_message(self, *args: object) -> None:
        return


@contextmanager
def serve_fake_abs(fake: FakeAbs) -> Iterator[str]:
    """The fake on a free loopback port over real HTTP (for code that builds its own client); yields its URL."""
    handler = type("Handler", (_Handler,), {"fake": fake})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=30)
