"""The farm agent: `python -m omni_web agent join http://app:7860 --token T` on a GPU box.

It reports the box's GPUs (NVML), serves its API (:mod:`omni_web.farm.agent_api`) on a port of
its own, and joins the app with the farm token; from then on the app tells it what to serve.
On SIGTERM/SIGINT it stops its servers and tells the app it leaves.
"""

from __future__ import annotations

import logging
import secrets
import socket
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import uvicorn

from omni_web.errors import FarmRefused, ServerError
from omni_web.farm.agent_api import build_agent_api
from omni_web.farm.box import BoxGpu, BoxServers
from omni_web.farm.provision import ensure_backend
from omni_web.gpu import GpuProbe, probe_gpus
from omni_web.paths import DataPaths
from omni_web.server import free_ports

__all__ = ["AgentOptions", "box_gpus", "join_farm", "reach_host"]

JOIN_PATH = "/farm/v1/join"
CHECK_PATH = "/farm/v1/check"
LEAVE_PATH = "/farm/v1/leave"
TEND_EVERY_S = 0.5


@dataclass(frozen=True, slots=True)
class AgentOptions:
    """How the agent joins: the app, the token, and where it listens."""

    app_url: str
    token: str
    name: str = ""
    host: str = "0.0.0.0"
    port: int = 0  # 0: the first free port from 30090
    advertise_host: str = ""  # "": the address this box reaches the app from
    gpus: tuple[int, ...] | None = None  # None: every GPU NVML reports
    worker_port: int = 30100  # the servers take the first free ports from here


def box_gpus(probe: GpuProbe, wanted: Sequence[int] | None) -> tuple[BoxGpu, ...]:
    """The GPUs to serve on: NVML's (or the ``wanted`` ones of them); ``wanted`` indices NVML did
    not report are kept as unknown GPUs (a box whose driver NVML cannot read)."""
    known = {g.index: BoxGpu.from_info(g) for g in probe.gpus}
    if wanted is None:
        return tuple(known.values())
    return tuple(known.get(index, BoxGpu(index)) for index in wanted)


def reach_host(app_url: str) -> str:
    """This box's address on the route to the app (what the app uses to call it back)."""
    parts = urlsplit(app_url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect((host, port))  # UDP connect sends nothing; it only picks the route
        return str(probe.getsockname()[0])


def _post(url: str, token: str, body: dict[str, object]) -> httpx.Response:
    try:
        return httpx.post(url, json=body, headers={"Authorization": f"Bearer {token}"}, timeout=30.0)
    except httpx.HTTPError as exc:
        raise ServerError(
            f"Cannot reach the app at {url}: {exc}. Check the URL and that the app runs."
        ) from exc


def _check_token(options: AgentOptions) -> None:
    try:
        response = httpx.get(options.app_url.rstrip("/") + CHECK_PATH, timeout=30.0,
                             headers={"Authorization": f"Bearer {options.token}"})
    except httpx.HTTPError as exc:
        raise ServerError(
            f"Cannot reach the app at {options.app_url}: {exc}. Check the URL and that the app runs."
        ) from exc
    if response.status_code in (401, 403):
        raise FarmRefused(options.app_url)


def _register(options: AgentOptions, agent_url: str, secret: str, gpus: Sequence[BoxGpu]) -> str:
    body = {"name": options.name or socket.gethostname(), "agent_url": agent_url, "secret": secret,
            "gpus": [g.to_json() for g in gpus]}
    response = _post(options.app_url.rstrip("/") + JOIN_PATH, options.token, body)
    if response.status_code in (401, 403):
        raise FarmRefused(options.app_url)
    if not response.is_success:
        raise ServerError(f"The app at {options.app_url} refused the join (HTTP {response.status_code}: "
                          f"{response.text[:300]}).")
    return str(response.json()["box_id"])


def join_farm(paths: DataPaths, options: AgentOptions, *, stop: threading.Event, nvml: object = None) -> int:
    """Join the app's farm and serve until ``stop`` is set; returns the exit code.

    Raises:
        FarmRefused: the app did not accept the token (nothing is left running).
        ServerError: the app cannot be reached.
        InstallError: the backend was missing and pip could not install it.
    """
    paths.ensure()
    log_path = paths.logs_dir / "farm-agent.log"
    _log_to(log_path)
    _check_token(options)  # before a bare box spends an hour on the backend and the model
    ensure_backend(paths, say=lambda line: print(line, flush=True))  # a bare box installs it first
    gpus = box_gpus(probe_gpus(nvml), options.gpus)
    advertise = options.advertise_host or reach_host(options.app_url)
    port = options.port or free_ports(options.host, 30090, 1, avoid=set())[0]
    servers = BoxServers(paths, gpus, host=options.host, advertise_host=advertise,
                         first_port=options.worker_port)
    secret = secrets.token_urlsafe(32)
    api = build_agent_api(servers, secret=secret, log_path=log_path)
    server = uvicorn.Server(uvicorn.Config(api, host=options.host, port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, name="farm-agent-api", daemon=True)
    thread.start()
    try:
        while not server.started:
            if not thread.is_alive():
                raise ServerError(
                    f"The agent could not listen on {options.host}:{port}; pick another --port."
                )
            stop.wait(0.05)
        agent_url = f"http://{advertise}:{port}"
        box_id = _register(options, agent_url, secret, gpus)
        log = logging.getLogger("omni_web.farm")
        log.warning("Joined %s as box %s (%s)", options.app_url, box_id, agent_url)
        print(f"Joined {options.app_url} as box {box_id}; serving on {agent_url}", flush=True)
        while not stop.wait(TEND_EVERY_S):
            servers.tend()  # crashed servers start again between the app's looks too
        _leave(options, box_id)
    finally:
        servers.stop()
        server.should_exit = True
        thread.join(timeout=10)
    return 0


def _leave(options: AgentOptions, box_id: str) -> None:
    try:
        _post(options.app_url.rstrip("/") + LEAVE_PATH, options.token, {"box_id": box_id})
    except ServerError:
        pass  # the app is gone too; it drops boxes whose agent stops answering


def _log_to(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    for name in ("omni_web.farm", "uvicorn"):
        logging.getLogger(name).addHandler(handler)
