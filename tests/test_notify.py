"""Notifications: a local webhook server receives done and failed; Apprise (its json:// sender) too;
a failing target is retried and never fails a job; the test button reports each target."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import yaml

from omni_web.errors import BookError
from omni_web.jobs import JobState, JobWorker
from omni_web.library import Notifier
from omni_web.services import AppServices, notify_targets
from tests.fakes.sgl_omni import free_port


class Receiver:
    """A loopback HTTP server that records JSON POSTs by path; /flaky answers 500 twice first."""

    def __init__(self) -> None:
        self.bodies: dict[str, list[dict]] = {}
        self.attempts: dict[str, int] = {}
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.attempts[self.path] = receiver.attempts.get(self.path, 0) + 1
                if self.path == "/flaky" and receiver.attempts[self.path] <= 2:
                    self.send_response(500)
                    self.end_headers()
                    return
                receiver.bodies.setdefault(self.path, []).append(json.loads(body))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.server.shutdown()
    r.server.server_close()


def _wait(predicate, timeout_s=60.0, what="condition"):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"{what} not reached in {timeout_s} s")


def test_webhooks_and_apprise_on_done_and_failed_and_a_failing_target_never_fails_a_job(data_paths, receiver):
    closed = f"http://127.0.0.1:{free_port()}/nobody"
    data_paths.settings_file.write_text(yaml.safe_dump({
        "webhook_urls": f"{receiver.url}/hook, {receiver.url}/flaky {closed}",
        "apprise_urls": f"json://127.0.0.1:{receiver.server.server_address[1]}/apprise"}), encoding="utf-8")
    services = AppServices.create(data_paths)
    output = services.settings.output_path(data_paths) / "Author" / "Book"
    output.mkdir(parents=True)
    (output / "Book.m4b").write_bytes(b"m4b")

    def runner(job, ctx):
        if job.title == "bad":
            raise BookError("This EPUB is not a zip file.")
        return {"m4b": str(output / "Book.m4b")}

    notifier = Notifier(
        lambda: notify_targets(services.settings),
        lambda: services.settings.output_path(data_paths),
        backoff_s=(0.1, 0.1, 0.1),
    )
    worker = JobWorker(
        services.library.jobs, {"convert": runner}, idle_poll_s=0.05, on_finished=notifier.job_finished
    )
    good = services.library.jobs.enqueue("convert", {}, title="good")
    bad = services.library.jobs.enqueue("convert", {}, title="bad")
    worker.start()
    try:
        _wait(lambda: len(receiver.bodies.get("/hook", [])) == 2, what="both webhooks")
        _wait(lambda: len(receiver.bodies.get("/flaky", [])) == 2, what="the flaky target's retries")
        _wait(lambda: len(receiver.bodies.get("/apprise", [])) == 2, what="both Apprise messages")
    finally:
        worker.stop()
    assert (
        services.library.jobs.get(good.id).state is JobState.DONE
        and services.library.jobs.get(bad.id).state is JobState.FAILED
    )
    by_state = {body["state"]: body for body in receiver.bodies["/hook"]}
    assert by_state["done"]["job_id"] == good.id and by_state["done"]["event"] == "done"
    (book,) = by_state["done"]["files"]
    assert book["kind"] == "book" and book["url"].endswith(
        f"/api/v1/jobs/{good.id}/files/Author/Book/Book.m4b"
    )
    assert by_state["failed"]["title"] == "bad" and "zip" in by_state["failed"]["error"]
    assert receiver.attempts["/flaky"] == 4  # 2 refused, then one delivery per job
    apprise_titles = sorted(body["title"] for body in receiver.bodies["/apprise"])
    assert apprise_titles == ["omni-web: bad failed", "omni-web: good done"]
    results = {d.target: d for d in notifier.test()}
    assert results[f"{receiver.url}/hook"].ok and not results[closed].ok
    assert receiver.bodies["/hook"][-1]["event"] == "test"
