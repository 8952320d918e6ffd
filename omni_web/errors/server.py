"""Managed and foreign sgl-omni servers."""

from __future__ import annotations

from pathlib import Path

from omni_web.errors.base import OmniWebError

__all__ = [
    "BootTimeout",
    "FarmRefused",
    "ForeignServer",
    "PortTaken",
    "ServerError",
    "ServerNotRunning",
    "ServerStartError",
]


class ServerError(OmniWebError):
    """Something is wrong with the `sgl-omni serve` process or the endpoint."""


class ServerStartError(ServerError):
    """The managed server process died during boot (or was aborted); carries its log tail."""

    def __init__(
        self,
        message: str,
        *,
        exit_code: int | None = None,
        log_path: Path | None = None,
        log_tail: str = "",
    ) -> None:
        self.exit_code = exit_code
        self.log_path = log_path
        self.log_tail = log_tail
        super().__init__(message)


class BootTimeout(ServerStartError):
    """The server process lived but `/health` never answered 200 within the start timeout."""


class PortTaken(ServerError):
    """The configured port is held by another program.

    ``fallback_port`` is where sglang-omni would have moved the server (None when strict mode
    refused to fall back).
    """

    def __init__(self, port: int, *, fallback_port: int | None = None, host: str = "127.0.0.1") -> None:
        self.port = port
        self.fallback_port = fallback_port
        self.host = host
        moved = (
            f" sgl-omni tried to move the server to port {fallback_port}, where no client looks for it,"
            " so the boot was aborted."
            if fallback_port is not None
            else ""
        )
        super().__init__(
            f"Port {port} is already in use.{moved} Find and stop the program holding it "
            f"(ss -tlnp 'sport = :{port}'), or pick another port in Settings (CLI: --port), then start again."
        )


class ForeignServer(ServerError):
    """A server this app did not start answers at the endpoint but hosts a different model."""

    def __init__(self, endpoint: str, *, hosted_model: str, wanted_model: str) -> None:
        self.endpoint = endpoint
        self.hosted_model = hosted_model
        self.wanted_model = wanted_model
        super().__init__(
            f"The server at {endpoint} was not started by omni-web and hosts '{hosted_model}', "
            f"not '{wanted_model}'. Stop that server yourself, point omni-web at another port or "
            f"URL, or choose the model it hosts."
        )


class ServerNotRunning(ServerError):
    """An operation needs a running server and none answers."""


class FarmRefused(ServerError):
    """An agent's farm token was refused by the app (missing, mistyped or revoked)."""

    def __init__(self, app_url: str) -> None:
        self.app_url = app_url
        super().__init__(
            f"The app at {app_url} refused this box: its farm token is missing, mistyped or revoked. "
            "Make a farm token in the app's Settings (CLI: python -m omni_web token --farm create NAME) "
            "and pass it with --token (or in OMNI_WEB_FARM_TOKEN)."
        )


class FarmBoxNotFound(ServerError):
    """A farm box was named (by id or name) that is not in the farm, or a name fits several boxes."""

    def __init__(self, ref: str, known: list[str], *, ambiguous: bool = False) -> None:
        self.ref = ref
        self.known = known
        listed = ", ".join(known) or "none has joined"
        what = f"Several farm boxes are named '{ref}'" if ambiguous else f"No farm box is called '{ref}'"
        super().__init__(
            f"{what}. Boxes: {listed}. Name the box by its id (python -m omni_web server status lists them)."
        )
