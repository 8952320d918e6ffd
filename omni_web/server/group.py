"""A server group: one `sgl-omni serve` per GPU behind the real SGLang-Omni router, all owned by us.

Clients keep talking to one endpoint (the configured host and port), which is now
``sgl-omni-router-py --policy least_request`` from the backend venv. Behind it run one worker per
selected GPU (``CUDA_VISIBLE_DEVICES=<id>``, its own loopback port, ``SGLANG_OMNI_STRICT_PORT=1``,
its own log) with the same model and config, plus any remote `sgl-omni serve` URLs the user added.

omni-web launches and records every process itself (pid + kernel start time, as for a single
server) instead of using the router's launcher mode, because a SIGTERM to a launcher-mode router
orphans its workers (``sglang_omni_router/python/supervisor.py``). The start waits for each worker's ``/health`` 200, then for
the router's ``/health`` to show every worker routable, then hydrates the router's voice registry
(otherwise named voices all pin to one worker). A worker that dies is started again on the same
GPU and port (:meth:`ServerGroup.revive`); the router re-admits it after two good probes. The
group's record lives in ``state/server-group.json``.
"""

from __future__ import annotations

import dataclasses
import subprocess
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from omni_web.catalog import CatalogEntry
from omni_web.errors import BackendError, BootTimeout, PortTaken, ServerError, ServerStartError
from omni_web.paths import DataPaths
from omni_web.server.boot import (
    LaunchOptions,
    new_log_path,
    port_accepts,
    wait_until_healthy,
    write_log_header,
)
from omni_web.server.bootlog import BootLogWatcher
from omni_web.server.group_record import (
    GROUP_RECORD_NAME,
    GroupRecord,
    WorkerRecord,
    clear_group_record,
    group_pids,
    load_group_record,
    save_group_record,
)
from omni_web.server.group_status import member_rows
from omni_web.server.process import launch, log_tail, terminate_group
from omni_web.server.record import ServerRecord, record_for_launch, record_matches_process
from omni_web.server.router import (
    RouterHealth,
    add_worker,
    read_router_health,
    remove_worker,
    warm_voice_registry,
)
from omni_web.server.spec import ServeSpec, build_argv, client_host, shell_command
from omni_web.server.status import GroupMember
from omni_web.server.workers import WORKER_HOST as _WORKER_HOST
from omni_web.server.workers import check_remote_worker, free_ports, router_argv

__all__ = [
    "GROUP_RECORD_NAME",
    "GroupRecord",
    "ServerGroup",
    "WorkerRecord",
    "check_remote_worker",
    "group_pids",
    "load_group_record",
    "router_argv",
]  # the record names are re-exported from omni_web.server.group_record

ROUTER_EXE = "sgl-omni-router-py"

LogCallback = Callable[[str], None]


def _ignore(_line: str) -> None:
    """The default log sink."""


@contextmanager
def _allowed() -> Iterator[bool]:
    """The default revive guard: always allowed."""
    yield True


