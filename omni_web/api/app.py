"""``/api/v1``: the automation API, FastAPI routes over the same services as the web UI.

Every route, the OpenAPI document included, needs ``Authorization: Bearer <token>`` with a token
made in Settings (:mod:`omni_web.api.tokens`); the UI's login does not open it, and a token does
not open the UI. Files are served only when a job reports them and they sit in its output folder.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import Depends, FastAPI, File, Form, Header, HTTPException, Request, Response, UploadFile
from fastapi.responses import FileResponse, JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.concurrency import run_in_threadpool
from starlette.routing import Mount

from omni_web.api.models import FileOut, JobOut, MoveIn, PresetOut, PriorityIn, QueueOut, SamplesIn, job_out
from omni_web.api.tokens import TokenStore
from omni_web.errors import BookError, JobExists, JobNotFound, OmniWebError
from omni_web.jobs import Job
from omni_web.library import BookSource, JobFile, Library, Link, Preset, Upload, job_files
from omni_web.paths import DataPaths

__all__ = ["API_PREFIX", "build_api", "mount_api", "token_store"]

API_PREFIX = "/api/v1"
_MAX_UPLOAD_BYTES = 200 * 1024 * 1024
_bearer = HTTPBearer(auto_error=False, description="An API token made in Settings → API tokens")


def token_store(paths: DataPaths) -> TokenStore:
    """The data root's API tokens."""
    return TokenStore(paths.api_tokens_file)


def _refuse(status: int, message: str, **extra: Any) -> HTTPException:
    return HTTPException(status_code=status, detail={"message": message, **extra})


def build_api(library: Library) -> FastAPI:
    """The API app over ``library`` (the one the web UI queues into)."""
    tokens = token_store(library.paths)

    def require_token(credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]) -> None:
        if credentials is None:
            raise HTTPException(
                status_code=401,
                detail={
                    "message": "An API token is required: send "
                    "'Authorization: Bearer <token>' with a token made in Settings → API tokens."
                },
                headers={"WWW-Authenticate": "Bearer"},
            )
        if tokens.verify(credentials.credentials) is None:
            raise HTTPException(
                status_code=401,
                detail={
                    "message": "This API token is not valid: it was revoked, "
                    "mistyped or made on another omni-web. Make a new one in Settings → API tokens."
                },
                headers={"WWW-Authenticate": 'Bearer error="invalid_token"'},
            )

    api = FastAPI(
        title="omni-web API",
        version="1",
        openapi_url=None,
        docs_url=None,
        redoc_url=None,
        dependencies=[Depends(require_token)],
        servers=[{"url": API_PREFIX}],
        description="Queue books, follow their progress, download the audiobooks.",
    )

    @api.exception_handler(OmniWebError)
    async def _omni_error(_request: Request, exc: OmniWebError) -> JSONResponse:
        status = 404 if isinstance(exc, JobNotFound) else 422 if isinstance(exc, BookError) else 400
        body: dict[str, Any] = {"message": str(exc)}
        if isinstance(exc, JobExists):
            status, body["job_id"] = 409, exc.job_id
        return JSONResponse({"detail": body}, status_code=status)

    @api.get("/openapi.json", include_in_schema=False)
    def openapi() -> dict[str, Any]:
        return api.openapi()

    def out(job: Job) -> JobOut:
        return job_out(job, position=library.jobs.queue_positions().get(job.id, 0), base=API_PREFIX)

    _job_routes(api, library, out)
    _file_routes(api, library)
    _steer_routes(api, library, out)
    return api


def _job_routes(api: FastAPI, library: Library, out: Callable[[Job], JobOut]) -> None:
    """List, create and read jobs."""

    @api.get("/jobs", response_model=list[JobOut], summary="List jobs, newest first")
    def list_jobs(limit: int = 200) -> list[JobOut]:
        places = library.jobs.queue_positions()
        return [
            job_out(job, position=places.get(job.id, 0), base=API_PREFIX)
            for job in library.jobs.list(limit=limit)
        ]

    @api.post(
        "/jobs",
        response_model=JobOut,
        status_code=201,
        summary="Queue a book (an upload or a link)",
        responses={200: {"description": "A retried POST: the job its Idempotency-Key made"}},
    )
    async def create_job(
        response: Response,
        file: Annotated[
            UploadFile | None, File(description="the book (EPUB or another format the app reads)")
        ] = None,
        url: Annotated[
            str | None, Form(description="or: a link to the book, e.g. an OPDS acquisition link")
        ] = None,
        url_username: Annotated[str | None, Form()] = None,
        url_password: Annotated[str | None, Form()] = None,
        preset: Annotated[str | None, Form(description="a saved preset's name")] = None,
        settings: Annotated[
            str | None,
            Form(
                description="or explicit settings: preset JSON, e.g. "
                '{"model_key": "...", "voice": {"kind": "speaker", "name": "Vivian"}}'
            ),
        ] = None,
        priority: Annotated[int, Form()] = 0,
        idempotency_key: Annotated[str | None, Header(alias="Idempotency-Key")] = None,
    ) -> JobOut:
        if (file is None) == (not url):
            raise _refuse(400, "Send the book as 'file' (multipart upload) or as 'url', one of them.")
        source: BookSource
        if file is not None:
            data = await file.read(_MAX_UPLOAD_BYTES + 1)
            if len(data) > _MAX_UPLOAD_BYTES:
                raise _refuse(413, "The book is over 200 MB; the app refuses it.")
            source = Upload(data, file.filename or "book.epub")
        else:
            source = Link(url or "", username=url_username, password=url_password)
        chosen = settings_preset(settings) if settings else (preset or None)
        # Keeping, fetching and parsing the book take seconds to minutes: never on the event loop,
        # which also serves the web page and every other call.
        submitted = await run_in_threadpool(
            lambda: library.intake(source, preset=chosen, priority=priority, idempotency_key=idempotency_key)
        )
        if not submitted.created:
            response.status_code = 200
        return out(submitted.job)

    @api.get("/jobs/{job_id}", response_model=JobOut, summary="One job with its progress")
    def get_job(job_id: str) -> JobOut:
        return out(library.jobs.get(job_id))


