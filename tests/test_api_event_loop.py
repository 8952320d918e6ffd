"""A book being submitted through /api/v1 never holds the event loop: while its parse runs (held
here until the test lets it go), the Gradio page and ``GET /api/v1/jobs`` of the same app answer."""

from __future__ import annotations

import json
import threading

import gradio as gr
import httpx
import pytest
import uvicorn
from fastapi import FastAPI

from omni_web.api import mount_api, token_store
from omni_web.book import cache as book_cache
from omni_web.services import AppServices
from tests.conftest import DATA_DIR
from tests.fakes.sgl_omni import free_port

pytestmark = pytest.mark.slow  # a real HTTP server in a thread

MODEL = "qwen3_tts_0_6b_customvoice"


@pytest.fixture
def served(data_paths):
    """The API in front of a Gradio page on one uvicorn server, as webapp.py mounts them."""
    services = AppServices.create(data_paths)  # the worker is not started: jobs stay queued
    with gr.Blocks() as demo:
        gr.Markdown("omni-web")
    app = gr.mount_gradio_app(FastAPI(), demo, path="/")
    mount_api(app, services.library)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, name="test-uvicorn", daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{port}"
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError("the test server did not start")
            thread.join(0.05)
        yield url, services
    finally:
        server.should_exit = True
        thread.join(30)


def test_the_page_and_the_job_list_answer_while_a_book_is_parsed(served, monkeypatch) -> None:
    url, services = served
    _, secret = token_store(services.paths).create("tests")
    auth = {"Authorization": f"Bearer {secret}"}
    parsing, release = threading.Event(), threading.Event()
    real_load = book_cache.load_book

    def slow_load(*args, **kwargs):  # a long PDF's parse, held until the test has looked
        parsing.set()
        release.wait(120)
        return real_load(*args, **kwargs)

    monkeypatch.setattr(book_cache, "load_book", slow_load)
    created: dict[str, httpx.Response] = {}

    def post() -> None:
        settings = json.dumps({"model_key": MODEL, "voice": {"kind": "speaker", "name": "Vivian"}})
        with (DATA_DIR / "hefty-water.epub").open("rb") as handle:
            created["response"] = httpx.post(
                f"{url}/api/v1/jobs",
                headers=auth,
                timeout=180,
                files={"file": ("hefty-water.epub", handle)},
                data={"settings": settings},
            )

    poster = threading.Thread(target=post, name="test-post")
    poster.start()
    try:
        assert parsing.wait(120), "the submit never reached the book's parse"
        # The parse is under way and held: a blocked event loop would leave both of these unanswered.
        jobs = httpx.get(f"{url}/api/v1/jobs", headers=auth, timeout=20)
        page = httpx.get(f"{url}/", timeout=20)
        assert jobs.status_code == 200 and jobs.json() == []
        assert page.status_code == 200 and "gradio" in page.text.lower()
    finally:
        release.set()
        poster.join(180)
    assert created["response"].status_code == 201, created["response"].text
    assert [job.id for job in services.library.jobs.list()] == [created["response"].json()["id"]]
