"""The one data root that holds everything the app writes.

The root defaults to the repository folder; ``OMNI_WEB_HOME`` moves it. The environment is read
once, by :func:`data_root_from_env`, and the resulting :class:`DataPaths` is passed to whatever
needs a path. Nothing else in the package reads ``OMNI_WEB_HOME``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["REPO_ROOT", "CONFIGS_DIR", "DataPaths", "data_root_from_env"]

REPO_ROOT = Path(__file__).resolve().parent.parent
# Vendored `sgl-omni serve` configs ship with the code, not with the data root.
CONFIGS_DIR = REPO_ROOT / "configs"

HOME_ENV_VAR = "OMNI_WEB_HOME"


@dataclass(frozen=True, slots=True)
class DataPaths:
    """Every folder and file the app owns, derived from one root."""

    root: Path

    @property
    def envs_dir(self) -> Path:
        """Virtual environments and provisioned interpreters."""
        return self.root / "envs"

    @property
    def backend_venv(self) -> Path:
        """The sglang-omni backend venv (``envs/sglomni``)."""
        return self.envs_dir / "sglomni"

    @property
    def pythons_dir(self) -> Path:
        """Interpreters provisioned by uv when no compatible one exists."""
        return self.envs_dir / "pythons"

    @property
    def voices_dir(self) -> Path:
        """The reference-clip library."""
        return self.root / "voices"

    @property
    def outputs_dir(self) -> Path:
        """Finished audiobooks (the default; a setting may move it)."""
        return self.root / "outputs"

    @property
    def state_dir(self) -> Path:
        """Machine state: server record, job database, chunk cache."""
        return self.root / "state"

    @property
    def logs_dir(self) -> Path:
        """One log file per server start and per install task."""
        return self.state_dir / "logs"

    @property
    def server_record(self) -> Path:
        """The managed server's pid/start-time/model/port record."""
        return self.state_dir / "server.json"

    @property
    def jobs_db(self) -> Path:
        """The persistent job queue."""
        return self.state_dir / "jobs.sqlite3"

    @property
    def output_claims_file(self) -> Path:
        """The output names ``convert`` runs claimed (pipeline.claims)."""
        return self.state_dir / "output-names.json"

    @property
    def chunk_cache_dir(self) -> Path:
        """Rendered chunk audio, named by content hash."""
        return self.state_dir / "chunks"

    @property
    def gradio_temp_dir(self) -> Path:
        """Gradio's upload and file cache (``GRADIO_TEMP_DIR``): inside the data root, not in the
        system temp folder shared with other programs."""
        return self.root / "cache" / "gradio"

    @property
    def settings_file(self) -> Path:
        """User settings (YAML)."""
        return self.root / "settings.yaml"

    @property
    def credentials_file(self) -> Path:
        """Web UI login, written owner-only."""
        return self.state_dir / "credentials.json"

    @property
    def api_tokens_file(self) -> Path:
        """The API's tokens (hashed), owner-only."""
        return self.state_dir / "api-tokens.json"

    @property
    def presets_file(self) -> Path:
        """Job presets and the rules that pick them."""
        return self.state_dir / "presets.json"

    def ensure(self) -> DataPaths:
        """Create the folders that must exist; return self for chaining."""
        for folder in (self.envs_dir, self.voices_dir, self.outputs_dir, self.state_dir, self.logs_dir,
                       self.gradio_temp_dir):
            folder.mkdir(parents=True, exist_ok=True)
        return self


def data_root_from_env(environ: os._Environ[str] | dict[str, str] | None = None) -> DataPaths:
    """Return the data paths for ``OMNI_WEB_HOME`` if set, else the repository folder."""
    env = os.environ if environ is None else environ
    raw = env.get(HOME_ENV_VAR, "").strip()
    root = Path(raw).expanduser().resolve() if raw else REPO_ROOT
    return DataPaths(root=root)
