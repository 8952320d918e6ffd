"""Telling the user's targets when a job is done, failed or needs review: webhooks and Apprise.

A webhook gets a JSON POST (event, job id, title, state, error, file links); an Apprise URL (ntfy,
Gotify, Discord, e-mail, ... see the Apprise documentation) gets a title and a short body with the
same links. Delivery runs in its own thread: a slow or failing target never holds the worker nor
fails the job; each failure is logged and retried with back-off, then given up with a log line.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

from omni_web.jobs import Job, JobState
from omni_web.library.files import job_files
from omni_web.pipeline import ConvertProgress

__all__ = ["Delivery", "Notifier", "Targets", "event_for", "job_payload", "split_urls"]

log = logging.getLogger(__name__)

EVENTS = ("done", "failed", "needs_review")
_BACKOFF_S = (2.0, 10.0, 30.0, 120.0)


def split_urls(text: str) -> list[str]:
    """URLs from a setting: separated by spaces, commas or new lines."""
    return [part for part in text.replace(",", " ").split() if part]


@dataclass(frozen=True, slots=True)
class Targets:
    """Where notifications go, and the app's address for file links."""

    webhooks: Sequence[str] = ()
    apprise: Sequence[str] = ()
    base_url: str = ""


@dataclass(frozen=True, slots=True)
class Delivery:
    """The outcome of one send to one target (what the test button shows)."""

    target: str
    ok: bool
    detail: str = ""


def event_for(job: Job) -> str | None:
    """done, failed or needs_review (done with chunks QA flagged); None for a cancelled job."""
    if job.state is JobState.FAILED:
        return "failed"
    if job.state is JobState.DONE:
        qa = ConvertProgress.from_dict(job.progress).qa
        return "needs_review" if qa and qa.flagged else "done"
    return None


def job_payload(job: Job, event: str, *, base_url: str, output_root) -> dict[str, Any]:
    """The webhook's JSON body; file links are the API's download URLs (they need a token)."""
    files = [
        {"name": f.path.name, "kind": f.kind, "url": f"{base_url}/api/v1/jobs/{job.id}/files/{quote(f.rel)}"}
        for f in job_files(job, output_root)
    ]
    return {
        "event": event,
        "job_id": job.id,
        "title": job.title,
        "state": job.state.value,
        "error": job.error,
        "finished_at": job.finished_at,
        "job_url": f"{base_url}/api/v1/jobs/{job.id}",
        "files": files,
    }


def _apprise_send(url: str, title: str, body: str) -> None:
    import apprise  # imported on use: the app starts without it, and only Apprise targets need it

    sender = apprise.Apprise()
    if not sender.add(url):
        raise ValueError(f"Apprise does not understand the URL '{url}'")
    if not sender.notify(title=title, body=body):
        raise OSError(f"Apprise could not deliver to '{url}' (see the log above)")


class Notifier:
    """Sends job events to the current targets in a background thread, with retries."""

    def __init__(
        self,
        targets: Callable[[], Targets],
        output_root: Callable[[], Any],
        *,
        backoff_s: Sequence[float] = _BACKOFF_S,
        timeout_s: float = 15.0,
        apprise_send: Callable[[str, str, str], None] = _apprise_send,
    ) -> None:
        self._targets = targets
        self._output_root = output_root
        self._backoff = tuple(backoff_s)
        self._timeout_s = timeout_s
        self._apprise_send = apprise_send
        self._pending: queue.Queue[tuple[float, str, str, Mapping[str, Any], int]] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="omni-web-notify", daemon=True)
        self._thread.start()

    def job_finished(self, job: Job) -> None:
        """Queue the job's event for every target (returns at once; never raises)."""
        try:
            event = event_for(job)
            if event is None:
                return
            targets = self._targets()
            payload = job_payload(job, event, base_url=targets.base_url, output_root=self._output_root())
            for kind, urls in (("webhook", targets.webhooks), ("apprise", targets.apprise)):
                for url in urls:
                    self._pending.put((time.monotonic(), kind, url, payload, 0))
        except Exception:  # a notification must never fail a job or the worker
            log.exception("Could not prepare the notification for job %s", job.id)

    def test(self) -> list[Delivery]:
        """Send a test event to every target now (one attempt each) and report each outcome."""
        targets = self._targets()
        payload = {
            "event": "test",
            "job_id": "",
            "title": "omni-web test notification",
            "state": "test",
            "error": "",
            "files": [],
            "job_url": f"{targets.base_url}/api/v1/jobs",
        }
        results = []
        for kind, urls in (("webhook", targets.webhooks), ("apprise", targets.apprise)):
            for url in urls:
                try:
                    self._send(kind, url, payload)
                    results.append(Delivery(url, True, "delivered"))
                except Exception as exc:  # reported to the user, not raised; the traceback to the log
                    log.warning("The test notification to %s failed", url, exc_info=True)
                    results.append(Delivery(url, False, str(exc) or type(exc).__name__))
        return results

    def wait_idle(self, timeout_s: float = 30.0) -> bool:
        """For tests and shutdown: True once nothing is waiting to be sent."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._pending.unfinished_tasks == 0:
                return True
            time.sleep(0.05)
        return False

    def _send(self, kind: str, url: str, payload: Mapping[str, Any]) -> None:
        if kind == "webhook":
            response = httpx.post(url, json=dict(payload), timeout=self._timeout_s)
            response.raise_for_status()
            return
        files = "\n".join(f"{f['name']}: {f['url']}" for f in payload.get("files", []) if f["kind"] == "book")
        body = f"{payload['title']}: {payload['state']}" + (
            f"\n{payload['error']}" if payload.get("error") else ""
        )
        self._apprise_send(
            url,
            f"omni-web: {payload['title']} {payload['event'].replace('_', ' ')}",
            body + (f"\n{files}" if files else ""),
        )

    def _run(self) -> None:
        while True:
            due, kind, url, payload, attempt = self._pending.get()
            try:
                wait = due - time.monotonic()
                if wait > 0:  # not due yet: back in the queue (the others may be due)
                    time.sleep(min(wait, 0.2))
                    self._pending.put((due, kind, url, payload, attempt))
                    continue
                self._send(kind, url, payload)
                log.info("Notified %s of job %s (%s)", url, payload.get("job_id"), payload.get("event"))
            except Exception as exc:
                if attempt < len(self._backoff):
                    log.warning(
                        "Notifying %s failed (%s); retrying in %.0f s", url, exc, self._backoff[attempt]
                    )
                    self._pending.put(
                        (time.monotonic() + self._backoff[attempt], kind, url, payload, attempt + 1)
                    )
                else:
                    log.error(
                        "Notifying %s failed %d times; giving up (%s)", url, attempt + 1, exc, exc_info=True
                    )
            finally:
                self._pending.task_done()
