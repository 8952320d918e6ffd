"""The web UI's login: when it is required, where the credentials come from, the first password.

The UI listens on every interface by default, so anyone on the LAN could reach it; whenever it
listens beyond loopback a login is required (``--no-auth`` is the explicit opt-out). Credentials
come, first match wins, from the ``OMNI_WEB_AUTH`` environment variable (``user:password``), a
file named with ``--auth-file`` (``user:password`` on its first line, or JSON with ``username`` and
``password``), or ``state/credentials.json`` in the data root. When none exists, a random password
is created and stored there owner-only (0600), and the caller prints it once.
"""

from __future__ import annotations

import ipaddress
import json
import os
import secrets
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from omni_web.errors import SettingsError
from omni_web.files import write_atomic
from omni_web.paths import DataPaths

__all__ = [
    "AUTH_ENV_VAR",
    "DEFAULT_USERNAME",
    "Credentials",
    "is_loopback_host",
    "load_or_create_credentials",
    "parse_credentials",
    "read_auth_file",
    "resolve_login",
]

AUTH_ENV_VAR = "OMNI_WEB_AUTH"
DEFAULT_USERNAME = "omni"
_PASSWORD_BYTES = 12  # token_urlsafe(12): 16 characters, 96 bits


@dataclass(frozen=True, slots=True)
class Credentials:
    """One username and password, and where they came from (for the start-up message)."""

    username: str
    password: str = field(repr=False)
    source: str = ""
    created: bool = False  # True when this start generated the password

    def as_tuple(self) -> tuple[str, str]:
        """``(username, password)``, the form Gradio's ``launch(auth=...)`` takes."""
        return (self.username, self.password)


def is_loopback_host(host: str) -> bool:
    """True when ``host`` only accepts connections from this machine (127.x, ::1, localhost)."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def parse_credentials(text: str, *, source: str) -> Credentials:
    """Parse ``user:password`` (the password may contain ``:``).

    Raises:
        SettingsError: no colon, or an empty username or password.
    """
    user, sep, password = text.strip().partition(":")
    if not sep or not user.strip() or not password:
        raise SettingsError(
            f"The login in {source} must look like user:password (both non-empty). Fix it, or unset it "
            "to use the password stored in the data root."
        )
    return Credentials(user.strip(), password, source=source)


def read_auth_file(path: Path) -> Credentials:
    """Credentials from a file: ``user:password`` on the first line, or JSON ``{username, password}``.

    Raises:
        SettingsError: the file is missing, unreadable or malformed.
    """
    try:
        text = Path(path).read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise SettingsError(f"Cannot read the login file {path}: {exc.strerror or exc}.") from exc
    if text.startswith("{"):
        try:
            data = json.loads(text)
            return Credentials(str(data["username"]), str(data["password"]), source=str(path))
        except (ValueError, KeyError, TypeError) as exc:
            raise SettingsError(
                f"The login file {path} is JSON but lacks 'username' and 'password'; fix or delete it."
            ) from exc
    first_line = text.splitlines()[0] if text else ""
    return parse_credentials(first_line, source=str(path))


def _write_owner_only(path: Path, credentials: Credentials) -> None:
    """Write the stored login with mode 0600 from the first byte (never world-readable)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"username": credentials.username, "password": credentials.password}) + "\n"
    write_atomic(path, text, mode=0o600)


def _stored(path: Path) -> Credentials | None:
    if not path.exists():
        return None
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        try:
            path.chmod(0o600)  # someone loosened it; the password must stay the owner's
        except OSError:
            pass  # not our file to fix; reading it is still fine
    return read_auth_file(path)


def load_or_create_credentials(
    paths: DataPaths,
    *,
    auth_file: Path | None = None,
    environ: Mapping[str, str] | None = None,
    make_password: Callable[[], str] = lambda: secrets.token_urlsafe(_PASSWORD_BYTES),
) -> Credentials:
    """The login to require: environment, then ``auth_file``, then the stored one, else a new one.

    A new password is stored owner-only in ``paths.credentials_file``; the returned record has
    ``created=True`` so the caller prints it once.

    Raises:
        SettingsError: the environment variable or a file holds something unusable.
    """
    env = os.environ if environ is None else environ
    raw = env.get(AUTH_ENV_VAR, "").strip()
    if raw:
        return parse_credentials(raw, source=f"the {AUTH_ENV_VAR} environment variable")
    if auth_file is not None:
        return read_auth_file(auth_file)
    stored = _stored(paths.credentials_file)
    if stored is not None:
        return stored
    created = Credentials(DEFAULT_USERNAME, make_password(), source=str(paths.credentials_file), created=True)
    _write_owner_only(paths.credentials_file, created)
    return created


def resolve_login(
    host: str,
    paths: DataPaths,
    *,
    no_auth: bool = False,
    auth_file: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> Credentials | None:
    """The login the UI requires when bound to ``host``, or None when it requires none.

    Beyond loopback a login is always required unless ``no_auth``; on loopback only an explicit
    environment variable or ``auth_file`` turns it on.
    """
    if no_auth:
        return None
    env = os.environ if environ is None else environ
    explicit = bool(env.get(AUTH_ENV_VAR, "").strip()) or auth_file is not None
    if is_loopback_host(host) and not explicit:
        return None
    return load_or_create_credentials(paths, auth_file=auth_file, environ=env)
