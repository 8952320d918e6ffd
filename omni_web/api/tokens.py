"""API tokens: created and revoked in Settings, stored hashed, shown once.

A token is 32 random bytes (``ow_`` + URL-safe base64); the file keeps only its SHA-256, a name and
when it was made. A random token of that size cannot be guessed, so a fast hash is enough (a
password would need a slow one). The file is owner-only; the web UI's login is separate.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from omni_web.errors import SettingsError
from omni_web.files import write_atomic

__all__ = ["ApiToken", "TokenStore"]

_PREFIX = "ow_"


@dataclass(frozen=True, slots=True)
class ApiToken:
    """One stored token (never the secret itself)."""

    id: str
    name: str
    sha256: str
    created_at: float


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


class TokenStore:
    """The token file (``state/api-tokens.json``); every call re-reads it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def tokens(self) -> list[ApiToken]:
        """Every live token, oldest first."""
        if not self.path.is_file():
            return []
        try:
            return [ApiToken(**item) for item in json.loads(self.path.read_text(encoding="utf-8"))]
        except (ValueError, TypeError) as exc:
            raise SettingsError(
                f"{self.path} is damaged ({exc}); delete it and create new API tokens."
            ) from exc

    def _write(self, tokens: list[ApiToken]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(self.path, json.dumps([asdict(t) for t in tokens], indent=2) + "\n", mode=0o600)

    def create(self, name: str) -> tuple[ApiToken, str]:
        """A new token: the stored record and the secret, which is shown once and never again."""
        label = name.strip() or "token"
        secret = _PREFIX + secrets.token_urlsafe(32)
        token = ApiToken(id=secrets.token_hex(4), name=label, sha256=_digest(secret), created_at=time.time())
        self._write([*self.tokens(), token])
        return token, secret

    def revoke(self, token_id: str) -> None:
        """Forget a token; requests with it are refused from now on."""
        tokens = self.tokens()
        kept = [t for t in tokens if t.id != token_id]
        if len(kept) == len(tokens):
            raise SettingsError(f"No API token with id '{token_id}'; the list shows the ids.")
        self._write(kept)

    def verify(self, secret: str | None) -> ApiToken | None:
        """The token ``secret`` belongs to, or None (compared in constant time)."""
        if not secret or not secret.startswith(_PREFIX):
            return None
        digest = _digest(secret)
        return next((t for t in self.tokens() if hmac.compare_digest(t.sha256, digest)), None)
