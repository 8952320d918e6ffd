"""The page's live view without Gradio timers: one small poll, and Gradio events only for real changes.

Every Gradio event costs the page far more than its payload: the frontend (Gradio 6) walks its whole
layout for each component it ever updated, three times per event, whatever the event sends. Timers
ticking every two or three seconds kept the browser's main thread busy all the time (measured: 99 %
with a long book rendering). So the page polls ``/live/poll`` instead (a plain ``fetch`` of a few
kilobytes, every two seconds, nothing while the browser tab is hidden) and:

- writes the Jobs tab's display parts (the jobs table, the selected job's summary, downloads,
  chapters, levels) into the page itself when their HTML changed, with no Gradio event;
- sets the browser tab's title (the running job's percentage);
- clicks a hidden trigger button, so Gradio runs the tab's own handlers, only when something
  structural changed: the list of jobs or their states (Jobs tab, notifications), the server
  behind Generate's menus; slower-moving panels (read-along, delivery) at most every 20 s.

The parts are the same HTML the Jobs tab's own render sends (:func:`job_parts`), each wrapped in
``<div class="ow-live" data-part=…>`` so the poll can find and replace it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse
from starlette.routing import Mount

from omni_web.jobs import Job, JobState
from omni_web.ui.delivery import delivery_mark
from omni_web.ui.downloads import downloads_html, logged_in
from omni_web.ui.jobview import chapters_html, job_detail_html, job_levels_html, jobs_table_html
from omni_web.ui.readalong import readalong_chapters
from omni_web.ui.widgets import esc

__all__ = [
    "LIVE_PREFIX",
    "POLL_JS",
    "QUIET_TRACKERS_JS",
    "digest",
    "job_parts",
    "jobs_mark",
    "live_html",
    "mount_live",
    "poll_answer",
]

LIVE_PREFIX = "/live"
# Hidden buttons the poll clicks (their handlers are the tabs' own).
JOBS_TRIGGER, NOTIFY_TRIGGER, MENUS_TRIGGER = "jobs-tick", "ow-notify-tick", "gen-menus-tick"


def digest(value: Any) -> str:
    """A change marker for ``value`` (its repr)."""
    return hashlib.sha1(repr(value).encode()).hexdigest()[:16]  # noqa: S324 - a change marker


def jobs_mark(jobs: list[Job], queue_paused: bool) -> str:
    """The marker of the list of jobs and their states: a change makes the page run the Jobs tab's
    own render."""
    return digest(([(j.id, j.state.value) for j in jobs], queue_paused))


def live_html(part: str, html: str, *, job: str = "", jobs: str = "") -> str:
    """``html`` in the wrapper the poll replaces (``part`` is the component's elem_id; ``job`` the
    selected job's id, which the poll asks about; ``jobs`` the :func:`jobs_mark` it was drawn for)."""
    mark = f' data-job="{esc(job)}"' if job else ""
    mark += f' data-jobs="{esc(jobs)}"' if jobs else ""
    return f'<div class="ow-live" data-part="{esc(part)}"{mark}>{html}</div>'


def job_parts(jobs: list[Job], positions: dict[str, int], job: Job | None, *, output_root: Path,
              remote_url: str, queue_paused: bool) -> dict[str, str]:
    """The Jobs tab's display parts by elem_id, wrapped for the poll (no job: the table alone)."""
    parts = {"jobs-table": jobs_table_html(jobs, positions)}
    if job is not None:
        running = [j for j in jobs if j.state is JobState.RUNNING]
        parts |= {
            "jobs-detail": job_detail_html(
                job,
                positions.get(job.id, 0),
                remote_url=remote_url,
                running=running,
                queue_paused=job.state is JobState.QUEUED and queue_paused,
            ),
            "jobs-downloads": downloads_html(job, output_root=output_root),
            "jobs-chapters": chapters_html(job),
            "jobs-levels-box": job_levels_html(job),
        }
    marks = {"jobs-detail": {"job": job.id} if job is not None else {},
             "jobs-table": {"jobs": jobs_mark(jobs, queue_paused)}}
    return {part: live_html(part, html, **marks.get(part, {})) for part, html in parts.items()}


def poll_answer(
    services: Any,
    settings: Any,
    paths: Any,
    selected: str | None,
    server_identity: Callable[[], Any],
    title: Callable[[list[Job]], str],
) -> dict[str, Any]:
    """What one poll returns: the title, the structural markers and the selected job's parts."""
    library = services.library
    jobs = library.jobs.list()
    positions = library.jobs.queue_positions()
    job = next((j for j in jobs if j.id == selected), None)
    parts = job_parts(
        jobs,
        positions,
        job,
        output_root=settings.output_path(paths),
        remote_url=settings.remote_url,
        queue_paused=library.queue.paused,
    )
    soft = (len(readalong_chapters(job)), delivery_mark(paths, job.id)) if job is not None else None
    return {
        "title": title(jobs[:50]),
        "jobs": jobs_mark(jobs, library.queue.paused),
        "soft": digest(soft),
        "server": digest(server_identity()),
        "parts": parts,
    }


def mount_live(gradio_app: Any, answer: Callable[[str | None], dict[str, Any]]) -> None:
    """Put ``/live/poll?job=<id>`` in front of Gradio's routes, behind the UI's login."""
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)

    @app.get("/poll")
    def poll(request: Request, job: str | None = None) -> JSONResponse:
        if not logged_in(gradio_app, request):
            raise HTTPException(401, "Log in to omni-web first.")
        return JSONResponse(answer(job or None), headers={"Cache-Control": "no-store"})

    gradio_app.router.routes.insert(0, Mount(LIVE_PREFIX, app=app))


