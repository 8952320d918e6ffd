"""``python webapp.py`` as a user runs it: LAN URLs and the first password printed, login enforced
beyond loopback, ``--no-auth``, and jobs that survive an app restart (an interrupted job resumes)."""

from __future__ import annotations

import signal
import stat
from pathlib import Path

import httpx
import pytest
from gradio_client import Client, handle_file

from omni_web.jobs import JobState, JobStore
from omni_web.server import ServerManager
from omni_web.settings import load_settings
from tests.conftest import DATA_DIR
from tests.fakes.sgl_omni import free_port
from tests.ui.conftest import MODEL
from tests.ui.helpers import GRADIO_CLIENT_HTTPX, cache_model, prepare_root, start_webapp, wait_for


@pytest.fixture
def root(tmp_path):
    paths = prepare_root(tmp_path / "home", model_keys=(MODEL,))
    yield paths
    ServerManager(paths, load_settings(paths)).stop(grace_s=5.0)  # a server the app left behind


def _config_status(url: str, cookies: httpx.Cookies | None = None) -> int:
    return httpx.get(f"{url}/config", cookies=cookies, timeout=30).status_code


def test_first_start_on_the_lan_prints_urls_and_a_stored_password(root, tmp_path):
    port = free_port()
    app = start_webapp(root, port=port, host="0.0.0.0", log_path=tmp_path / "app.log")
    try:
        out = app.output()
        assert f"http://127.0.0.1:{port}" in out
        password = app.password()
        assert password and len(password) >= 16
        assert stat.S_IMODE(root.credentials_file.stat().st_mode) == 0o600
        assert _config_status(app.url) == 401
        bad = httpx.post(f"{app.url}/login", data={"username": "omni", "password": "wrong"}, timeout=30)
        assert bad.status_code >= 400
        good = httpx.post(f"{app.url}/login", data={"username": "omni", "password": password}, timeout=30)
        assert good.status_code == 200 and _config_status(app.url, good.cookies) == 200
        client = Client(app.url, auth=("omni", password), verbose=False, httpx_kwargs=GRADIO_CLIENT_HTTPX)
        assert "stopped" in client.predict(api_name="/server_status")[0]
    finally:
        app.stop()
    again = start_webapp(root, port=free_port(), host="0.0.0.0", log_path=tmp_path / "again.log")
    try:
        assert again.password() is None  # not printed a second time
        assert f"password from {root.credentials_file}" in again.output()
        assert Client(again.url, auth=("omni", password), verbose=False,
                      httpx_kwargs=GRADIO_CLIENT_HTTPX).predict(api_name="/server_status")
    finally:
        again.stop()


def test_no_auth_is_an_explicit_opt_out(root, tmp_path):
    app = start_webapp(
        root, port=free_port(), host="0.0.0.0", args=("--no-auth",), log_path=tmp_path / "a.log"
    )
    try:
        assert "Login: none" in app.output()
        assert _config_status(app.url) == 200
        assert not root.credentials_file.exists()
    finally:
        app.stop()


def test_jobs_survive_a_restart_and_an_interrupted_job_resumes(root, tmp_path):
    cache_model(tmp_path / "hf-cache", MODEL)  # Generate queues only downloaded models, as Start does
    env = {
        "OMNI_WEB_AUTH": "reader:pw-123",
        "FAKE_SGL_LATENCY_S": "0.15",
        "HF_HUB_CACHE": str(tmp_path / "hf-cache"),
    }
    port = free_port()
    app = start_webapp(root, port=port, env=env, log_path=tmp_path / "first.log")
    store = JobStore(root.jobs_db)
    try:
        client = Client(app.url, auth=("reader", "pw-123"), verbose=False)
        client.predict(api_name="/generate_load")
        _, _, chapters, *_ = client.predict(
            handle_file(DATA_DIR / "pg11-alice.epub"), api_name="/book_upload"
        )
        _, job_id, *_ = client.predict(
            chapters["value"], MODEL, "speaker:Vivian", "", "", 120, api_name="/generate"
        )
        wait_for(
            lambda: (store.get(job_id).progress.get("chunks_done") or 0) >= 8,
            timeout_s=120,
            what="the job to render some chunks",
        )
    finally:
        app.stop(sig=signal.SIGKILL)  # a crash: no chance to tidy up
    interrupted = store.get(job_id)
    assert interrupted.state is JobState.RUNNING
    done_before = interrupted.progress["chunks_done"]
    assert done_before < interrupted.progress["chunks_total"]

    again = start_webapp(root, port=port, env=env, log_path=tmp_path / "second.log")
    try:
        assert f"Resuming interrupted jobs: {job_id}" in again.output()
        overview = Client(again.url, auth=("reader", "pw-123"), verbose=False).predict(api_name="/jobs_load")[
            0
        ]
        assert job_id in overview  # the same job after the restart
        job = wait_for(
            lambda: (j := store.get(job_id)).state.finished and j,
            timeout_s=240,
            what="the resumed job to finish",
        )
        assert job.state is JobState.DONE, job.error
        assert job.result["chunks_cached"] >= done_before  # rendered chunks were not rendered again
        assert Path(job.result["m4b"]).is_file()
    finally:
        again.stop()