class ServerGroup:
    """Starts, watches, revives and stops a router + one worker per GPU.

    Args:
        paths: the data root (backend venv, logs, the group record).
        options: how workers and the router are launched and waited for.
    """

    def __init__(self, paths: DataPaths, options: LaunchOptions | None = None) -> None:
        self._paths = paths
        self._launch = options or LaunchOptions()
        self._lock = threading.RLock()  # guards the record file and the fields below
        self._popens: dict[int, subprocess.Popen[bytes]] = {}  # pid -> child, for reaping
        self._reviving: set[str] = set()  # worker URLs being restarted now
        self._cancel = threading.Event()

    # --- paths and records ----------------------------------------------------------------------

    @property
    def sgl_omni(self) -> Path:
        """The backend's ``sgl-omni``."""
        return self._paths.backend_venv / "bin" / "sgl-omni"

    @property
    def router_exe(self) -> Path:
        """The backend's ``sgl-omni-router-py`` (same wheel as ``sgl-omni``)."""
        return self._paths.backend_venv / "bin" / ROUTER_EXE

    def record(self) -> GroupRecord | None:
        """The saved record (it may describe processes that have exited)."""
        return load_group_record(self._paths)

    def running_record(self) -> GroupRecord | None:
        """The record when its router is alive (the group is serving or booting), else None."""
        record = self.record()
        if record is None or record.router is None or not record_matches_process(record.router):
            return None
        return record

    # --- start ----------------------------------------------------------------------------------

    def start(
        self,
        spec: ServeSpec,
        gpus: Sequence[int | str],
        *,
        remote_urls: Sequence[str] = (),
        timeout_s: float,
        on_log: LogCallback = _ignore,
    ) -> GroupRecord:
        """Launch one worker per GPU and the router in front; return when every worker is routable.

        ``spec`` gives the model, config and the router's host and port. On any failure every
        process started here is stopped before the error is raised.

        Raises:
            BackendError: ``sgl-omni`` or ``sgl-omni-router-py`` is missing from the backend venv.
            PortTaken: the router's port is held.
            ServerError: a remote worker failed its check.
            ServerStartError, BootTimeout: a worker or the router did not come up.
        """
        self._preflight(spec)
        remotes = [check_remote_worker(url, spec.entry) for url in remote_urls]
        if self._launch.before_start is not None and gpus:  # (the model's companions, for local workers)
            self._launch.before_start(spec.entry)
        deadline = self._launch.clock() + timeout_s
        ports = free_ports(_WORKER_HOST, spec.port + 1, len(gpus), avoid={spec.port})
        record = GroupRecord(
            model_key=spec.model_key, tag=spec.tag, router=None, workers=(), remote_urls=tuple(remotes)
        )
        try:
            for note in spec.notes:
                on_log(note)
            workers = []
            for gpu, port in zip(gpus, ports, strict=True):
                workers.append(self._launch_worker(spec, str(gpu), port, on_log))
                record = dataclasses.replace(record, workers=tuple(workers))
                with self._lock:
                    save_group_record(self._paths, record)
            urls = [w.url for w in workers] + list(remotes)
            router = self._launch_router(spec, urls, on_log)
            record = dataclasses.replace(record, router=router)
            with self._lock:
                save_group_record(self._paths, record)
            for worker in workers:
                self._wait_worker(spec, worker, max(1.0, deadline - self._launch.clock()), on_log)
                on_log(f"Worker on GPU {worker.gpu} healthy at {worker.url} (pid {worker.record.pid}).")
            self._wait_routable(router, len(urls), deadline, on_log)
            state = warm_voice_registry(
                router.base_url, timeout_s=max(1.0, min(30.0, deadline - self._launch.clock()))
            )
            on_log(f"Router voice registry: {state}.")
        except BaseException:
            self._stop_record(record, grace_s=10.0)
            raise
        on_log(f"Server group healthy at {router.base_url}: router (pid {router.pid}) + {len(urls)} workers.")
        return record

    def _preflight(self, spec: ServeSpec) -> None:
        for exe in (self.sgl_omni, self.router_exe):
            if not exe.exists():
                raise BackendError(
                    f"The SGLang-Omni backend has no {exe.name} ({exe}). Install or repair the backend in "
                    "the "
                    "Setup tab (CLI: python -m omni_web setup)."
                )
        if spec.config_path is not None and not spec.config_path.is_file():
            raise ServerStartError(
                f"The serve config {spec.config_path} is missing. Restore it (git checkout configs/)."
            )
        if port_accepts(client_host(spec.host).strip("[]"), spec.port):
            raise PortTaken(spec.port, host=spec.host)

    def _launch_worker(self, spec: ServeSpec, gpu: str, port: int, on_log: LogCallback) -> WorkerRecord:
        worker_spec = dataclasses.replace(spec, host=_WORKER_HOST, port=port)
        argv = build_argv(worker_spec, sgl_omni=self.sgl_omni)
        log_path = new_log_path(self._paths.logs_dir, f"{spec.model_key}-gpu{gpu}")
        write_log_header(log_path, worker_spec, argv, strict_port=self._launch.strict_port)
        with open(log_path, "a", encoding="utf-8") as log:
            log.write(f"# omni-web: group worker, env: CUDA_VISIBLE_DEVICES={gpu}\n")
        env = {"PYTHONUNBUFFERED": "1", "CUDA_VISIBLE_DEVICES": gpu}
        if self._launch.strict_port:
            env["SGLANG_OMNI_STRICT_PORT"] = "1"
        on_log(f"Starting worker on GPU {gpu}: CUDA_VISIBLE_DEVICES={gpu} {shell_command(argv)}")
        on_log(f"Log: {log_path}")
        popen = launch(argv, log_path=log_path, env_extra=env, cwd=self._paths.root)
        return WorkerRecord(gpu=gpu, record=self._record_for(popen, worker_spec, argv, log_path))

    def _launch_router(self, spec: ServeSpec, urls: Sequence[str], on_log: LogCallback) -> ServerRecord:
        state_dir = self._paths.state_dir / "router-state"
        state_dir.mkdir(parents=True, exist_ok=True)
        argv = router_argv(
            self.router_exe, host=spec.host, port=spec.port, worker_urls=urls, state_dir=state_dir
        )
        log_path = new_log_path(self._paths.logs_dir, f"{spec.model_key}-router")
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log_path.write_text(
            f"# omni-web: router for {spec.model_label}\n# omni-web: command: {shell_command(argv)}\n"
        )
        on_log(f"Starting the router: {shell_command(argv)}")
        on_log(f"Log: {log_path}")
        popen = launch(argv, log_path=log_path, env_extra={"PYTHONUNBUFFERED": "1"}, cwd=self._paths.root)
        return self._record_for(popen, spec, argv, log_path)

    def _record_for(
        self, popen: subprocess.Popen[bytes], spec: ServeSpec, argv: list[str], log_path: Path
    ) -> ServerRecord:
        with self._lock:
            self._popens[popen.pid] = popen
        return record_for_launch(popen, spec, argv, log_path)

    def _wait_worker(
        self, spec: ServeSpec, worker: WorkerRecord, timeout_s: float, on_log: LogCallback
    ) -> None:
        worker_spec = dataclasses.replace(spec, host=_WORKER_HOST, port=worker.record.port)
        client = self._launch.client_factory(
            worker.url, timeout_s=self._launch.probe_timeout_s, connect_retries=0
        )
        try:
            wait_until_healthy(
                worker_spec,
                worker.record,
                popen=self._popens.get(worker.record.pid),
                watcher=BootLogWatcher(worker.record.log_path),
                client=client,
                timeout_s=timeout_s,
                on_log=lambda line: on_log(f"[GPU {worker.gpu}] {line}"),
                cancelled=self._cancel.is_set,
                clock=self._launch.clock,
                sleep=self._launch.sleep,
                poll_interval_s=self._launch.poll_interval_s,
                probe_timeout_s=self._launch.probe_timeout_s,
            )
        finally:
            client.close()

    def _wait_routable(
        self, router: ServerRecord, expected: int, deadline: float, on_log: LogCallback
    ) -> None:
        """Wait for the router's ``/health``: every worker routable (``/ready`` is 200 with just one)."""
        popen = self._popens.get(router.pid)
        last = ""
        while True:
            if self._cancel.is_set():
                raise ServerStartError("The server start was cancelled.", log_path=router.log_path)
            exited = popen.poll() is not None if popen is not None else not record_matches_process(router)
            if exited:
                tail = log_tail(router.log_path)
                raise ServerStartError(
                    f"The router exited during the start. Last log lines:\n{tail}\nFull log: "
                    f"{router.log_path}",
                    log_path=router.log_path,
                    log_tail=tail,
                )
            health = read_router_health(router.base_url, timeout_s=self._launch.probe_timeout_s)
            if health is not None:
                seen = f"Router: {health.routable_workers} of {health.total_workers} workers routable."
                if seen != last:
                    on_log(seen)
                    last = seen
                if health.total_workers >= expected and health.all_routable:
                    return
            if self._launch.clock() >= deadline:
                tail = log_tail(router.log_path)
                raise BootTimeout(
                    f"The router did not see every worker routable in time ({last or 'no answer'}). "
                    f"Last router log lines:\n{tail}\nFull log: {router.log_path}",
                    log_path=router.log_path,
                    log_tail=tail,
                )
            self._launch.sleep(min(self._launch.poll_interval_s, 0.5))

    # --- stop -----------------------------------------------------------------------------------

    def cancel(self) -> None:
        """Abort a start in progress (its processes are stopped by the start itself)."""
        self._cancel.set()

    def arm(self) -> None:
        """Clear an earlier cancel before a start (the manager does it under its own lock, with
        its stop flag, so a Stop is either before the start or aborts it)."""
        self._cancel.clear()

    def stop(self, grace_s: float = 10.0) -> bool:
        """Stop the router and every managed worker this app started; True when any was running.

        Remote workers are never touched. Each process is signalled only while its record still
        matches it (pid + start time), so a dead worker's reused pid is never hit.
        """
        self._cancel.set()
        with self._lock:
            record = self.record()
        if record is None:
            return False
        stopped = self._stop_record(record, grace_s=grace_s)  # not under the lock: _terminate takes it
        with self._lock:
            clear_group_record(self._paths)
        return stopped

    def _stop_record(self, record: GroupRecord, *, grace_s: float) -> bool:
        targets = ([record.router] if record.router is not None else []) + [w.record for w in record.workers]
        live = [r for r in targets if record_matches_process(r) or r.pid in self._popens]
        if record.router is not None and record.router in live:
            self._terminate(record.router, grace_s)  # first, so no request reaches a stopping worker
            live.remove(record.router)
        threads = [threading.Thread(target=self._terminate, args=(r, grace_s), daemon=True) for r in live]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return bool(live) or (record.router is not None and record.router.pid in self._popens)

    def _terminate(self, record: ServerRecord, grace_s: float) -> None:
        with self._lock:
            popen = self._popens.pop(record.pid, None)
        if popen is None and not record_matches_process(record):
            return
        terminate_group(record.pgid, leader=popen, grace_s=grace_s)

    # --- workers at run time --------------------------------------------------------------------

    def revive(
        self,
        spec: ServeSpec,
        *,
        timeout_s: float,
        on_log: LogCallback = _ignore,
        guard: Callable[[], AbstractContextManager[bool]] | None = None,
    ) -> list[str]:
        """Start again every managed worker whose process is gone (same GPU, same port); return their URLs.

        The dead process is never signalled: its record is replaced by the new one. The router
        keeps probing the URL and routes to it again after two good probes. A worker that fails
        to come back is reported through ``on_log`` and left down (the router skips it).
        ``guard()`` is entered around each launch and its record update; when it yields False
        (the user stopped the server) nothing more is launched.
        """
        record = self.running_record()
        if record is None:
            return []
        revived = []
        for index, worker in enumerate(record.workers):
            url = worker.url
            with self._lock:
                if url in self._reviving or record_matches_process(worker.record):
                    continue
                self._reviving.add(url)
            try:
                fresh = self._relaunch(spec, index, worker, on_log, guard or _allowed)
                if fresh is None:
                    break
                try:
                    self._wait_worker(spec, fresh, timeout_s, on_log)
                except Exception as exc:  # noqa: BLE001 - reported; the group serves on with the others
                    on_log(f"Worker on GPU {worker.gpu} did not come back: {exc}")
                    continue
                on_log(
                    f"Worker on GPU {worker.gpu} healthy again (pid {fresh.record.pid}); the router "
                    "re-admits it."
                )
                revived.append(url)
            finally:
                with self._lock:
                    self._reviving.discard(url)
        return revived

    def _relaunch(
        self,
        spec: ServeSpec,
        index: int,
        worker: WorkerRecord,
        on_log: LogCallback,
        guard: Callable[[], AbstractContextManager[bool]],
    ) -> WorkerRecord | None:
        """Launch a dead worker again and put it in the record, under ``guard``; None when refused."""
        with guard() as allowed:
            if not allowed or self._cancel.is_set():
                return None
            old = self._popens.pop(worker.record.pid, None)
            if old is not None:
                old.poll()  # reap the zombie; never signal it
            on_log(
                f"Worker on GPU {worker.gpu} ({worker.url}, pid {worker.record.pid}) is gone; starting it "
                "again."
            )
            fresh = self._launch_worker(spec, worker.gpu, worker.record.port, on_log)
            with self._lock:
                current = self.record()
                if current is None:  # stopped meanwhile: nothing may outlive the stop
                    self._terminate(fresh.record, 5.0)
                    return None
                workers = list(current.workers)
                if index < len(workers):
                    workers[index] = fresh
                save_group_record(self._paths, dataclasses.replace(current, workers=tuple(workers)))
            return fresh

    def wait_routable(self, *, timeout_s: float, on_log: LogCallback = _ignore) -> None:
        """Wait until the running router sees every worker routable (after a revive or an add).

        Raises:
            ServerError: no group runs. BootTimeout / ServerStartError: as in a start.
        """
        record = self.running_record()
        if record is None or record.router is None:
            raise ServerError(
                "No server group of omni-web is running; start one first (server start --gpus ...)."
            )
        expected = len(record.workers) + len(record.remote_urls)
        self._wait_routable(record.router, expected, self._launch.clock() + timeout_s, on_log)

    def add_remote(self, url: str, entry: CatalogEntry) -> str:
        """Check ``url`` and add it to the running group's router; returns its base URL.

        Raises:
            ServerError: no group runs, or the worker failed its check, or the router refused it.
        """
        record = self.running_record()
        if record is None or record.router is None:
            raise ServerError(
                "No server group of omni-web is running; start one first (server start --gpus ...)."
            )
        base = check_remote_worker(url, entry)
        add_worker(record.router.base_url, base)
        with self._lock:
            current = self.record() or record
            if base not in current.remote_urls:
                save_group_record(
                    self._paths, dataclasses.replace(current, remote_urls=(*current.remote_urls, base))
                )
        return base

    def remove_remote(self, url: str) -> bool:
        """Take a remote worker out of the running group's router (the remote server keeps running)."""
        record = self.running_record()
        if record is None or record.router is None:
            return False
        base = url.rstrip("/")
        removed = remove_worker(record.router.base_url, base)
        with self._lock:
            current = self.record() or record
            save_group_record(
                self._paths,
                dataclasses.replace(current, remote_urls=tuple(u for u in current.remote_urls if u != base)),
            )
        return removed

    # --- status ---------------------------------------------------------------------------------

    def router_health(self) -> RouterHealth | None:
        """The running router's ``/health``, or None (not running, or no answer)."""
        record = self.running_record()
        if record is None or record.router is None:
            return None
        return read_router_health(record.router.base_url, timeout_s=self._launch.probe_timeout_s)

    def members(self, record: GroupRecord, health: RouterHealth | None) -> tuple[GroupMember, ...]:
        """The router and each worker as status rows (see :func:`omni_web.server.group_status.member_rows`)."""
        with self._lock:
            reviving = set(self._reviving)
        return member_rows(record, health, reviving)
