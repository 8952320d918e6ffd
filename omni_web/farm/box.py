"""The servers of one farm box: one `sgl-omni serve` per GPU, started, stopped and switched here.

Each GPU gets the spec the app's own box would use for it (``build_serve_spec``: the bf16
fallback below the catalog's compute capability, the throughput profile when the card has room),
its own port, ``CUDA_VISIBLE_DEVICES`` and log file in the box's data root. Only processes this
object launched are ever signalled.
"""

from __future__ import annotations

import dataclasses
import logging
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from omni_web.catalog import get_entry
from omni_web.errors import ServerStartError
from omni_web.farm.provision import ensure_model
from omni_web.gpu import GpuInfo
from omni_web.paths import DataPaths
from omni_web.server import (
    ServeSpec,
    build_argv,
    build_serve_spec,
    came_up,
    free_ports,
    launch,
    log_tail,
    new_log_path,
    terminate_group,
    write_log_header,
)
from omni_web.settings import Settings

__all__ = ["MAX_UNPROVEN_RESTARTS", "BoxCrash", "BoxGpu", "BoxServers", "BoxWorker"]

_log = logging.getLogger("omni_web.farm")

# A crashed server is started again on its GPU and port; one whose restarts die this many times in
# a row before answering healthy is given up (a boot that cannot succeed, not a chunk that kills it:
# those the app's renderer counts against progress, as for its own servers). A restart is proven by
# the agent's probe, or by its log showing it came up (listened, warmup not failed): the router may
# hand a restart the retried poison chunk the moment it listens, before anyone probes it healthy.
MAX_UNPROVEN_RESTARTS = 3


@dataclass(frozen=True, slots=True)
class BoxGpu:
    """One GPU of a box as the agent reports it (``name`` is "unknown" when NVML did not answer)."""

    index: int
    name: str = "unknown"
    compute_capability: tuple[int, int] | None = None
    total_memory_bytes: int = 0

    @classmethod
    def from_info(cls, info: GpuInfo) -> BoxGpu:
        """From an NVML probe's record."""
        return cls(info.index, info.name, info.compute_capability, info.total_memory_bytes)

    def to_json(self) -> dict[str, object]:
        """The JSON the agent sends."""
        return dataclasses.asdict(self)


@dataclass(frozen=True, slots=True)
class BoxWorker:
    """One running server of the box: its GPU, model, URL and log."""

    gpu: int
    model_key: str
    url: str
    pid: int
    log_path: str

    def to_json(self) -> dict[str, object]:
        """The JSON the agent sends."""
        return dataclasses.asdict(self)


@dataclass(frozen=True, slots=True)
class BoxCrash:
    """A server of the box that exited without being asked to."""

    gpu: int
    pid: int
    model_key: str
    returncode: int | None
    at: float

    @property
    def id(self) -> str:
        """Unique on the box (a pid is not reused while the agent remembers it)."""
        return f"{self.gpu}:{self.pid}"

    def to_json(self) -> dict[str, object]:
        """The JSON the agent sends."""
        return {**dataclasses.asdict(self), "id": self.id}


