"""The agent's HTTP API, called by the app only: status, serve a model, stop, read the log.

Every route needs ``Authorization: Bearer <secret>``, the secret the agent made at start and
handed to the app when it joined (the farm token itself never leaves the app's hash store).
"""

from __future__ import annotations

import hmac
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel

from omni_web.errors import OmniWebError
from omni_web.farm.box import BoxServers
from omni_web.server import log_tail

__all__ = ["ServeIn", "build_agent_api"]

_bearer = HTTPBearer(auto_error=False)


class ServeIn(BaseModel):
    """``POST /serve``: the catalog key of the model to serve on every GPU."""

    model: str
    timeout_s: float = 600.0


def build_agent_api(servers: BoxServers, *, secret: str, log_path: Path) -> FastAPI:
    """The agent's API over ``servers``; ``log_path`` is the agent's own log."""

    def require_secret(credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]) -> None:
        given = credentials.credentials if credentials is not None else ""
        if not hmac.compare_digest(given.encode(), secret.encode()):
            refusal = {"message": "Only the app this agent joined may call it."}
            raise HTTPException(status_code=401, detail=refusal)

    api = FastAPI(title="omni-web farm agent", openapi_url=None, docs_url=None, redoc_url=None,
                  dependencies=[Depends(require_secret)])

    def status() -> dict[str, Any]:
        servers.tend()  # a server that just died is counted (and started again) before it is reported
        return {
            "gpus": [g.to_json() for g in servers.gpus],
            "workers": [w.to_json() for w in servers.workers()],
            "crashes": [c.to_json() for c in servers.crashes()],
            "given_up": {str(gpu): why for gpu, why in servers.given_up().items()},
        }

    @api.get("/status")
    def get_status() -> dict[str, Any]:
        return status()

    @api.post("/serve")
    def serve(body: ServeIn) -> dict[str, Any]:
        try:
            servers.serve(body.model, timeout_s=body.timeout_s)
        except (OmniWebError, KeyError) as exc:
            raise HTTPException(status_code=409, detail={"message": str(exc)}) from exc
        return status()

    @api.post("/stop")
    def stop() -> dict[str, Any]:
        servers.stop()
        return status()

    @api.get("/log")
    def log(lines: int = 200) -> dict[str, str]:
        return {"text": log_tail(log_path, lines)}

    return api
