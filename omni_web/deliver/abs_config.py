"""The Audiobookshelf settings: server URL, API token, library, and how books get there.

Stored apart from ``settings.yaml`` in ``state/audiobookshelf.json``, owner-only (mode 0600) like
the login credentials (omni_web/auth.py), because the token lets anyone holding it upload.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from omni_web.errors import SettingsError
from omni_web.files import write_atomic
from omni_web.paths import DataPaths

__all__ = ["MODES", "AbsConfig", "abs_config_path", "load_abs_config", "save_abs_config"]

log = logging.getLogger(__name__)

# upload: POST /api/upload (any network path to the server); folder: write into the library's
# folder (mounted here) and ask for a scan, for books too large to upload through a proxy.
MODES = ("upload", "folder")


@dataclass(frozen=True, slots=True)
class AbsConfig:
    """Where finished books are delivered; ``enabled`` only with URL, token and library."""

    enabled: bool = False
    url: str = ""
    token: str = ""
    library: str = ""  # the library's id (a name works too)
    mode: str = "upload"
    folder_path: str = ""  # folder mode: the library folder as this machine sees it
    folder_id: str = ""  # upload mode: one of the library's folders ("" = its first)

    @property
    def active(self) -> bool:
        """True when a finished book should be delivered."""
        return self.enabled and bool(self.url and self.token and self.library)

    def validate(self) -> AbsConfig:
        """Return self if usable; raise :class:`SettingsError` naming the first problem."""
        if self.mode not in MODES:
            raise SettingsError(f"Audiobookshelf mode must be upload or folder, not '{self.mode}'.")
        if self.url and not self.url.startswith(("http://", "https://")):
            raise SettingsError("The Audiobookshelf URL must start with http:// or https://.")
        if self.enabled and self.mode == "folder" and not self.folder_path.strip():
            raise SettingsError("Folder mode needs the library folder's path on this machine "
                                "(where Audiobookshelf's library folder is mounted).")
        return self


def abs_config_path(paths: DataPaths) -> Path:
    """``state/audiobookshelf.json``."""
    return paths.state_dir / "audiobookshelf.json"


def load_abs_config(paths: DataPaths) -> AbsConfig:
    """The saved settings, or the defaults (off) when none are saved or the file is unreadable."""
    path = abs_config_path(paths)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return AbsConfig()
    except (OSError, ValueError) as exc:
        log.warning("Ignoring unreadable Audiobookshelf settings %s: %s", path, exc)
        return AbsConfig()
    if path.stat().st_mode & 0o077:
        path.chmod(0o600)  # someone loosened it; the token must stay the owner's
    known = (
        {k: v for k, v in doc.items() if k in AbsConfig.__dataclass_fields__} if isinstance(doc, dict) else {}
    )
    return replace(AbsConfig(), **known)


def save_abs_config(paths: DataPaths, config: AbsConfig) -> AbsConfig:
    """Validate and store owner-only; returns the saved settings."""
    config = config.validate()
    path = abs_config_path(paths)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(asdict(config), indent=1) + "\n", mode=0o600)
    return config