def _file_routes(api: FastAPI, library: Library) -> None:
    """A job's files: listed, and downloaded only when the job reports them under its output folder."""

    def files_of(job: Job) -> list[JobFile]:
        return job_files(job, library.settings.output_path(library.paths))

    @api.get("/jobs/{job_id}/files", response_model=list[FileOut], summary="The files a job wrote")
    def list_files(job_id: str) -> list[FileOut]:
        job = library.jobs.get(job_id)
        return [
            FileOut(
                name=f.path.name,
                path=f.rel,
                size=f.path.stat().st_size,
                kind=f.kind,
                url=f"{API_PREFIX}/jobs/{job_id}/files/{quote(f.rel)}",
            )
            for f in files_of(job)
        ]

    @api.get("/jobs/{job_id}/book", summary="Download the finished m4b", response_class=FileResponse)
    def download_book(job_id: str) -> FileResponse:
        job = library.jobs.get(job_id)
        for f in files_of(job):
            if f.kind == "book":
                return FileResponse(f.path, filename=f.path.name, media_type="audio/mp4")
        raise _refuse(
            404,
            f"'{job.title}' has no m4b ({job.state.value}); its files are at "
            f"{API_PREFIX}/jobs/{job_id}/files.",
        )

    @api.get(
        "/jobs/{job_id}/files/{rel:path}",
        summary="Download one of a job's files",
        response_class=FileResponse,
    )
    def download(job_id: str, rel: str) -> FileResponse:
        for f in files_of(library.jobs.get(job_id)):
            if f.rel == rel:
                return FileResponse(f.path, filename=f.path.name)
        raise _refuse(
            404, f"Job '{job_id}' has no file '{rel}'; list them at {API_PREFIX}/jobs/{job_id}/files."
        )


def _steer_routes(api: FastAPI, library: Library, out: Callable[[Job], JobOut]) -> None:
    """Cancel, pause, resume, reorder; the queue's own switches; presets."""

    @api.post(
        "/jobs/{job_id}/cancel",
        response_model=JobOut,
        summary="Cancel (a running job stops at its next chunk)",
    )
    def cancel(job_id: str) -> JobOut:
        return out(library.jobs.request_cancel(job_id))

    @api.post("/jobs/{job_id}/pause", response_model=JobOut, summary="Hold a queued job in its place")
    def pause(job_id: str) -> JobOut:
        return out(library.queue.pause_job(job_id))

    @api.post(
        "/jobs/{job_id}/resume",
        response_model=JobOut,
        summary="Release a paused job; requeue a failed or cancelled one",
    )
    def resume(job_id: str) -> JobOut:
        job = library.queue.resume_job(job_id)
        return out(job)

    @api.post("/jobs/{job_id}/move", response_model=JobOut, summary="Reorder: top, up, down or bottom")
    def move(job_id: str, body: MoveIn) -> JobOut:
        return out(library.queue.move(job_id, body.where))

    @api.post("/jobs/{job_id}/priority", response_model=JobOut, summary="Set a queued job's priority")
    def set_priority(job_id: str, body: PriorityIn) -> JobOut:
        return out(library.queue.set_priority(job_id, body.priority))

    def queue_out() -> QueueOut:
        status = library.queue.status()
        return QueueOut(
            paused=status.paused,
            samples_first=status.samples_first,
            sample_minutes=library.queue.sample_minutes,
            queued=[job_out(j, position=i, base=API_PREFIX) for i, j in enumerate(status.queued, start=1)],
        )

    @api.get("/queue", response_model=QueueOut, summary="The queue in run order")
    def get_queue() -> QueueOut:
        return queue_out()

    @api.post("/queue/pause", response_model=QueueOut, summary="Start no new job (a running one finishes)")
    def pause_queue() -> QueueOut:
        library.queue.pause()
        return queue_out()

    @api.post("/queue/resume", response_model=QueueOut, summary="Run the queue again")
    def resume_queue() -> QueueOut:
        library.queue.resume()
        return queue_out()

    @api.post(
        "/queue/samples", response_model=QueueOut, summary="Samples first on or off, and the samples' length"
    )
    def samples(body: SamplesIn) -> QueueOut:
        library.queue.set_samples_first(body.on)
        if body.minutes is not None:
            library.queue.set_sample_minutes(body.minutes)
        return queue_out()

    @api.get("/presets", response_model=list[PresetOut], summary="Saved presets")
    def presets() -> list[PresetOut]:
        return [PresetOut(name=p.name, settings=p.to_dict()) for p in library.presets.presets()]


def settings_preset(text: str) -> Preset:
    """Explicit settings sent as JSON: an unnamed preset."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise _refuse(400, f"'settings' is not JSON ({exc}).") from exc
    if not isinstance(data, dict):
        raise _refuse(400, "'settings' must be a JSON object of preset fields.")
    return Preset.from_dict({"name": "(explicit settings)", **data})


def mount_api(app: FastAPI, library: Library) -> None:
    """Put ``/api/v1`` in front of Gradio's routes on its running FastAPI app."""
    app.router.routes.insert(0, Mount(API_PREFIX, app=build_api(library)))
