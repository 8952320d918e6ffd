"""/api/v1 in-process: every route refuses without a token, an Idempotency-Key makes one job,
queue steering through the API, files served only when the job reports them."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from omni_web.api import build_api, token_store
from omni_web.services import AppServices
from tests.conftest import DATA_DIR

MODEL = "qwen3_tts_0_6b_customvoice"
SETTINGS = json.dumps({"model_key": MODEL, "voice": {"kind": "speaker", "name": "Vivian"}})


@pytest.fixture
def api(data_paths):
    services = AppServices.create(data_paths)  # the worker is not started: jobs stay queued
    app = build_api(services.library)
    _, secret = token_store(data_paths).create("tests")
    with TestClient(app) as client:
        yield client, {"Authorization": f"Bearer {secret}"}, services


def _post(client, headers, book="hefty-water.epub", **extra):
    with (DATA_DIR / book).open("rb") as handle:
        return client.post("/jobs", headers=headers, files={"file": (book, handle, "application/epub+zip")},
                           data={"settings": SETTINGS, **extra})


def test_every_route_refuses_without_a_valid_token(api) -> None:
    client, headers, services = api
    routes = [(method, route.path) for route in client.app.routes for method in getattr(route, "methods", ())
              if method in ("GET", "POST")]
    assert ("GET", "/openapi.json") in routes and ("POST", "/jobs") in routes and len(routes) >= 14
    for method, path in routes:
        url = path.replace("{job_id}", "x").replace("{rel:path}", "a.m4b")
        for bad in ({}, {"Authorization": "Bearer ow_not-a-token"}, {"Authorization": "Basic b21uaTpwdw=="}):
            response = client.request(method, url, headers=bad)
            assert response.status_code == 401, (method, path, bad, response.text)
    token_id = token_store(services.paths).tokens()[0].id
    assert client.get("/jobs", headers=headers).status_code == 200
    token_store(services.paths).revoke(token_id)
    revoked = client.get("/jobs", headers=headers)
    assert revoked.status_code == 401  # revoked at once
    # A wrong token is told apart from none: each says what to do.
    assert "not valid" in revoked.json()["detail"]["message"]
    assert "is required" in client.get("/jobs").json()["detail"]["message"]
    stored = services.paths.api_tokens_file.read_text()
    assert headers["Authorization"].split()[1] not in stored  # hashed, never the secret


def test_openapi_document_describes_the_routes(api) -> None:
    client, headers, _ = api
    doc = client.get("/openapi.json", headers=headers).json()
    assert doc["servers"] == [{"url": "/api/v1"}]
    assert {"/jobs", "/jobs/{job_id}", "/jobs/{job_id}/files", "/jobs/{job_id}/move", "/queue"} <= set(
        doc["paths"]
    )
    assert "Idempotency-Key" in json.dumps(doc["paths"]["/jobs"]["post"])


def test_same_idempotency_key_creates_one_job(api) -> None:
    client, headers, services = api
    keyed = {**headers, "Idempotency-Key": "retry-1"}
    first, second = _post(client, keyed), _post(client, keyed)
    assert first.status_code == 201 and second.status_code == 200, (first.text, second.text)
    assert first.json()["id"] == second.json()["id"]
    assert len(services.library.jobs.list()) == 1
    job = services.library.jobs.get(first.json()["id"])
    assert job.params["model_key"] == MODEL and job.params["voice"]["name"] == "Vivian"
    again = _post(client, headers)  # no key: the same request again is a twin, refused with its id
    assert again.status_code == 409 and again.json()["detail"]["job_id"] == job.id


def test_queue_steering_through_the_api(api) -> None:
    client, headers, services = api
    ids = [
        _post(client, headers, book).json()["id"]
        for book in ("hefty-water.epub", "wasteland.epub", "childrens-literature.epub")
    ]
    moved = client.post(f"/jobs/{ids[2]}/move", headers=headers, json={"where": "top"}).json()
    assert moved["queue_position"] == 1
    assert [j["id"] for j in client.get("/queue", headers=headers).json()["queued"]] == [
        ids[2],
        ids[0],
        ids[1],
    ]
    assert client.post(f"/jobs/{ids[0]}/pause", headers=headers).json()["paused"] is True
    assert client.post("/queue/pause", headers=headers).json()["paused"] is True
    assert services.library.queue.paused
    samples = client.post("/queue/samples", headers=headers, json={"on": True, "minutes": 12}).json()
    assert (
        samples["samples_first"] and samples["sample_minutes"] == 12 and services.library.queue.samples_first
    )
    assert client.post(f"/jobs/{ids[1]}/cancel", headers=headers).json()["state"] == "cancelled"
    assert client.post(f"/jobs/{ids[1]}/move", headers=headers, json={"where": "up"}).status_code == 400
    assert client.post(f"/jobs/{ids[1]}/move", headers=headers, json={"where": "left"}).status_code == 422
    assert client.get("/jobs/nope", headers=headers).status_code == 404
    assert client.get(f"/jobs/{ids[0]}/files/../../state/api-tokens.json", headers=headers).status_code == 404
    corrupt = client.post(
        "/jobs",
        headers=headers,
        files={"file": ("bad.epub", b"not a zip", "application/epub+zip")},
        data={"settings": SETTINGS},
    )
    assert corrupt.status_code == 422 and "zip" in corrupt.json()["detail"]["message"].lower()
