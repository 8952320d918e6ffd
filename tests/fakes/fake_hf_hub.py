"""A small local HTTP server that speaks the Hugging Face Hub endpoints ``snapshot_download`` uses.

huggingface_hub 2.4's ``snapshot_download`` (``_snapshot_download.py``, ``file_download.py``,
``hf_api.py``) calls, in order:

* ``GET /api/models/{repo}/revision/{rev}``: ``HfApi.repo_info``; needs ``id`` and ``sha``.
* ``GET /api/models/{repo}/tree/{commit}?recursive=True&expand=False``: the file listing, paged
  with a ``Link: <url>; rel="next"`` header (``utils/_pagination.py``). Entries are
  ``{"type": "file", "path", "size", "oid"[, "lfs": {"oid", "size", "pointerSize"}]}``; we never
  send ``xetHash``, so the tree cache never routes a file to the xet protocol.
* ``HEAD /{repo}/resolve/{commit}/{path}``: ``get_hf_file_metadata`` reads ``X-Repo-Commit``,
  ``X-Linked-Etag`` (else ``ETag``), ``X-Linked-Size`` (else ``Content-Length``), and would switch
  to xet on ``X-Xet-Hash`` plus a refresh route, which we never send: plain HTTP is used.
* ``GET`` of the same URL, with ``Range: bytes=N-`` when ``http_get`` resumes after a broken
  connection (answered ``206`` with ``Content-Range``).

Errors carry the hub's ``X-Error-Code`` header, which ``hf_raise_for_status`` maps to its
exception classes: ``GatedRepo`` (401/403), ``RepoNotFound``, ``RevisionNotFound``,
``EntryNotFound``. A gated repo lists its files publicly but refuses ``resolve`` without an
allowed token, as the real hub does.

Test knobs: ``cut_connection_once(repo, path, after_bytes)`` sends the full ``Content-Length``
then closes the socket after that many body bytes, once; ``chunk_delay_s`` slows every body
down; ``requests`` records every request (method, path, Range, Authorization).
"""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

__all__ = ["FakeHub", "FakeRepo", "RecordedRequest"]

_SEND_CHUNK = 16 * 1024
# Files at least this big are served like LFS files (sha256 ETag, X-Linked-* headers).
_LFS_MIN_SIZE = 1024


def _git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class FakeRepo:
    """A model repository: file paths to contents; a commit hash derived from them."""

    repo_id: str
    files: dict[str, bytes]
    gated: bool = False

    @property
    def commit(self) -> str:
        digest = hashlib.sha1()
        for path in sorted(self.files):
            digest.update(path.encode() + b"\0" + hashlib.sha256(self.files[path]).digest())
        return digest.hexdigest()

    def is_lfs(self, path: str) -> bool:
        return len(self.files[path]) >= _LFS_MIN_SIZE

    def etag(self, path: str) -> str:
        data = self.files[path]
        return hashlib.sha256(data).hexdigest() if self.is_lfs(path) else _git_blob_sha1(data)

    def tree_entries(self) -> list[dict]:
        entries: list[dict] = []
        folders = sorted({path.rsplit("/", 1)[0] for path in self.files if "/" in path})
        for folder in folders:
            entries.append(
                {"type": "directory", "path": folder, "oid": hashlib.sha1(folder.encode()).hexdigest()}
            )
        for path in sorted(self.files):
            data = self.files[path]
            entry = {"type": "file", "path": path, "size": len(data), "oid": _git_blob_sha1(data)}
            if self.is_lfs(path):
                entry["lfs"] = {
                    "oid": hashlib.sha256(data).hexdigest(),
                    "size": len(data),
                    "pointerSize": 134,
                }
            entries.append(entry)
        return entries


@dataclass(frozen=True)
class RecordedRequest:
    """One request the fake hub received."""

    method: str
    path: str
    range: str | None
    authorization: str | None


