"""Building blocks for the UI tests: a data root with the fake sgl-omni installed, a Hugging Face
cache holding one model, the app launched in this process or as ``webapp.py`` in a subprocess."""

from __future__ import annotations

import hashlib
import html.parser
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path

import httpx
import yaml

from omni_web.catalog import get_entry
from omni_web.paths import REPO_ROOT, DataPaths
from tests.fakes.sgl_omni import free_port, install_fake_sgl_omni

__all__ = [
    "GRADIO_CLIENT_HTTPX",
    "AppProcess",
    "FAST_FAKE_ENV",
    "cache_model",
    "prepare_root",
    "start_webapp",
    "table_rows",
    "wait_for",
]

# httpx's default 5 s read timeout fails gradio_client's config fetch from an app on a loaded
# machine; reads stay unbounded (as the client's own result stream has them), the rest bounded.
GRADIO_CLIENT_HTTPX = {"timeout": httpx.Timeout(60.0, read=None)}

# The fake server answers at once with short audio, so a whole book renders in seconds.
FAST_FAKE_ENV = {"FAKE_SGL_SECONDS_PER_WORD": "0.02", "FAKE_SGL_WARMUP_S": "0.1", "FAKE_SGL_LATENCY_S": "0"}


def _dist_info(site: Path, name: str, version: str) -> None:
    dist = site / f"{name.replace('-', '_')}-{version}.dist-info"
    dist.mkdir(parents=True, exist_ok=True)
    (dist / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
    )
    (dist / "RECORD").write_text("", encoding="utf-8")


def prepare_root(
    root: Path, *, server_port: int | None = None, model_keys: tuple[str, ...] = ()
) -> DataPaths:
    """A data root whose backend venv runs the fake ``sgl-omni`` and already has ``model_keys``'
    companion packages (so a start does not pip-install them), and whose settings use a free port."""
    paths = DataPaths(root=root).ensure()
    install_fake_sgl_omni(paths.backend_venv)
    site = (
        paths.backend_venv
        / "lib"
        / f"python{sys.version_info.major}.{sys.version_info.minor}"
        / "site-packages"
    )
    for key in model_keys:
        for spec in get_entry(key).companion_packages:
            name, _, version = spec.partition("==")
            _dist_info(site, name, version or "1.0")
    settings = {"server_port": server_port or free_port(), "start_timeout_s": 60.0}
    paths.settings_file.write_text(yaml.safe_dump(settings), encoding="utf-8")
    return paths


def cache_model(cache_dir: Path, key: str) -> Path:
    """Put a complete (tiny) snapshot of catalog model ``key`` into a Hugging Face cache layout:
    ``models--Org--Name/{blobs,snapshots/<commit>,refs/main}``, the way huggingface_hub writes it."""
    repo_id = get_entry(key).repo_id
    repo = cache_dir / ("models--" + repo_id.replace("/", "--"))
    data = b'{"model_type": "qwen3_tts", "omni_web_fake_repo": "%s"}\n' % repo_id.encode()
    blob_id = hashlib.sha1(data).hexdigest()  # noqa: S324 - a cache file name, like git's blob ids
    commit = hashlib.sha1(repo_id.encode()).hexdigest()  # noqa: S324
    (repo / "blobs").mkdir(parents=True, exist_ok=True)
    (repo / "blobs" / blob_id).write_bytes(data)
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True, exist_ok=True)
    link = snapshot / "config.json"
    if not link.is_symlink():
        link.symlink_to(Path("..", "..", "blobs", blob_id))
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text(commit, encoding="utf-8")
    return snapshot


class _TableParser(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self.tables and self.tables[-1]:
            self.tables[-1][-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def table_rows(markup: str) -> list[list[list[str]]]:
    """Every ``<table>`` in ``markup`` as rows of cell texts (tags dropped, spaces collapsed)."""
    parser = _TableParser()
    parser.feed(markup)
    return parser.tables


def wait_for(condition, *, timeout_s: float, interval_s: float = 0.2, what: str = "condition"):
    """Poll ``condition()`` until it returns something truthy; return it, or fail after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval_s)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


class AppProcess:
    """``python webapp.py`` running in its own process group; stop() ends it by its own pid."""

    def __init__(self, process: subprocess.Popen[str], url: str, log_path: Path) -> None:
        self.process = process
        self.url = url
        self.log_path = log_path

    def output(self) -> str:
        """Everything the app printed so far."""
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def password(self) -> str | None:
        """The password the first start printed, if it printed one."""
        match = re.search(r"Login: user '([^']+)', password '([^']+)'", self.output())
        return match.group(2) if match else None

    def stop(self, *, sig: int = signal.SIGTERM, timeout_s: float = 20.0) -> None:
        """Signal the app's process group and wait; SIGKILL if it does not exit in time."""
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, sig)
                self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=timeout_s)
            except ProcessLookupError:
                pass


def start_webapp(
    paths: DataPaths,
    *,
    port: int,
    host: str = "127.0.0.1",
    env: Mapping[str, str] | None = None,
    args: tuple[str, ...] = (),
    log_path: Path,
    timeout_s: float = 90.0,
) -> AppProcess:
    """Launch ``webapp.py`` like a user does and wait until it printed its URLs and answers HTTP.

    A port taken between ``free_port()`` and the app's bind (another test's server took it) is
    replaced by another free one, twice at most; the returned app's ``url`` has the port used.
    """
    for attempt in range(3):
        try:
            return _start_webapp(paths, port=port, host=host, env=env, args=args, log_path=log_path,
                                 timeout_s=timeout_s)
        except _PortTaken:
            if attempt == 2:
                raise
            port = free_port()
    raise AssertionError("unreachable")


class _PortTaken(AssertionError):
    """webapp.py exited because its port was taken."""


def _start_webapp(
    paths: DataPaths,
    *,
    port: int,
    host: str,
    env: Mapping[str, str] | None,
    args: tuple[str, ...],
    log_path: Path,
    timeout_s: float,
) -> AppProcess:
    child_env = {
        **os.environ,
        "OMNI_WEB_HOME": str(paths.root),
        "GRADIO_ANALYTICS_ENABLED": "False",
        "PYTHONUNBUFFERED": "1",
        **FAST_FAKE_ENV,
        **(env or {}),
    }
    if "OMNI_WEB_AUTH" not in (env or {}):
        child_env.pop("OMNI_WEB_AUTH", None)  # the login comes from this test, not the caller's shell
    handle = log_path.open("w", encoding="utf-8")
    process = subprocess.Popen(  # noqa: S603 - fixed argv: this repository's webapp.py
        [sys.executable, str(REPO_ROOT / "webapp.py"), "--host", host, "--port", str(port), *args],
        cwd=str(REPO_ROOT),
        env=child_env,
        stdout=handle,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    app = AppProcess(process, f"http://127.0.0.1:{port}", log_path)

    def ready() -> bool:
        if process.poll() is not None:
            output = app.output()
            taken = "Cannot find empty port" in output or "address already in use" in output
            failure = _PortTaken if taken else AssertionError
            raise failure(f"webapp.py exited with {process.returncode}:\n{output[-4000:]}")
        if "omni-web is running" not in app.output():
            return False
        try:
            with urllib.request.urlopen(app.url + "/", timeout=5):  # noqa: S310 - our loopback URL
                return True
        except urllib.error.HTTPError:
            return True  # it answers (a login page or a redirect)
        except (urllib.error.URLError, OSError):
            return False

    try:
        wait_for(ready, timeout_s=timeout_s, interval_s=0.3, what="webapp.py to answer")
    except BaseException:
        app.stop()
        raise
    return app
