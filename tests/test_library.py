"""The library's submits do each piece of work once: a UI submit, an API job create and an inbox
drop each read the book once and scan the job table once, however many jobs are queued."""

from __future__ import annotations

import json
import shutil
from collections import Counter

import pytest
import yaml
from fastapi.testclient import TestClient

from omni_web.api import build_api, token_store
from omni_web.book import cache as book_cache
from omni_web.client import VoiceChoice
from omni_web.jobs import JobStore
from omni_web.library import Preset
from omni_web.pipeline.request import ConvertRequest
from omni_web.services import AppServices
from tests.conftest import DATA_DIR

MODEL = "qwen3_tts_0_6b_customvoice"
BOOKS = ("hefty-water.epub", "wasteland.epub", "childrens-literature.epub")


@pytest.fixture
def counted(data_paths, monkeypatch):
    """The services (worker not started), a few jobs already queued, and a counter of book reads
    (the reader under the shared book cache) and job-table scans (JobStore.list)."""
    data_paths.settings_file.write_text(yaml.safe_dump({"inbox_preset": "Inbox"}), encoding="utf-8")
    services = AppServices.create(data_paths)
    services.library.presets.save(
        Preset(name="Inbox", model_key=MODEL, voice={"kind": "speaker", "name": "Aiden"})
    )
    for name in BOOKS[1:]:
        services.library.submit_book(DATA_DIR / name, preset="Inbox")
    counts: Counter[str] = Counter()
    real_load, real_list = book_cache.load_book, JobStore.list

    def load_book(*args, **kwargs):
        counts["parse"] += 1
        return real_load(*args, **kwargs)

    def list_jobs(self, *args, **kwargs):
        counts["scan"] += 1
        return real_list(self, *args, **kwargs)

    monkeypatch.setattr(book_cache, "load_book", load_book)
    monkeypatch.setattr(JobStore, "list", list_jobs)
    return services, counts


def _request(services: AppServices, **changes) -> ConvertRequest:
    return ConvertRequest(
        book_path=DATA_DIR / BOOKS[0],
        model_key=MODEL,
        voice=VoiceChoice.speaker("Vivian"),
        chapters=(1,),
        **changes,
    )


def test_a_ui_submit_reads_the_book_once_and_scans_the_jobs_once(counted) -> None:
    services, counts = counted
    library = services.library
    prepared = library.prepare(_request(services))  # Generate: the twin question and the name together
    job = library.enqueue(prepared)
    assert counts == {"parse": 1, "scan": 1}
    assert job.params["output_name"] == prepared.request.output_name
    # The book the UI has open is not read again by the next submit; a twin is refused with its id.
    counts.clear()
    again = library.prepare(_request(services))
    assert again.twin is not None and again.twin.id == job.id
    assert counts == {"scan": 1}


def test_an_api_job_create_reads_the_book_once_and_scans_the_jobs_once(counted) -> None:
    services, counts = counted
    _, secret = token_store(services.paths).create("tests")
    settings = json.dumps({"model_key": MODEL, "voice": {"kind": "speaker", "name": "Vivian"}})
    with TestClient(build_api(services.library)) as client, (DATA_DIR / BOOKS[0]).open("rb") as handle:
        created = client.post(
            "/jobs",
            headers={"Authorization": f"Bearer {secret}", "Idempotency-Key": "one"},
            files={"file": (BOOKS[0], handle)},
            data={"settings": settings},
        )
    assert created.status_code == 201, created.text
    assert counts == {"parse": 1, "scan": 1}


def test_an_inbox_drop_reads_the_book_once_and_scans_the_jobs_once(counted, tmp_path) -> None:
    services, counts = counted
    dropped = shutil.copy(DATA_DIR / BOOKS[0], tmp_path / BOOKS[0])
    job_id = services.library.take_from_inbox(dropped)
    assert counts == {"parse": 1, "scan": 1}
    assert services.library.jobs.get(job_id).params["voice"]["name"] == "Aiden"