# Runs in the page's <head>, before Gradio's modules (omni_web/ui/login_page.py puts it there): Gradio
# 6's status tracker (statustracker-*.js) keeps the requestAnimationFrame it found at load and runs a
# frame loop for its elapsed-time counter while it thinks an event is pending, and on every page one
# tracker never leaves that state: 60 frames a second for nothing, measured as most of the idle Jobs
# page's main-thread time. Its frames are asked for once a second instead (the counter shows tenths
# of a second, but only on the rare event that shows its progress); every other caller is untouched.
QUIET_TRACKERS_JS = """
(() => {
  const frame = window.requestAnimationFrame.bind(window);
  window.requestAnimationFrame = (callback) => {
    if ((new Error().stack || '').includes('/statustracker-')) {
      return setTimeout(() => frame(callback), 1000);
    }
    return frame(callback);
  };
})();
"""

# Runs once, on the page (js_on_load of the app's header). A poll in flight is never doubled; a
# failed one (the app restarting) just waits for the next.
POLL_JS = (
    """
if (!window.__owLive) {
  window.__owLive = true;
  const seen = {}; const marks = {}; let busy = false; let softAt = 0;
  const base = (window.gradio_config && window.gradio_config.root) || '';
  const click = (id) => { const b = document.querySelector('#' + id); if (b) { b.click(); } };
  const hash = (s) => { let h = 0; for (let i = 0; i < s.length; i++) { h = (h * 31 + s.charCodeAt(i)) | 0; } return h; };
  const selected = () => { const el = document.querySelector('#jobs-detail .ow-live[data-job]');
    return el ? el.getAttribute('data-job') : ''; };
  // The jobs the table on the page was drawn for: the page's first render can predate the first
  // answer (a job queued in between), and a trigger click can be dropped while one is pending.
  const drawn = () => { const el = document.querySelector('#jobs-table .ow-live[data-jobs]');
    return el ? el.getAttribute('data-jobs') : ''; };
  let asked = ''; let askedAt = 0;
  // The first answer only records what the page's own render drew; later ones replace what changed.
  const patch = (part, html) => {
    const box = document.querySelector('#' + part + ' .ow-live[data-part="' + part + '"]');
    const h = hash(html);
    if (!box || marks[part] === undefined || marks[part] === h) { marks[part] = h; return; }
    box.outerHTML = html; marks[part] = h;
  };
  const poll = async () => {
    if (busy || document.hidden) { return; }
    busy = true;
    try {
      const job = selected();
      const r = await fetch(base + '/live/poll' + (job ? '?job=' + encodeURIComponent(job) : ''),
                            {credentials: 'same-origin', cache: 'no-store'});
      if (!r.ok) { return; }
      const a = await r.json();
      if (a.title) { document.title = a.title; }
      const now = Date.now();
      const stale = drawn() !== '' && drawn() !== a.jobs && (asked !== a.jobs || now - askedAt > 10000);
      const jobsChanged = (seen.jobs !== undefined && seen.jobs !== a.jobs) || stale;
      const softChanged = seen.soft !== undefined && seen.soft !== a.soft;
      if (jobsChanged) {
        click('JOBS'); asked = a.jobs; askedAt = now;
        if (seen.jobs !== undefined && seen.jobs !== a.jobs) { click('NOTIFY'); }
        softAt = now; seen.soft = a.soft;
      }
      else if (softChanged && now - softAt > 20000) { click('JOBS'); softAt = now; seen.soft = a.soft; }
      else if (job) { for (const [part, html] of Object.entries(a.parts)) { patch(part, html); } }
      if (seen.server !== undefined && seen.server !== a.server) { click('MENUS'); }
      if (seen.soft === undefined) { seen.soft = a.soft; }
      seen.jobs = a.jobs; seen.server = a.server;
    } catch (e) { /* the next poll tries again */ } finally { busy = false; }
  };
  setInterval(poll, 2000);
}
""".replace("JOBS", JOBS_TRIGGER)
    .replace("NOTIFY", NOTIFY_TRIGGER)
    .replace("MENUS", MENUS_TRIGGER)
)
