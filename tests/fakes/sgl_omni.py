"""Helpers to install and launch the fake ``sgl-omni`` (``fake_sgl_omni.py``) from tests and benches.

- :func:`install_fake_sgl_omni` puts an executable ``bin/sgl-omni`` (and ``bin/python``) into a
  venv-shaped directory, so code that expects the backend venv at ``DataPaths.backend_venv`` finds
  one and launches the fake exactly as it would launch the real CLI.
- :func:`start_fake_server` launches the program directly (argv list, own process group), waits for
  ``/health`` 200 and returns a :class:`FakeServer` that stops it by its own pid/group.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

from omni_web.catalog import get_entry

__all__ = [
    "FAKE_PROGRAM",
    "FakeServer",
    "FakeServerError",
    "free_port",
    "install_fake_sgl_omni",
    "install_router",
    "read_json",
    "start_fake_server",
]

FAKE_PROGRAM = Path(__file__).resolve().parent / "fake_sgl_omni.py"


class FakeServerError(RuntimeError):
    """The fake server exited or never became healthy; the message carries its log tail."""


def free_port() -> int:
    """A TCP port that was free on 127.0.0.1 a moment ago (bind port 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _write_dist_info(venv_dir: Path, name: str = "sglang-omni", version_: str = "0.1.9") -> None:
    """Make the venv report ``name version_`` to ``importlib.metadata`` and ``pip show``."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    folder = f"{re.sub(r'[-.]+', '_', name)}-{version_}.dist-info"
    dist = venv_dir / "lib" / version / "site-packages" / folder
    dist.mkdir(parents=True, exist_ok=True)
    (dist / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version_}\nRequires-Python: <3.13,>=3.11\n"
        "Summary: test double installed by tests/fakes/sgl_omni.py\n", encoding="utf-8")
    if name == "sglang-omni":
        (dist / "entry_points.txt").write_text(
            "[console_scripts]\nsgl-omni = sglang_omni.cli:app\n", encoding="utf-8"
        )
    (dist / "INSTALLER").write_text("fake\n", encoding="utf-8")
    (dist / "RECORD").write_text("", encoding="utf-8")


def _link_pip(venv_dir: Path) -> None:
    """Give the venv the test interpreter's own pip (a symlink), so it looks like a healthy venv."""
    import pip

    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    target = venv_dir / "lib" / version / "site-packages" / "pip"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(Path(pip.__file__).resolve().parent, target_is_directory=True)


def _write_companions(venv_dir: Path) -> None:
    """Mark every catalog companion package as installed, at its pinned version (or 1.0)."""
    from omni_web.catalog import CATALOG

    for spec in sorted({spec for entry in CATALOG for spec in entry.companion_packages}):
        name, _, pin = spec.partition("==")
        _write_dist_info(venv_dir, name, pin or "1.0")


def install_router(venv_dir: Path, router_python: Path) -> Path:
    """Put the REAL router at ``venv_dir/bin/sgl-omni-router-py``, run by ``router_python``.

    ``router_python`` is an interpreter with the sglang-omni 0.1.9 wheel (the contract venv's);
    the script is the wheel's own console-script body, so a group start launches the real router.
    """
    script = venv_dir / "bin" / "sgl-omni-router-py"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(
        f"#!{router_python}\n"
        "import sys\n"
        "from sglang_omni_router.python.serve import main\n"
        "if __name__ == '__main__':\n"
        "    sys.exit(main())\n",
        encoding="utf-8",
    )
    script.chmod(0o755)
    return script


def install_fake_sgl_omni(venv_dir: Path, *, companions: bool = True) -> Path:
    """Create ``venv_dir/bin/sgl-omni`` running the fake with this interpreter; returns its path.

    The directory is a small but real venv: ``pyvenv.cfg``, ``bin/python`` (a symlink to this
    interpreter, which then runs isolated in ``venv_dir``) and an ``sglang_omni-0.1.9.dist-info``, so
    code that checks the backend venv's Python version or installed sglang-omni version sees 0.1.9.
    With ``companions`` every catalog companion package is marked installed too, so a managed start
    never runs pip. ``bin/sgl-omni`` itself runs the fake with ``sys.executable`` (the test interpreter).
    """
    bin_dir = venv_dir / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    base = Path(getattr(sys, "_base_executable", sys.executable))
    version = ".".join(str(part) for part in sys.version_info[:3])
    (venv_dir / "pyvenv.cfg").write_text(
        f"home = {base.parent}\ninclude-system-site-packages = false\nversion = {version}\n", encoding="utf-8"
    )
    _write_dist_info(venv_dir)
    _link_pip(venv_dir)
    if companions:  # as if `models install` had run each model's companion recipe
        _write_companions(venv_dir)
    script = bin_dir / "sgl-omni"
    script.write_text(
        f"#!{sys.executable}\n"
        '"""sgl-omni test double: runs tests/fakes/fake_sgl_omni.py with the given arguments."""\n'
        "import os, sys\n"
        f"program = {str(FAKE_PROGRAM)!r}\n"
        "os.execv(sys.executable, [sys.executable, program, *sys.argv[1:]])\n",
        encoding="utf-8",
    )
    script.chmod(0o755)
    python = bin_dir / "python"
    if python.is_symlink() or python.exists():
        python.unlink()
    python.symlink_to(sys.executable)
    return script


class FakeServer:
    """One running fake ``sgl-omni serve`` process; a context manager that stops it on exit."""

    def __init__(
        self, process: subprocess.Popen[bytes], *, port: int, host: str, log_path: Path, log_handle: IO[bytes]
    ) -> None:
        self.process = process
        self.port = port
        self.host = host
        self.log_path = log_path
        self._log_handle = log_handle

    @property
    def pid(self) -> int:
        """The server's process id (also its process group id)."""
        return self.process.pid

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://{self.host}:{self.port}"

    def log_text(self) -> str:
        """Everything the process wrote so far (stderr and stdout interleaved)."""
        self._log_handle.flush()
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def is_alive(self) -> bool:
        """True while the process has not exited."""
        return self.process.poll() is None

    def stop(self, grace_s: float = 5.0) -> int | None:
        """SIGTERM the server's own process group, SIGKILL after ``grace_s``; returns the exit status."""
        if self.process.poll() is None:
            self._signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
                self.process.wait(timeout=grace_s)
        self._log_handle.close()
        return self.process.returncode

    def kill(self) -> None:
        """SIGKILL its process group at once (a machine that goes away) and reap it."""
        self._signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def _signal(self, signum: int) -> None:
        try:
            os.killpg(self.process.pid, signum)
        except ProcessLookupError:
            return
        except PermissionError:
            self.process.send_signal(signum)

    def __enter__(self) -> FakeServer:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()


def _health_status(url: str) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 - loopback URL we built
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except (urllib.error.URLError, OSError):
        return None


def _model_path(model_key: str) -> str:
    try:
        return get_entry(model_key).repo_id
    except KeyError:
        return model_key  # already a repo id or a directory


def start_fake_server(
    model_key: str,
    *,
    port: int | None = None,
    env: Mapping[str, str] | None = None,
    extra_args: Sequence[str] = (),
    log_path: Path | None = None,
    ready_timeout_s: float = 90,
) -> FakeServer:
    """Launch ``fake_sgl_omni.py serve`` for a catalog key (or repo id / directory) and wait until healthy.

    Args:
        model_key: a catalog key such as ``"higgs_audio_v3_tts"``; a repo id or a local directory also works.
        port: the port to ask for (default: a free one).
        env: extra environment variables (``FAKE_SGL_*`` switches, ``SPEAKER_SAMPLES_DIR``...).
        extra_args: more ``serve`` arguments (``--config``, dotted overrides...).
        log_path: where stdout and stderr go (default: a temporary file).
        ready_timeout_s: how long to wait for ``/health`` 200.

    Raises:
        FakeServerError: the process exited first or did not become healthy in time (it is stopped).
    """
    port = port if port is not None else free_port()
    if log_path is None:
        handle, name = tempfile.mkstemp(prefix="fake-sgl-omni-", suffix=".log")
        os.close(handle)
        log_path = Path(name)
    argv = [
        sys.executable,
        str(FAKE_PROGRAM),
        "serve",
        "--model-path",
        _model_path(model_key),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        *extra_args,
    ]
    log_handle = log_path.open("ab")
    process = subprocess.Popen(  # noqa: S603 - fixed argv, our own test program
        argv,
        stdout=log_handle,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
        start_new_session=True,
    )
    server = FakeServer(process, port=port, host="127.0.0.1", log_path=log_path, log_handle=log_handle)
    deadline = time.monotonic() + ready_timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            server.stop()
            raise FakeServerError(
                f"fake sgl-omni exited with {process.returncode}:\n{server.log_text()[-3000:]}"
            )
        listening = _listening_port(server)
        if listening is not None:
            server.port = listening
            if _health_status(f"{server.base_url}/health") == 200:
                return server
        time.sleep(0.05)
    server.stop()
    raise FakeServerError(
        f"fake sgl-omni not healthy after {ready_timeout_s} s:\n{server.log_text()[-3000:]}"
    )


def _listening_port(server: FakeServer) -> int | None:
    """The port from uvicorn's ``Uvicorn running on http://host:N`` line, once it is printed.

    Waiting for that line (rather than polling the requested port) never talks to whatever holds
    the requested port when the server fell back to another one.
    """
    match = re.search(r"Uvicorn running on http://\S+?:(\d+) ", server.log_text())
    return int(match.group(1)) if match else None


def read_json(url: str) -> object:
    """GET ``url`` and decode its JSON body (any status)."""
    try:
        with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 - loopback URL
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return json.loads(exc.read())
