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
_SLOW_FIXTURES = frozenset(
    {"fake_server", "managed_home", "backend", "ui_app", "hub", "launched", "make_manager"}
)


# The longest test files, longest first (measured with --durations). scripts/test.sh runs the suite on
# two xdist workers that take the next file as they finish one, so starting with these keeps one
# worker from running a 5-minute file alone at the end. A file missing here only runs later.
_LONGEST_FIRST = (
    "ui/test_browser.py",
    "test_qa_pipeline.py",
    "ui/test_browser_long_books.py",
    "ui/test_review_browser.py",
    "ui/test_browser_newcomer.py",
    "readalong/test_epub.py",
    "test_qa_faults_flite.py",
    "test_cli_convert.py",
    "test_convert_formats.py",
    "test_cast_cli.py",
    "ui/test_readalong_browser.py",
    "test_backend_venv.py",
    "contract/test_convert_contract.py",
    "ui/test_webapp.py",
    "readalong/test_qa_reuse.py",
    "readalong/test_convert_readalong.py",
    "contract/test_router_group.py",
    "test_qa_review.py",
    "deliver/test_audiobookshelf.py",
    "ui/test_browser_cast.py",
    "test_master.py",
    "ui/test_jobs.py",
    "ui/test_queue_browser.py",
    "test_cast_readalong.py",
    "server/test_cli.py",
    "ui/test_browser_delivery.py",
    "test_pipeline.py",
    "ui/test_lexicon.py",
    "contract/test_router_faults.py",
)


def _longest_first(items: list[pytest.Item], tests_dir: Path) -> None:
    """Reorder whole files (each keeps its own order) so the longest come first."""
    rank = {name: i for i, name in enumerate(_LONGEST_FIRST)}

    def key(pair: tuple[int, pytest.Item]) -> tuple[int, int]:
        index, item = pair
        path = Path(str(item.fspath))
        name = path.relative_to(tests_dir).as_posix() if path.is_relative_to(tests_dir) else ""
        return rank.get(name, len(rank)), index

    items[:] = [item for _, item in sorted(enumerate(items), key=key)]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests of the slow directories and fixtures ``slow`` (see the comment above), and
    put the longest files first."""
    tests_dir = Path(__file__).parent
    _longest_first(items, tests_dir)
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
