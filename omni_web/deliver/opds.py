"""``/opds``: the OPDS shelf as routes on the web app, behind the app's login.

OPDS readers (Thorium, KOReader, …) sign in with HTTP Basic; the shelf takes the web UI's own
credentials (omni_web/auth.py), compared in constant time, and refuses anything else with 401 and
a ``WWW-Authenticate`` challenge. With no login configured (loopback only, or ``--no-auth``) the
shelf is as open as the UI. Only the files of a shelf book are served, by name within its folder.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import FileResponse, Response
from fastapi.security import HTTPBasic, HTTPBasicCredentials
from starlette.routing import Mount

from omni_web.deliver.shelf import ATOM_TYPE, book_by_id, opds_feed, shelf_books

__all__ = ["OPDS_PREFIX", "build_opds", "mount_opds"]

OPDS_PREFIX = "/opds"


def build_opds(output_root: Callable[[], Path], credentials: tuple[str, str] | None) -> FastAPI:
    """The shelf's app; ``output_root`` is asked on every request (the setting may change)."""
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    basic = HTTPBasic(auto_error=False, realm="omni-web")

    # A default, not Annotated: these annotations are strings, and ``basic`` is local to this function.
    def login(given: HTTPBasicCredentials | None = Depends(basic)) -> None:  # noqa: B008
        if credentials is None:
            return
        ok = given is not None and secrets.compare_digest(given.username.encode(), credentials[0].encode()) \
            and secrets.compare_digest(given.password.encode(), credentials[1].encode())
        if not ok:
            raise HTTPException(401, "Sign in with the web UI's user name and password.",
                                headers={"WWW-Authenticate": 'Basic realm="omni-web"'})

    @app.get("/", dependencies=[Depends(login)])
    def feed(request: Request) -> Response:
        base = str(request.url.path).rstrip("/") or OPDS_PREFIX
        return Response(opds_feed(shelf_books(output_root()), base=base), media_type=ATOM_TYPE)

    @app.get("/books/{book_id}/{name}", dependencies=[Depends(login)])
    def book_file(book_id: str, name: str) -> FileResponse:
        book = book_by_id(output_root(), book_id)
        path = book.file(name) if book is not None else None
        if path is None:
            raise HTTPException(404, "No such book or file on the shelf.")
        return FileResponse(path, filename=path.name)

    return app


def mount_opds(app: FastAPI, output_root: Callable[[], Path], credentials: tuple[str, str] | None) -> None:
    """Put ``/opds`` in front of Gradio's routes on its running FastAPI app."""
    app.router.routes.insert(0, Mount(OPDS_PREFIX, app=build_opds(output_root, credentials)))
