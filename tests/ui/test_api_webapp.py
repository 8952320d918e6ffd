"""The API against ``python webapp.py`` as a user runs it (the fake server renders): a job created
through /api/v1 finishes and its m4b downloads; the UI login and API tokens open only their own side."""

from __future__ import annotations

import json
import subprocess

import httpx
import pytest

from omni_web.api import token_store
from omni_web.server import ServerManager
from omni_web.settings import load_settings
from tests.conftest import DATA_DIR
from tests.fakes.sgl_omni import free_port
from tests.ui.conftest import MODEL
from tests.ui.helpers import cache_model, prepare_root, start_webapp, wait_for


@pytest.fixture
def running_app(tmp_path):
    paths = prepare_root(tmp_path / "home", model_keys=(MODEL,))
    cache_model(tmp_path / "hf-cache", MODEL)
    env = {"OMNI_WEB_AUTH": "reader:pw-123", "HF_HUB_CACHE": str(tmp_path / "hf-cache")}
    app = start_webapp(paths, port=free_port(), env=env, log_path=tmp_path / "app.log")
    try:
        yield app, paths
    finally:
        app.stop()
        ServerManager(paths, load_settings(paths)).stop(grace_s=5.0)


def test_a_job_created_through_the_api_finishes_and_its_m4b_downloads(running_app, tmp_path):
    app, paths = running_app
    _, secret = token_store(paths).create("test")
    api = f"{app.url}/api/v1"
    auth = {"Authorization": f"Bearer {secret}"}
    assert httpx.get(f"{api}/jobs", timeout=30).status_code == 401
    login = httpx.post(f"{app.url}/login", data={"username": "reader", "password": "pw-123"}, timeout=30)
    assert login.status_code == 200
    assert (
        httpx.get(f"{api}/jobs", cookies=login.cookies, timeout=30).status_code == 401
    )  # the UI login is not a token
    assert httpx.get(f"{app.url}/config", headers=auth, timeout=30).status_code == 401  # nor a token a login
    assert "/jobs" in httpx.get(f"{api}/openapi.json", headers=auth, timeout=30).json()["paths"]
    settings = json.dumps({"model_key": MODEL, "voice": {"kind": "speaker", "name": "Vivian"}})
    with (DATA_DIR / "hefty-water.epub").open("rb") as handle:
        created = httpx.post(
            f"{api}/jobs",
            headers={**auth, "Idempotency-Key": "k1"},
            timeout=60,
            files={"file": ("hefty-water.epub", handle)},
            data={"settings": settings},
        )
    assert created.status_code == 201, created.text
    job_id = created.json()["id"]
    job = wait_for(
        lambda: (
            (j := httpx.get(f"{api}/jobs/{job_id}", headers=auth, timeout=30).json())["state"]
            in ("done", "failed")
            and j
        ),
        timeout_s=240,
        what="the API job to finish",
    )
    assert job["state"] == "done", job["error"]
    assert job["progress"]["fraction"] == 1.0
    files = httpx.get(f"{api}/jobs/{job_id}/files", headers=auth, timeout=30).json()
    book = next(f for f in files if f["kind"] == "book")
    assert book["name"].endswith(".m4b")
    download = httpx.get(f"{app.url}{book['url']}", headers=auth, timeout=60)
    assert download.status_code == 200 and len(download.content) == book["size"]
    direct = httpx.get(f"{api}/jobs/{job_id}/book", headers=auth, timeout=60)
    assert direct.content == download.content
    (tmp_path / "book.m4b").write_bytes(direct.content)
    probe = json.loads(
        subprocess.run(  # noqa: S603 - fixed argv
            [
                "ffprobe",
                "-v",
                "error",
                "-show_format",
                "-show_chapters",
                "-of",
                "json",
                str(tmp_path / "book.m4b"),
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    assert float(probe["format"]["duration"]) > 5 and len(probe["chapters"]) >= 2