class BoxServers:
    """Starts one server per GPU for a model, and stops them (lock-guarded; one model at a time).

    Args:
        paths: the box's data root (backend venv, logs).
        gpus: the GPUs this box serves on.
        host: the interface workers bind; ``advertise_host`` is how the app reaches them.
    """

    def __init__(
        self,
        paths: DataPaths,
        gpus: Sequence[BoxGpu],
        *,
        host: str,
        advertise_host: str,
        first_port: int = 30100,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._paths = paths
        self._gpus = tuple(gpus)
        self._host = host
        self._advertise = advertise_host
        self._first_port = first_port
        self._clock = clock
        self._lock = threading.RLock()  # one serve, stop or tend at a time
        self._table = threading.Lock()  # the tables below, read without waiting for a boot
        self._running: dict[int, tuple[BoxWorker, subprocess.Popen[bytes]]] = {}
        self._crashes: list[BoxCrash] = []
        self._unproven: dict[int, int] = {}  # GPU -> restarts in a row not yet seen healthy
        self._given_up: dict[int, str] = {}  # GPU -> why its server is no longer restarted

    @property
    def gpus(self) -> tuple[BoxGpu, ...]:
        """The GPUs served on."""
        return self._gpus

    def workers(self) -> tuple[BoxWorker, ...]:
        """The servers started here whose process is still alive."""
        with self._table:
            return tuple(w for w, popen in self._running.values() if popen.poll() is None)

    def crashes(self) -> tuple[BoxCrash, ...]:
        """Every server exit that was not asked for, oldest first."""
        with self._table:
            return tuple(self._crashes)

    def given_up(self) -> dict[int, str]:
        """GPUs whose server is no longer restarted, and why."""
        with self._table:
            return dict(self._given_up)

    def tend(self) -> tuple[BoxCrash, ...]:
        """Start again, on its GPU and port, each server that exited by itself; the crashes seen now.

        A restart that answers the agent's probe healthy, or whose log shows it came up, clears
        its GPU's count; :data:`MAX_UNPROVEN_RESTARTS` restarts in a row that never do give the GPU
        up (it stays down, and ``given_up`` says why).
        While a serve or stop runs (a boot, a download) nothing is done: that call owns the servers.
        """
        if not self._lock.acquire(blocking=False):
            return ()
        try:
            with self._table:
                running = list(self._running.items())
            seen = []
            for index, (worker, popen) in running:
                if popen.poll() is None:
                    if self._unproven.get(index) and _healthy(worker.url):
                        self._unproven[index] = 0
                    continue
                crash = BoxCrash(index, worker.pid, worker.model_key, popen.returncode, time.time())
                if self._unproven.get(index) and _came_up(Path(worker.log_path)):
                    self._unproven[index] = 0  # it was up: its work killed it, not its boot
                with self._table:
                    self._crashes.append(crash)
                seen.append(crash)
                self._restart(worker, crash)
            return tuple(seen)
        finally:
            self._lock.release()

    def _restart(self, worker: BoxWorker, crash: BoxCrash) -> None:
        unproven = self._unproven.get(crash.gpu, 0)
        if unproven >= MAX_UNPROVEN_RESTARTS:
            why = (f"The server on GPU {crash.gpu} exited {unproven + 1} times in a row before answering "
                   f"healthy; it is left down. Its log: {worker.log_path}")
            with self._table:
                del self._running[crash.gpu]
                self._given_up[crash.gpu] = why
            _log.warning("%s", why)
            return
        self._unproven[crash.gpu] = unproven + 1
        _log.warning("The server on GPU %s (pid %s) exited with %s; starting it again on its port",
                     crash.gpu, crash.pid, crash.returncode)
        gpu = next(g for g in self._gpus if g.index == crash.gpu)
        self._launch(worker.model_key, gpu, int(urlsplit(worker.url).port or 0))

    def spec_for(self, model_key: str, gpu: BoxGpu, port: int) -> ServeSpec:
        """The spec a start of ``model_key`` on ``gpu`` uses (the same planner as the app's box)."""
        vram_gb = gpu.total_memory_bytes / 1024**3 if gpu.total_memory_bytes else None
        settings = Settings(server_host=self._host, server_port=port)
        return build_serve_spec(
            get_entry(model_key), settings=settings, compute_capability=gpu.compute_capability,
            vram_gb=vram_gb,
        )

    def serve(self, model_key: str, *, timeout_s: float = 600.0) -> tuple[BoxWorker, ...]:
        """Serve ``model_key`` on every GPU (stopping another model first); returns when all are healthy.

        ``timeout_s`` is for the boot; a model missing from the HF cache is downloaded before it.

        Raises:
            ServerStartError: a server died or was not healthy within ``timeout_s`` (all are stopped).
            DownloadError, GatedModel, DiskFullError: the model could not be fetched.
        """
        with self._lock:
            current = self.workers()
            if current and all(w.model_key == model_key for w in current) and len(current) == len(self._gpus):
                return current
            self.stop()
            self._unproven.clear()
            with self._table:
                self._given_up.clear()
            ensure_model(model_key)  # a box that never served this model fetches it first
            ports = free_ports(self._host, self._first_port, len(self._gpus), avoid=set())
            for gpu, port in zip(self._gpus, ports, strict=True):
                self._launch(model_key, gpu, port)
            try:
                self._wait_healthy(self._clock() + timeout_s)
            except ServerStartError:
                self.stop()
                raise
            return self.workers()

    def _launch(self, model_key: str, gpu: BoxGpu, port: int) -> None:
        spec = self.spec_for(model_key, gpu, port)
        argv = build_argv(spec, sgl_omni=self._paths.backend_venv / "bin" / "sgl-omni")
        log_path = new_log_path(self._paths.logs_dir, f"{model_key}-gpu{gpu.index}")
        write_log_header(log_path, spec, argv, strict_port=True)
        env = {
            "PYTHONUNBUFFERED": "1",
            "CUDA_VISIBLE_DEVICES": str(gpu.index),
            "SGLANG_OMNI_STRICT_PORT": "1",
        }
        popen = launch(argv, log_path=log_path, env_extra=env, cwd=self._paths.root)
        url = f"http://{self._advertise}:{port}"
        worker = BoxWorker(gpu.index, model_key, url, popen.pid, str(log_path))
        with self._table:
            self._running[gpu.index] = (worker, popen)

    def _wait_healthy(self, deadline: float) -> None:
        waiting = dict(self._running)
        while waiting:
            for index, (worker, popen) in list(waiting.items()):
                if popen.poll() is not None:
                    raise ServerStartError(
                        f"The server on GPU {index} exited ({popen.returncode}) while starting. "
                        f"Its log ({worker.log_path}) ends:\n{log_tail(Path(worker.log_path), 10)}"
                    )
                if _healthy(worker.url):
                    del waiting[index]
            if waiting and self._clock() > deadline:
                raise ServerStartError(
                    f"The servers on GPUs {sorted(waiting)} were not healthy in time; see their logs."
                )
            if waiting:
                time.sleep(0.2)

    def stop(self, grace_s: float = 10.0) -> int:
        """Stop every server started here (SIGTERM to its group, then SIGKILL); returns how many."""
        with self._lock, self._table:
            running = list(self._running.values())
            self._running.clear()
        for _worker, popen in running:
            terminate_group(popen.pid, leader=popen, grace_s=grace_s)
        return len(running)


def _came_up(log_path: Path) -> bool:
    try:
        return came_up(log_path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return False


def _healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=2.0).status_code == 200
    except httpx.HTTPError:
        return False
