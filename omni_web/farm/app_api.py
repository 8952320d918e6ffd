"""``/farm/v1``: the app's routes the agents call (join, leave), guarded by a farm token.

A join is answered at once with the box's id; the box is then placed (told what to serve, its
workers added to the router) on a thread of its own, since a model's boot takes minutes.
"""

from __future__ import annotations

import threading
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel
from starlette.routing import Mount

from omni_web.errors import FarmRefused
from omni_web.farm.registry import FarmRegistry
from omni_web.farm.tokens import farm_token_store

__all__ = ["FARM_PREFIX", "JoinIn", "LeaveIn", "build_farm_api", "mount_farm"]

FARM_PREFIX = "/farm/v1"
_bearer = HTTPBearer(auto_error=False)


class JoinIn(BaseModel):
    """What an agent sends when it joins."""

    name: str
    agent_url: str
    secret: str
    gpus: list[dict[str, Any]] = []


class LeaveIn(BaseModel):
    """What an agent sends when it leaves."""

    box_id: str


def _token(credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]) -> str | None:
    """The bearer token sent, or None."""
    return credentials.credentials if credentials is not None else None


FarmToken = Annotated["str | None", Depends(_token)]


def build_farm_api(registry: FarmRegistry) -> FastAPI:
    """The routes over ``registry``."""
    api = FastAPI(title="omni-web farm", openapi_url=None, docs_url=None, redoc_url=None)

    @api.post("/join")
    def join(body: JoinIn, secret: FarmToken) -> dict[str, str]:
        try:
            box = registry.join(secret, name=body.name, agent_url=body.agent_url, secret=body.secret,
                                gpus=tuple(body.gpus))
        except FarmRefused as exc:
            raise HTTPException(status_code=401, detail={"message": str(exc)}) from exc
        placing = threading.Thread(target=registry.place, args=(box.id,), name=f"farm-place-{box.id}",
                                   daemon=True)
        placing.start()
        return {"box_id": box.id}

    @api.get("/check")
    def check(secret: FarmToken) -> dict[str, bool]:
        # Asked before a bare box installs the backend: a mistyped token fails in a second, not
        # after a 10 GB download.
        if farm_token_store(registry.paths).verify(secret) is None:
            raise HTTPException(status_code=401, detail={"message": "Not a live farm token."})
        return {"ok": True}

    @api.post("/leave")
    def leave(body: LeaveIn, secret: FarmToken) -> dict[str, str]:
        try:
            registry.leave(secret, body.box_id)
        except FarmRefused as exc:
            raise HTTPException(status_code=401, detail={"message": str(exc)}) from exc
        return {"box_id": body.box_id}

    return api


def mount_farm(app: FastAPI, registry: FarmRegistry) -> None:
    """Put ``/farm/v1`` in front of Gradio's routes on its running FastAPI app."""
    app.router.routes.insert(0, Mount(FARM_PREFIX, app=build_farm_api(registry)))
