"""Shared fixtures: every test gets its own data root under a temporary OMNI_WEB_HOME."""

from __future__ import annotations

from pathlib import Path

import pytest

from omni_web.paths import DataPaths

DATA_DIR = Path(__file__).parent / "data"

# The fake sgl-omni's `fake_server` fixture factory (tests/fakes/fixtures.py).
pytest_plugins = ["tests.fakes.fixtures"]


@pytest.fixture
def data_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> DataPaths:
    """A fresh data root; OMNI_WEB_HOME points at it for code that reads the environment."""
    root = tmp_path / "omni-home"
    monkeypatch.setenv("OMNI_WEB_HOME", str(root))
    return DataPaths(root=root).ensure()
