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


# --- the fast tier ----------------------------------------------------------------------------
# `pytest -m "not slow"` runs the unit tests only, for the development loop; CI and scripts/test.sh
# run everything. Tier membership is explicit, never guessed from a test's source:
# - a module that drives real tools (ffmpeg, sox, espeak-ng, EPUBCheck, whisper, subprocess CLIs),
#   the fake server for all its tests, or many threaded iterations says so itself:
#   ``pytestmark = pytest.mark.slow  # why``;
# - every test under tests/ui, tests/server and tests/contract is slow (they all start processes);
# - a test that takes a fixture starting a server or the app (_SLOW_FIXTURES) is slow, wherever it is;
# - ``browser`` and ``contract`` tests are slow.
_SLOW_DIRS = ("ui", "server", "contract")
_SLOW_FIXTURES = frozenset({"fake_server", "managed_home", "backend", "ui_app", "hub", "launched", "make_manager"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests of the slow directories and fixtures ``slow`` (see the comment above)."""
    tests_dir = Path(__file__).parent
    for item in items:
        path = Path(str(item.fspath))
        parts = path.relative_to(tests_dir).parts if path.is_relative_to(tests_dir) else ()
        slow = (
            (len(parts) > 1 and parts[0] in _SLOW_DIRS)
            or bool(_SLOW_FIXTURES & set(getattr(item, "fixturenames", ())))
            or item.get_closest_marker("browser") is not None
            or item.get_closest_marker("contract") is not None
        )
        if slow:
            item.add_marker(pytest.mark.slow)
