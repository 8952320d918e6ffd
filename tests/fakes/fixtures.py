"""Pytest fixtures around the fake ``sgl-omni``; loaded for every test through ``tests/conftest.py``.

``fake_server`` yields a factory with :func:`tests.fakes.sgl_omni.start_fake_server`'s signature;
every server it starts is stopped (by its own pid/group) when the test ends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.fakes.sgl_omni import FakeServer, start_fake_server

__all__ = ["fake_server"]


@pytest.fixture
def fake_server(tmp_path: Path) -> Iterator[Callable[..., FakeServer]]:
    """A factory ``start(model_key, **kwargs) -> FakeServer``; logs default to ``tmp_path``."""
    started: list[FakeServer] = []

    def start(model_key: str, **kwargs: object) -> FakeServer:
        kwargs.setdefault("log_path", tmp_path / f"fake-sgl-omni-{len(started)}.log")
        server = start_fake_server(model_key, **kwargs)  # type: ignore[arg-type]
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
