"""The backend venv and companion packages, with real venvs and real pip over local wheel folders.

Nothing here touches PyPI: sglang-omni is a tiny stand-in wheel with the same name and version
(and an ``sgl-omni`` console script), installed with ``--no-index --find-links``.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from omni_web.backend.companions import (
    companion_status,
    ensure_companion_packages,
    missing_companion_packages,
)
from omni_web.backend.interpreter import InterpreterChoice, InterpreterSource
from omni_web.backend.venv import BackendState, backend_python, install_backend, probe_backend
from omni_web.catalog import SGLANG_OMNI_VERSION, get_entry
from omni_web.errors import BackendError, InstallCancelled, InstallError
from omni_web.paths import DataPaths
from tests.fakes.wheels import make_wheel

pytestmark = pytest.mark.slow  # subprocesses, venvs

APP = InterpreterChoice(Path(sys.executable), tuple(sys.version_info[:3]), InterpreterSource.APP, "test")


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("wheels")
    make_wheel(folder, "sglang-omni", SGLANG_OMNI_VERSION, scripts={"sgl-omni": "main"})
    make_wheel(folder, "sglang-omni", "0.1.8", scripts={"sgl-omni": "main"})
    # Companions: one whose dependency exists nowhere (only --no-deps installs it), one pinned.
    make_wheel(folder, "tiny-sox", "1.0", requires=("package-that-does-not-exist>=1",))
    make_wheel(folder, "tiny-qwen-tts", "0.1.1", requires=("transformers<5",))
    make_wheel(folder, "tiny-qwen-tts", "0.2.0")
    return folder


def _offline(wheels: Path) -> list[str]:
    return ["--no-index", "--find-links", str(wheels)]


@pytest.fixture(scope="module")
def ready_backend(tmp_path_factory: pytest.TempPathFactory, wheels: Path) -> tuple[DataPaths, list[str]]:
    """One venv with the stand-in sglang-omni, shared by the tests that leave it READY."""
    paths = DataPaths(root=tmp_path_factory.mktemp("omni-home")).ensure()
    lines: list[str] = []
    install_backend(paths, interpreter=APP, index_args=_offline(wheels), log=lines.append)
    return paths, lines


def test_fresh_install_creates_the_venv_and_installs_the_pin(ready_backend) -> None:
    paths, lines = ready_backend
    status = probe_backend(paths)
    assert status.state is BackendState.READY and status.ready
    assert status.installed_version == SGLANG_OMNI_VERSION
    assert status.python_version == tuple(sys.version_info[:3])
    assert status.sgl_omni == paths.backend_venv / "bin" / "sgl-omni"
    out = subprocess.run([str(status.sgl_omni)], capture_output=True, text=True, check=True).stdout
    assert out.strip() == f"sglang-omni {SGLANG_OMNI_VERSION}"
    # The live log: disk numbers first, the pip command, pip's own lines, the final state.
    assert "The backend venv needs about 10.0 GB" in lines[0]
    assert any(line.startswith("$ ") and "--pre" in line and f"sglang-omni=={SGLANG_OMNI_VERSION}" in line
               for line in lines)
    assert any("Successfully installed sglang-omni" in line for line in lines)
    (log_file,) = paths.logs_dir.glob("backend-install-*.log")
    assert "Successfully installed sglang-omni" in log_file.read_text()


def test_a_different_version_is_outdated_and_setup_brings_the_pin_back(ready_backend, wheels: Path) -> None:
    paths, _ = ready_backend
    install_backend(paths, interpreter=APP, version="0.1.8", index_args=_offline(wheels))
    outdated = probe_backend(paths)
    assert outdated.state is BackendState.OUTDATED and outdated.installed_version == "0.1.8"
    install_backend(paths, interpreter=APP, index_args=_offline(wheels))
    assert probe_backend(paths).state is BackendState.READY


def test_a_failed_pip_run_is_reported_and_a_rerun_repairs_it(ready_backend, wheels: Path) -> None:
    paths, _ = ready_backend
    with pytest.raises(InstallError) as raised:
        install_backend(paths, interpreter=APP, version="9.9.9", index_args=_offline(wheels))
    assert "sglang-omni==9.9.9" in str(raised.value) and "run setup again" in str(raised.value)
    assert "No matching distribution" in raised.value.log_path.read_text()
    interrupted = probe_backend(paths)
    assert interrupted.state is BackendState.INCOMPLETE and "interrupted" in interrupted.detail
    assert install_backend(paths, interpreter=APP, index_args=_offline(wheels)).ready


def test_companions_install_only_what_is_missing_without_dependencies(ready_backend, wheels: Path) -> None:
    paths, _ = ready_backend
    entry = dataclasses.replace(
        get_entry("qwen3_tts_0_6b_base"), companion_packages=("tiny-sox", "tiny-qwen-tts==0.1.1")
    )
    assert missing_companion_packages(paths, entry) == ["tiny-sox", "tiny-qwen-tts==0.1.1"]
    lines: list[str] = []
    installed = ensure_companion_packages(paths, entry, log=lines.append, index_args=_offline(wheels))
    assert installed == ["tiny-sox", "tiny-qwen-tts==0.1.1"]
    assert any("--no-deps" in line for line in lines if line.startswith("$ "))
    versions = {s.name: s.installed_version for s in companion_status(paths, entry)}
    assert versions == {"tiny-sox": "1.0", "tiny-qwen-tts": "0.1.1"}
    assert ensure_companion_packages(paths, entry, index_args=_offline(wheels)) == []

    # A wrong version (e.g. upgraded by hand) is put back to the pin; the other is left alone.
    python = str(backend_python(paths))
    subprocess.run([python, "-m", "pip", "install", "-q", *_offline(wheels), "tiny-qwen-tts==0.2.0"],
                   check=True)
    assert missing_companion_packages(paths, entry) == ["tiny-qwen-tts==0.1.1"]
    assert ensure_companion_packages(paths, entry, index_args=_offline(wheels)) == ["tiny-qwen-tts==0.1.1"]
    assert missing_companion_packages(paths, entry) == []
    # sglang-omni itself was not disturbed.
    assert probe_backend(paths).ready


def test_companions_need_the_backend_venv(data_paths: DataPaths) -> None:
    with pytest.raises(BackendError, match="python -m omni_web setup"):
        ensure_companion_packages(data_paths, get_entry("zonos2"))
    assert ensure_companion_packages(data_paths, get_entry("voxtral_tts")) == []  # has none


class _HangingIndex:
    """A find-links URL that never answers, so pip is busy until it is cancelled."""

    def __init__(self) -> None:
        self.hit = threading.Event()
        release = self.release = threading.Event()
        hit = self.hit

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - stdlib name
                hit.set()
                release.wait(60)

            def log_message(self, *args: object) -> None:
                """Quiet."""

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/"

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def test_cancelled_install_is_incomplete_and_reruns_repair_even_a_broken_venv(
    data_paths: DataPaths, wheels: Path
) -> None:
    assert probe_backend(data_paths).state is BackendState.MISSING
    index = _HangingIndex()
    cancel = threading.Event()
    threading.Thread(target=lambda: index.hit.wait(120) and cancel.set(), daemon=True).start()
    try:
        with pytest.raises(InstallCancelled) as raised:
            install_backend(
                data_paths,
                interpreter=APP,
                index_args=["--no-index", "--find-links", index.url],
                cancel=cancel,
            )
    finally:
        index.close()
    assert "cancelled" in str(raised.value) and raised.value.log_path.exists()
    assert probe_backend(data_paths).state is BackendState.INCOMPLETE

    assert install_backend(data_paths, interpreter=APP, index_args=_offline(wheels)).ready

    backend_python(data_paths).unlink()  # e.g. the base interpreter was removed
    assert probe_backend(data_paths).state is BackendState.BROKEN
    repaired = install_backend(data_paths, interpreter=APP, index_args=_offline(wheels))
    assert repaired.ready and repaired.installed_version == SGLANG_OMNI_VERSION
