"""Test and bench helpers for the farm: the app's farm API on a loopback port, agents as processes.

Each agent is a separate ``python -m omni_web agent join`` with its own data root whose backend
venv holds the fake ``sgl-omni`` (tests/fakes); processes are stopped by their own pid.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import uvicorn

from omni_web.catalog import CATALOG, SGLANG_OMNI_VERSION
from omni_web.farm.app_api import build_farm_api
from omni_web.farm.registry import FarmRegistry
from omni_web.farm.watch import FarmWatcher, group_target
from omni_web.paths import DataPaths
from omni_web.server import ServerManager
from omni_web.server.group import router_argv
from omni_web.server.router import read_router_health, warm_voice_registry
from tests.fakes.sgl_omni import FAKE_PROGRAM, free_port, install_fake_sgl_omni
from tests.fakes.wheels import make_wheel
from tests.ui.helpers import cache_model

__all__ = [
    "AgentProcess",
    "AppFarm",
    "farm_beside",
    "fake_backend_wheel",
    "FarmApp",
    "RouterProcess",
    "start_agent",
    "start_farm_app",
    "start_router",
    "wait_for",
]

REPO = Path(__file__).resolve().parents[2]


def wait_for(predicate: Callable[[], object], what: str, timeout_s: float = 120.0) -> object:
    """Poll ``predicate`` until it returns something true; fail with ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


@dataclass
class FarmApp:
    """The app's ``/farm/v1`` served by uvicorn on a thread."""

    url: str
    registry: FarmRegistry
    server: uvicorn.Server
    thread: threading.Thread

    def stop(self) -> None:
        """Stop serving."""
        self.server.should_exit = True
        self.thread.join(timeout=10)


def start_farm_app(registry: FarmRegistry) -> FarmApp:
    """Serve ``registry``'s farm API on a free loopback port."""
    from fastapi import FastAPI
    from starlette.routing import Mount

    from omni_web.farm.app_api import FARM_PREFIX

    port = free_port()
    app = FastAPI()
    app.router.routes.insert(0, Mount(FARM_PREFIX, app=build_farm_api(registry)))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_for(lambda: server.started, "the farm app to listen", 30)
    return FarmApp(f"http://127.0.0.1:{port}", registry, server, thread)


@dataclass
class AgentProcess:
    """One agent process and its data root."""

    popen: subprocess.Popen[str]
    home: Path
    log_path: Path

    def output(self) -> str:
        """What it printed so far."""
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def stop(self, sig: int = signal.SIGTERM, timeout_s: float = 30.0) -> int | None:
        """Signal the agent's process group (it and its servers) and wait for it."""
        if self.popen.poll() is None:
            os.killpg(self.popen.pid, sig)
            try:
                self.popen.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                os.killpg(self.popen.pid, signal.SIGKILL)
                self.popen.wait(timeout=timeout_s)
        return self.popen.returncode


def start_agent(
    app_url: str, token: str, home: Path, *, gpus: str = "0", env: dict[str, str] | None = None,
    bare: bool = False,
) -> AgentProcess:
    """``python -m omni_web agent join`` with its own data root holding the fake backend (``bare``:
    nothing; the agent installs the backend itself from the index ``env`` names)."""
    home.mkdir(parents=True, exist_ok=True)
    box_env = {"OMNI_WEB_HOME": str(home), "HF_HUB_CACHE": str(home / "hf-cache")}
    if not bare:  # a box set up earlier: the backend installed and every catalog model downloaded
        install_fake_sgl_omni(DataPaths(root=home).backend_venv)
        for entry in CATALOG:
            cache_model(home / "hf-cache", entry.key)
    log_path = home / "agent-stdout.log"
    argv = [sys.executable, "-m", "omni_web", "agent", "join", app_url, "--token", token, "--gpus", gpus,
            "--host", "127.0.0.1", "--advertise", "127.0.0.1", "--name", home.name,
            # boxes share this machine's ports: each starts its servers on a range of its own
            "--worker-port", str(free_port()), "--port", str(free_port())]
    full_env = {**os.environ, **box_env, **(env or {})}
    with open(log_path, "w", encoding="utf-8") as log:
        popen = subprocess.Popen(
            argv, cwd=REPO, env=full_env, stdout=log, stderr=subprocess.STDOUT, text=True,
            start_new_session=True,
        )
    return AgentProcess(popen, home, log_path)


@dataclass
class AppFarm:
    """The farm beside a server manager's group, as webapp.py wires it: registry, ``/farm/v1`` and
    watcher; the agents a test starts go into ``agents`` to be stopped with it."""

    registry: FarmRegistry
    app: FarmApp
    agents: list[AgentProcess]


@contextmanager
def farm_beside(paths: DataPaths, manager: ServerManager) -> Iterator[AppFarm]:
    """Serve the farm of ``manager``'s group; on exit stop the agents, the farm and the manager."""
    registry = FarmRegistry(paths, group_target(manager))
    app = start_farm_app(registry)
    watcher = FarmWatcher(registry, interval_s=0.5)
    watcher.start()
    farm = AppFarm(registry, app, [])
    try:
        yield farm
    finally:
        for agent in farm.agents:
            agent.stop()
        watcher.stop()
        app.stop()
        manager.stop()


def fake_backend_wheel(folder: Path) -> Path:
    """A ``sglang-omni`` 0.1.9 wheel whose ``sgl-omni`` runs the fake server with this interpreter,
    for a bare box's agent to pip-install (``PIP_NO_INDEX=1 PIP_FIND_LINKS=folder``)."""
    source = (
        '"""sglang-omni stand-in: sgl-omni runs tests/fakes/fake_sgl_omni.py."""\n'
        "import os, sys\n\n\ndef main() -> None:\n"
        f"    python, program = {sys.executable!r}, {str(FAKE_PROGRAM)!r}\n"
        "    os.execv(python, [python, program, *sys.argv[1:]])\n"
    )
    return make_wheel(folder, "sglang-omni", SGLANG_OMNI_VERSION, scripts={"sgl-omni": "main"},
                      module_source=source)


@dataclass
class RouterProcess:
    """The real router (contract venv) on a loopback port."""

    popen: subprocess.Popen[bytes]
    url: str

    def stop(self) -> None:
        """SIGTERM its group, then SIGKILL."""
        if self.popen.poll() is None:
            os.killpg(self.popen.pid, signal.SIGTERM)
            try:
                self.popen.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.popen.pid, signal.SIGKILL)
                self.popen.wait(timeout=10)


def start_router(router_exe: Path, urls: list[str], work: Path) -> RouterProcess:
    """The router in front of ``urls``, once they are all routable and its voice registry is warm."""
    port = free_port()
    state_dir = work / "router-state"
    argv = router_argv(router_exe, host="127.0.0.1", port=port, worker_urls=urls, state_dir=state_dir)
    argv += ["--log-level", "warning"]
    log_path = work / f"router-{port}.log"
    with log_path.open("wb") as log:
        popen = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    router = RouterProcess(popen, f"http://127.0.0.1:{port}")

    def ready() -> bool:
        if popen.poll() is not None:
            raise AssertionError(f"router exited: {log_path.read_text()[-2000:]}")
        health = read_router_health(router.url, timeout_s=2)
        return health is not None and health.all_routable and health.total_workers == len(urls)

    wait_for(ready, "the router to see every worker routable", 60)
    warm_voice_registry(router.url)
    return router
