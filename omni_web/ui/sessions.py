"""Logins that survive an app restart: the web server's session tokens kept in the data root.

Gradio keeps who is logged in in memory (``App.tokens``, token -> user) under a cookie whose name
carries a random ``App.cookie_id`` (``gradio/routes.py``), so every restart logged every browser
out. Both are saved owner-only under ``state/`` (never served: the app blocks that folder) and
restored at the next start. They are tied to the credentials: a changed password drops them all.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from pathlib import Path
from typing import Any

from omni_web.auth import Credentials
from omni_web.files import write_atomic
from omni_web.paths import DataPaths

__all__ = ["SESSIONS_FILE", "keep_logins"]

SESSIONS_FILE = "ui-sessions.json"
_MAX_TOKENS = 200  # the newest logins kept; older browsers log in again

_log = logging.getLogger(__name__)


def _fingerprint(credentials: Credentials) -> str:
    user, password = credentials.as_tuple()
    return hashlib.sha256(f"{user}\0{password}".encode()).hexdigest()


class _SavedTokens(dict):
    """The token table, written to disk whenever a login or a logout changes it."""

    def __init__(self, path: Path, header: dict[str, str], tokens: dict[str, str]) -> None:
        super().__init__(tokens)
        self._path, self._header = path, header
        self._lock = threading.Lock()

    def _save(self) -> None:
        with self._lock:
            newest = dict(list(self.items())[-_MAX_TOKENS:])
            try:
                write_atomic(self._path, json.dumps({**self._header, "tokens": newest}), mode=0o600)
            except OSError as exc:  # a full disk costs the logins at the next restart, nothing else
                _log.warning("Could not save the web logins to %s: %s", self._path, exc)

    def __setitem__(self, key: str, value: str) -> None:
        super().__setitem__(key, value)
        self._save()

    def __delitem__(self, key: str) -> None:
        super().__delitem__(key)
        self._save()


def keep_logins(app: Any, paths: DataPaths, credentials: Credentials | None) -> None:
    """Restore the saved logins into a launched Gradio ``app`` and save every new one.

    Call right after ``demo.launch``; without a login (``credentials`` None) there is nothing to keep.
    """
    if credentials is None:
        return
    path = paths.state_dir / SESSIONS_FILE
    fingerprint = _fingerprint(credentials)
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        saved = {}
    if not isinstance(saved, dict) or saved.get("credentials") != fingerprint or not saved.get("cookie_id"):
        saved = {"cookie_id": app.cookie_id, "tokens": {}}
    tokens = saved.get("tokens") if isinstance(saved.get("tokens"), dict) else {}
    app.cookie_id = str(saved["cookie_id"])
    app.tokens = _SavedTokens(path, {"credentials": fingerprint, "cookie_id": app.cookie_id}, tokens)
    app.tokens._save()
