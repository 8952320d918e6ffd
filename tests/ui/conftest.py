"""Fixtures for the UI tests: the app launched in this process on a free loopback port, with a
temporary data root, the fake sgl-omni as its backend, and a Hugging Face cache holding one model.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from gradio_client import Client

from omni_web.auth import Credentials
from omni_web.paths import DataPaths
from omni_web.services import AppServices
from omni_web.ui import UiContext, build_app, launch_options
from omni_web.ui.app import mount_page_poll
from omni_web.ui.downloads import mount_downloads
from tests.fakes.sgl_omni import free_port
from tests.ui.helpers import FAST_FAKE_ENV, GRADIO_CLIENT_HTTPX, cache_model, prepare_root

MODEL = "qwen3_tts_0_6b_customvoice"
USER, PASSWORD = "tester", "s3cret-pass"


@dataclass
class RunningApp:
    """The in-process app and what the tests look at behind it."""

    url: str
    paths: DataPaths
    services: AppServices
    ctx: UiContext
    cache_dir: Path

    def client(self) -> Client:
        """A fresh gradio_client session, logged in."""
        return Client(
            self.url, auth=(USER, PASSWORD), verbose=False, download_files=str(self.paths.root / "dl"),
            httpx_kwargs=GRADIO_CLIENT_HTTPX,
        )


@contextmanager
def launch_app(
    base: Path, *, hf_endpoint: str | None = None, backend_index_args: tuple[str, ...] = (), **seams: Any
) -> Iterator[RunningApp]:
    """The app over a fresh data root under ``base``, launched in this process; closed on exit.

    ``seams`` are further UiContext fields (``nvml``, ``whisper_loader``).
    """
    saved = {name: os.environ.get(name) for name in FAST_FAKE_ENV}
    os.environ.update(FAST_FAKE_ENV)  # inherited by the fake server the app starts
    paths = prepare_root(base / "home", model_keys=(MODEL,))
    cache_dir = base / "hf-cache"
    cache_model(cache_dir, MODEL)
    services = AppServices.create(paths)
    services.start()
    ctx = UiContext(
        services,
        hf_cache_dir=cache_dir,
        hf_endpoint=hf_endpoint,
        backend_index_args=backend_index_args,
        **seams,
    )
    demo, _ = build_app(ctx)
    demo.queue(default_concurrency_limit=8)
    port = free_port()
    options = launch_options(ctx, host="127.0.0.1", port=port, credentials=Credentials(USER, PASSWORD))
    demo.launch(**options, prevent_thread_lock=True)
    mount_downloads(
        demo.app, services.library.jobs, lambda: services.settings.output_path(paths)
    )  # as webapp.py does
    mount_page_poll(demo.app, ctx)
    try:
        yield RunningApp(f"http://127.0.0.1:{port}", paths, services, ctx, cache_dir)
    finally:
        demo.close()
        services.stop()
        services.server.stop(grace_s=5.0)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@pytest.fixture(scope="module")
def ui_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApp]:
    """One app per test module (building and launching it takes a few seconds)."""
    with launch_app(tmp_path_factory.mktemp("ui-app")) as app:
        yield app


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Debian's chromium for a browser test module (tests/ui/browser_kit.py)."""
    from tests.ui.browser_kit import launch_chromium

    yield from launch_chromium()


@pytest.fixture
def page(browser, app):
    """A logged-in page on the module's ``app`` at 1400x1000."""
    from tests.ui.browser_kit import open_page

    yield from open_page(browser, app)