@dataclass
class _State:
    repos: dict[str, FakeRepo] = field(default_factory=dict)
    cuts: dict[tuple[str, str], int] = field(default_factory=dict)
    requests: list[RecordedRequest] = field(default_factory=list)
    allowed_tokens: set[str] = field(default_factory=set)
    chunk_delay_s: float = 0.0
    tree_page_size: int = 1000
    lock: threading.Lock = field(default_factory=threading.Lock)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Idle keep-alive connections (huggingface_hub pools them across tests) are closed after this
    # many seconds, so a stopped hub never leaves a handler waiting on a client that moved on.
    timeout = 5
    server: _Server

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        """Silence the per-request stderr lines."""

    # --- plumbing -----------------------------------------------------------------------------

    def _record(self) -> None:
        state = self.server.state
        with state.lock:
            state.requests.append(
                RecordedRequest(
                    self.command, self.path, self.headers.get("Range"), self.headers.get("Authorization")
                )
            )

    def _send_json(self, status: int, payload: object, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _error(self, status: int, code: str, message: str, extra: dict[str, str] | None = None) -> None:
        self._send_json(
            status, {"error": message}, {"X-Error-Code": code, "X-Error-Message": message, **(extra or {})}
        )

    def _repo(self, org: str, name: str) -> FakeRepo | None:
        return self.server.state.repos.get(f"{org}/{name}")

    def _resolve_rev(self, repo: FakeRepo, rev: str) -> str | None:
        return repo.commit if unquote(rev) in ("main", repo.commit) else None

    # --- verbs --------------------------------------------------------------------------------

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        self._record()
        self._route()

    def do_HEAD(self) -> None:  # noqa: N802 - stdlib name
        self._record()
        self._route()

    def _route(self) -> None:
        url = urlsplit(self.path)
        parts = [unquote(part) for part in url.path.strip("/").split("/")]
        if len(parts) >= 5 and parts[:2] == ["api", "models"] and parts[4] in ("revision", "tree"):
            repo = self._repo(parts[2], parts[3])
            if repo is None:
                return self._error(404, "RepoNotFound", "Repository not found")
            if parts[4] == "revision":
                return self._model_info(repo, parts[5] if len(parts) > 5 else "main")
            return self._tree(repo, parts[5] if len(parts) > 5 else "main", parse_qs(url.query))
        if len(parts) >= 5 and parts[2] == "resolve":
            repo = self._repo(parts[0], parts[1])
            if repo is None:
                return self._error(404, "RepoNotFound", "Repository not found")
            return self._resolve(repo, parts[3], "/".join(parts[4:]))
        return self._error(404, "RepoNotFound", f"No route for {url.path}")

    def _model_info(self, repo: FakeRepo, rev: str) -> None:
        commit = self._resolve_rev(repo, rev)
        if commit is None:
            return self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
        self._send_json(
            200,
            {
                "_id": commit[:24],
                "id": repo.repo_id,
                "modelId": repo.repo_id,
                "sha": commit,
                "private": False,
                "gated": "auto" if repo.gated else False,
                "disabled": False,
                "siblings": [{"rfilename": path} for path in sorted(repo.files)],
                "lastModified": "2026-01-01T00:00:00.000Z",
                "tags": [],
                "downloads": 0,
                "likes": 0,
            },
        )

    def _tree(self, repo: FakeRepo, rev: str, query: dict[str, list[str]]) -> None:
        commit = self._resolve_rev(repo, rev)
        if commit is None:
            return self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
        entries = repo.tree_entries()
        start = int(query.get("cursor", ["0"])[0])
        size = self.server.state.tree_page_size
        page = entries[start : start + size]
        headers = {}
        if start + size < len(entries):
            host = self.headers.get("Host", f"127.0.0.1:{self.server.server_address[1]}")
            next_url = (
                f"http://{host}/api/models/{repo.repo_id}/tree/{rev}?recursive=True&cursor={start + size}"
            )
            headers["Link"] = f'<{next_url}>; rel="next"'
        self._send_json(200, page, headers)

    def _authorized(self, repo: FakeRepo) -> bool:
        if not repo.gated:
            return True
        auth = self.headers.get("Authorization", "")
        return auth.startswith("Bearer ") and auth[len("Bearer ") :] in self.server.state.allowed_tokens

    def _resolve(self, repo: FakeRepo, rev: str, path: str) -> None:
        commit = self._resolve_rev(repo, rev)
        if commit is None:
            return self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
        if not self._authorized(repo):
            status = 403 if self.headers.get("Authorization") else 401
            return self._error(
                status,
                "GatedRepo",
                f"Access to model {repo.repo_id} is restricted. You must have access to it and be "
                "authenticated to access it. Please log in.",
            )
        if path not in repo.files:
            return self._error(404, "EntryNotFound", f"{path} does not exist", {"X-Repo-Commit": commit})
        data = repo.files[path]
        start = 0
        range_header = self.headers.get("Range")
        if range_header and range_header.startswith("bytes="):
            start = int(range_header[len("bytes=") :].split("-", 1)[0] or 0)
        body = data[start:]
        self.send_response(206 if start else 200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("X-Repo-Commit", commit)
        self.send_header("ETag", f'"{repo.etag(path)}"')
        if repo.is_lfs(path):
            self.send_header("X-Linked-Etag", f'"{repo.etag(path)}"')
            self.send_header("X-Linked-Size", str(len(data)))
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        self.end_headers()
        if self.command == "HEAD":
            return
        self._send_body(repo, path, body)

    def _send_body(self, repo: FakeRepo, path: str, body: bytes) -> None:
        state = self.server.state
        with state.lock:
            cut = state.cuts.pop((repo.repo_id, path), None)
        limit = len(body) if cut is None else min(cut, len(body))
        sent = 0
        try:
            while sent < limit:
                piece = body[sent : min(limit, sent + _SEND_CHUNK)]
                self.wfile.write(piece)
                self.wfile.flush()
                sent += len(piece)
                if state.chunk_delay_s:
                    time.sleep(state.chunk_delay_s)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
            return
        if cut is not None:
            # Drop the connection mid-body, as a flaky network would.
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                return


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    state: _State


class FakeHub:
    """The fake hub; use as a context manager, then point ``endpoint`` (or HF_ENDPOINT) at ``url``."""

    def __init__(self, repos: list[FakeRepo] | None = None) -> None:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.state = _State()
        for repo in repos or []:
            self.add_repo(repo)
        self._thread: threading.Thread | None = None

    @property
    def state(self) -> _State:
        return self._server.state

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def requests(self) -> list[RecordedRequest]:
        with self.state.lock:
            return list(self.state.requests)

    def add_repo(self, repo: FakeRepo) -> None:
        self.state.repos[repo.repo_id] = repo

    def allow_token(self, token: str) -> None:
        """Let ``Authorization: Bearer <token>`` through gated repos."""
        self.state.allowed_tokens.add(token)

    def cut_connection_once(self, repo_id: str, path: str, after_bytes: int) -> None:
        """The next GET of ``path`` sends ``after_bytes`` of its body, then drops the connection."""
        with self.state.lock:
            self.state.cuts[(repo_id, path)] = after_bytes

    def set_chunk_delay(self, seconds: float) -> None:
        """Sleep this long after every 16 KiB of body (slow network)."""
        self.state.chunk_delay_s = seconds

    def set_tree_page_size(self, size: int) -> None:
        """Page the tree listing (the real hub pages at 1000 entries)."""
        self.state.tree_page_size = size

    def gets_of(self, repo_id: str, path: str) -> list[RecordedRequest]:
        """The GET requests for one file's resolve URL."""
        marker = f"/{repo_id}/resolve/"
        return [
            req
            for req in self.requests
            if req.method == "GET" and marker in req.path and req.path.endswith("/" + path)
        ]

    def start(self) -> FakeHub:
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:  # shutdown() waits for serve_forever, so only when it runs
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> FakeHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
