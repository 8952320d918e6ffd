"""The one owner of the managed `sgl-omni serve` process, and the one-model-per-server policy.

:class:`ServerManager` follows jupyter_client's ``KernelManager``: the argv is planned first
(:mod:`omni_web.server.spec`), the child is launched in its own session with a log file per start
(:mod:`omni_web.server.process`), the boot is watched until ``/health`` says 200 ``healthy``, and
pid + process start time + model + port are recorded in the data root
(:mod:`omni_web.server.record`). Stop is polite then forced (SIGTERM to the group, SIGKILL after a
grace period), and only ever for a process the record proves this app started.

:meth:`ServerManager.ensure_serving` is the policy a run calls: a remote URL is used when it hosts
the model; a server of ours with another model is restarted; a foreign server at the endpoint is
used as-is (and left running) when it hosts the model, and refused otherwise; else ours starts.
"""

from __future__ import annotations

import contextlib
import shlex
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from omni_web.catalog import CatalogEntry
from omni_web.client import SpeechClient
from omni_web.errors import (
    BackendError,
    BootTimeout,
    ForeignServer,
    OmniWebError,
    PortTaken,
    ServerError,
    ServerNotRunning,
    ServerStartError,
    internal_error_message,
)
from omni_web.gpu import GpuProbe, probe_gpus
from omni_web.paths import DataPaths
from omni_web.server.boot import (
    new_log_path,
    port_accepts,
    wait_until_healthy,
    watcher_at_end,
    write_log_header,
)
from omni_web.server.bootlog import BootLogWatcher
from omni_web.server.capacity import worker_batch
from omni_web.server.discovery import EndpointProbe, catalog_key_for, hosted_model_id, probe_endpoint
from omni_web.server.gpus import GpuSelection, select_gpus
from omni_web.server.group import GroupRecord, ServerGroup, group_pids
from omni_web.server.process import launch, terminate_group
from omni_web.server.record import (
    ServerRecord,
    clear_record,
    load_record,
    process_info,
    record_matches_process,
    save_record,
)
from omni_web.server.serving import STOPPED_MID_JOB, ForeignServing, GroupServing, Serving, SingleServing
from omni_web.server.spec import ServeSpec, build_argv, build_serve_spec, client_host, shell_command
from omni_web.server.status import Endpoint, ServerState, ServerStatus
from omni_web.settings import Settings

__all__ = ["ServerManager"]

_STRICT_PORT_ENV = {"SGLANG_OMNI_STRICT_PORT": "1"}
# Python children flush stdout per line, so the boot log shows progress as it happens.
_CHILD_ENV = {"PYTHONUNBUFFERED": "1"}
# After a crash the dead server's port can stay held for a moment (its stage processes exit).
_PORT_RELEASE_S = 15.0

LogCallback = Callable[[str], None]


def _ignore(_line: str) -> None:
    """The default boot-output sink."""


class ServerManager:
    """Starts, watches, finds again and stops the app's `sgl-omni serve` process.

    Args:
        paths: the data root (backend venv, logs, server record).
        settings: host, port, start timeout, ``mem_fraction_static``, remote URL.
        client_factory: builds the probe client; called as ``factory(base_url, timeout_s=…,
            connect_retries=0)``.
        clock, sleep: injectable time (monotonic seconds) for the boot wait.
        before_start: called with the catalog entry right before a launch (e.g. to install the
            model's companion packages); its errors abort the start.
        strict_port: set ``SGLANG_OMNI_STRICT_PORT=1`` for the child (True by default), so a busy
            port fails the boot instead of moving the server.
        poll_interval_s: how often the boot wait polls ``/health``.
        probe_timeout_s: timeout of one health or models request.
    """

    def __init__(
        self,
        paths: DataPaths,
        settings: Settings,
        *,
        client_factory: Callable[..., SpeechClient] = SpeechClient,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        before_start: Callable[[CatalogEntry], None] | None = None,
        strict_port: bool = True,
        poll_interval_s: float = 1.0,
        probe_timeout_s: float = 5.0,
        gpu_probe: Callable[[], GpuProbe] = probe_gpus,
    ) -> None:
        self._paths = paths
        self._gpu_probe = gpu_probe
        # Two or more GPUs (or remote workers) are served by a group behind the router.
        self._group = ServerGroup(
            paths,
            client_factory=client_factory,
            before_start=before_start,
            strict_port=strict_port,
            poll_interval_s=poll_interval_s,
            probe_timeout_s=probe_timeout_s,
            clock=clock,
            sleep=sleep,
        )
        self._group_spec: ServeSpec | None = None  # the last group start's spec (for revive/restart)
        self._settings = settings
        self._client_factory = client_factory
        self._clock = clock
        self._sleep = sleep
        self._before_start = before_start
        self._strict_port = strict_port
        self._poll_interval_s = poll_interval_s
        self._probe_timeout_s = probe_timeout_s
        self._lock = threading.RLock()  # guards the fields below; held only briefly
        self._op_lock = threading.Lock()  # one start / ensure_serving at a time
        self._cancel = threading.Event()  # set by stop() to abort a boot in progress
        self._state = ServerState.STOPPED
        self._message = ""
        self._popen: subprocess.Popen[bytes] | None = None
        self._pending_spec: ServeSpec | None = None  # the start in progress, before it has a record
        self._last_spec: ServeSpec | None = None
        self._stop_requested = False  # set by stop(), cleared by the next start
        self._last_look: tuple[float, tuple[object, ...], ServerStatus] | None = None  # for status(max_age_s=)

    # --- configuration --------------------------------------------------------------------------

    @property
    def settings(self) -> Settings:
        """The settings in use."""
        with self._lock:
            return self._settings

    def use_settings(self, settings: Settings) -> None:
        """Use new settings from the next operation on (a running server is not touched)."""
        with self._lock:
            self._settings = settings

    @property
    def sgl_omni(self) -> Path:
        """The backend's ``sgl-omni`` executable."""
        return self._paths.backend_venv / "bin" / "sgl-omni"

    def build_spec(
        self, entry: CatalogEntry, *, compute_capability: tuple[int, int] | None = None, port: int | None = None
    ) -> ServeSpec:
        """The spec a start of ``entry`` would use with the current settings."""
        return build_serve_spec(entry, settings=self.settings, compute_capability=compute_capability, port=port)

    def command_line(self, spec: ServeSpec, *, with_env: bool = False) -> str:
        """The exact shell-quoted command a start of ``spec`` runs.

        ``with_env`` puts the environment this manager adds that changes how the server behaves
        (``SGLANG_OMNI_STRICT_PORT=1`` when ``strict_port``) in front, for a start by hand.
        """
        line = shell_command(build_argv(spec, sgl_omni=self.sgl_omni))
        if with_env and self._strict_port:
            line = " ".join(f"{name}={shlex.quote(value)}" for name, value in _STRICT_PORT_ENV.items()) + " " + line
        return line

    # --- queries --------------------------------------------------------------------------------

    @property
    def group(self) -> ServerGroup:
        """The owner of a multi-GPU group (router + one worker per GPU)."""
        return self._group

    def gpu_selection(self, entry: CatalogEntry, gpus: str | None = None) -> GpuSelection:
        """The GPUs a start of ``entry`` uses: ``gpus`` (CLI ``--gpus``) or the setting, checked by NVML."""
        return select_gpus(self.settings.gpus if gpus is None else gpus, entry, self._gpu_probe())

    def owned_record(self) -> ServerRecord | None:
        """The record of a live process this app started, or None (a stale record is ignored).

        For a group this is the router's record: the one endpoint clients use.
        """
        group = self._group.running_record()
        if group is not None:
            return group.router
        record = load_record(self._paths)
        return record if record is not None and record_matches_process(record) else None

    @property
    def stop_requested(self) -> bool:
        """True after :meth:`stop` until the next start: the server is down on purpose."""
        with self._lock:
            return self._stop_requested

    def is_alive(self) -> bool:
        """True when the process this app started is alive (asks the OS, not a flag)."""
        return self.owned_record() is not None

    def status(self, *, max_age_s: float = 0.0) -> ServerStatus:
        """What serves now: the remote URL, our recorded process, or a foreign server on the port.

        ``max_age_s`` lets pollers share one look: a status taken at most that long ago is
        returned again while nothing this manager knows has changed (settings, a start, a stop,
        a failure), so every open page polling the Server tab costs one probe per interval.
        """
        self._notice_exit()
        with self._lock:
            known = (self._settings, self._state, self._message, self._pending_spec, self._stop_requested, self._popen)
            last = self._last_look
        if max_age_s > 0 and last is not None and last[1] == known and time.monotonic() - last[0] <= max_age_s:
            return last[2]
        status = self._look()
        with self._lock:
            self._last_look = (time.monotonic(), known, status)
        return status

    def _look(self) -> ServerStatus:
        settings = self.settings
        if settings.remote_url:
            return self._foreign_status(self._probe(settings.remote_url), remote=True)
        with self._lock:
            state, message, pending = self._state, self._message, self._pending_spec
        group = self._group.record()
        if group is not None and (group_pids(group) or state is ServerState.STARTING):
            return self._group_status(group, state)  # also when only workers outlived the router
        record = load_record(self._paths)
        if record is not None and record_matches_process(record):
            return self._own_status(record, state)
        if state is ServerState.STARTING and pending is not None:
            # Preparing (companion packages) or launching: no process to probe yet.
            return ServerStatus(
                state=ServerState.STARTING,
                endpoint=pending.base_url,
                model_key=pending.model_key,
                tag=pending.tag,
                owned=True,
                message="Preparing the server start.",
            )
        if record is not None:
            clear_record(self._paths)  # the process is gone; the record proves nothing any more
        base_url = f"http://{client_host(settings.server_host)}:{settings.server_port}"
        probe = self._probe(base_url)
        if probe.reachable:
            return self._foreign_status(probe, remote=False)
        if state is ServerState.FAILED:
            return ServerStatus(state=ServerState.FAILED, endpoint=probe.base_url, message=message)
        return ServerStatus(state=ServerState.STOPPED, endpoint=probe.base_url)

    def _notice_exit(self) -> None:
        """Turn an unexpected exit of our healthy child into FAILED with its exit code and log."""
        with self._lock:
            popen, state = self._popen, self._state
            if popen is None or state is not ServerState.HEALTHY:
                return
            code = popen.poll()
            if code is None:
                return
            record = load_record(self._paths)
            log = f"; see its log {record.log_path}" if record is not None else ""
            self._state, self._popen = ServerState.FAILED, None
            self._message = f"The server (pid {popen.pid}) exited unexpectedly with code {code}{log}."

    def _group_status(self, group: GroupRecord, state: ServerState) -> ServerStatus:
        health = self._group.router_health()
        members = self._group.members(group, health)
        router = group.router
        if state is ServerState.STOPPING:
            shown = ServerState.STOPPING
        elif health is None:
            shown = ServerState.STARTING
        elif health.routable_workers > 0 and health.http_status == 200:
            shown = ServerState.HEALTHY if state is not ServerState.STARTING else ServerState.STARTING
        else:
            shown = ServerState.FAILED if state is not ServerState.STARTING else ServerState.STARTING
        message = ""
        if health is not None and not health.all_routable:
            down = [m for m in members[1:] if m.state != "healthy"]
            message = f"{health.routable_workers} of {health.total_workers} workers routable" + (
                ": " + ", ".join(f"{m.role} {m.gpu or m.url} {m.state}" for m in down) if down else ""
            ) + "."
        return ServerStatus(
            state=shown,
            endpoint=router.base_url if router is not None else "",
            model_key=group.model_key,
            tag=group.tag,
            pid=router.pid if router is not None else None,
            owned=True,
            log_path=router.log_path if router is not None else None,
            message=message,
            members=members,
        )

    def _own_status(self, record: ServerRecord, state: ServerState) -> ServerStatus:
        probe = self._probe(record.base_url)
        if state is ServerState.STOPPING:
            shown = ServerState.STOPPING
        else:
            shown = probe.state if probe.reachable else ServerState.STARTING
        return ServerStatus(
            state=shown,
            endpoint=record.base_url,
            model_key=record.model_key,
            tag=record.tag,
            model_ids=probe.model_ids,
            pid=record.pid,
            owned=True,
            log_path=record.log_path,
            message="The server reports 'unhealthy'; see its log." if shown is ServerState.FAILED else "",
        )

    @staticmethod
    def _foreign_status(probe: EndpointProbe, *, remote: bool) -> ServerStatus:
        message = ""
        if remote and not probe.reachable:
            message = f"Nothing answers at the remote URL {probe.base_url}; check Settings (CLI: --api-url)."
        return ServerStatus(
            state=probe.state,
            endpoint=probe.base_url,
            model_key=catalog_key_for(probe.model_ids),
            model_ids=probe.model_ids,
            owned=False,
            remote=remote,
            message=message,
        )

    def _probe(self, base_url: str) -> EndpointProbe:
        return probe_endpoint(base_url, client_factory=self._client_factory, timeout_s=self._probe_timeout_s)

    # --- the one-model policy -------------------------------------------------------------------

    def ensure_serving(
        self,
        entry: CatalogEntry,
        *,
        compute_capability: tuple[int, int] | None = None,
        port: int | None = None,
        timeout_s: float | None = None,
        on_log: LogCallback | None = None,
        gpus: str | None = None,
        api_url: str | None = None,
    ) -> Serving:
        """A :class:`~omni_web.server.serving.Serving` that hosts ``entry``, starting or restarting ours if needed.

        ``api_url`` (CLI ``--api-url``) or the remote-URL setting names a foreign server to use.
        ``gpus`` (``all`` or ids like ``0,2``; default: the setting) picks the GPUs; two or more,
        or any worker URL in the settings, make it a group behind the router.

        Raises:
            ForeignServer: a server this app did not start (or the remote URL) hosts another model.
            ServerNotRunning: the remote URL or a foreign server does not answer healthy.
            PortTaken, ServerStartError, BootTimeout, BackendError: our start failed.
        """
        settings = self.settings
        remote = api_url or settings.remote_url
        if remote:
            return self._foreign(entry, self._use_foreign(entry, self._probe(remote), remote=True))
        if compute_capability is None:
            compute_capability = self._gpu_probe().compute_capability
        spec = self.build_spec(entry, compute_capability=compute_capability, port=port)
        selection = self.gpu_selection(entry, gpus)
        running = self._group.running_record()
        if (
            running is not None
            and gpus is None
            and not settings.gpus.strip()
            and running.model_key == entry.key
            and running.router is not None
            and running.router.port == spec.port
        ):
            # No explicit GPU choice: our running group for this model is used as it is.
            selection = GpuSelection(ids=tuple(int(g) if g.isdigit() else 0 for g in running.gpus))
        if selection.is_group or settings.worker_url_list:
            with self._op_lock:
                self._start_group_locked(spec, selection, timeout_s=timeout_s, on_log=on_log or _ignore)
            endpoint = Endpoint(
                base_url=spec.base_url, model_key=entry.key, model_id=entry.repo_id, owned=True, tag=spec.tag, group=True
            )
            return GroupServing(self, endpoint, batch=worker_batch(entry, settings), patience_s=settings.start_timeout_s)
        with self._op_lock:
            if self._group.record() is not None:
                self._stop_group(grace_s=10.0)  # one GPU now: back to a single server
            if self.owned_record() is None:
                probe = self._probe(spec.base_url)
                if probe.reachable:
                    return self._foreign(entry, self._use_foreign(entry, probe, remote=False))
            status = self._start_locked(spec, timeout_s=timeout_s, on_log=on_log or _ignore)
        model_id = hosted_model_id(entry, status.model_ids) or entry.repo_id
        endpoint = Endpoint(base_url=status.endpoint, model_key=entry.key, model_id=model_id, owned=True, tag=status.tag)
        return SingleServing(self, endpoint)

    def _foreign(self, entry: CatalogEntry, endpoint: Endpoint) -> ForeignServing:
        settings = self.settings
        return ForeignServing(endpoint, patience_s=settings.remote_patience_s, batch=worker_batch(entry, settings))

    @staticmethod
    def _use_foreign(entry: CatalogEntry, probe: EndpointProbe, *, remote: bool) -> Endpoint:
        where = "remote server" if remote else "server (not started by omni-web)"
        if not probe.reachable:
            raise ServerNotRunning(
                f"Nothing answers at the {where} {probe.base_url}. Start it, or fix the URL in Settings "
                "(CLI: --api-url)."
            )
        model_id = hosted_model_id(entry, probe.model_ids)
        if model_id is None:
            hosted = ", ".join(probe.model_ids) or "no model it would name"
            raise ForeignServer(probe.base_url, hosted_model=hosted, wanted_model=entry.key)
        if not probe.healthy:
            raise ServerNotRunning(
                f"The {where} at {probe.base_url} hosts {entry.label} but is not ready "
                f"(/health: {probe.status or 'no answer'}, HTTP {probe.http_status}). Wait until it "
                "is healthy, then try again."
            )
        return Endpoint(base_url=probe.base_url, model_key=entry.key, model_id=model_id, owned=False)

    # --- start ----------------------------------------------------------------------------------

    def start(
        self,
        entry: CatalogEntry,
        *,
        compute_capability: tuple[int, int] | None = None,
        port: int | None = None,
        timeout_s: float | None = None,
        on_log: LogCallback | None = None,
        gpus: str | None = None,
    ) -> ServerStatus:
        """Make our server host ``entry`` and return once ``/health`` is 200 ``healthy``.

        Our server already hosting ``entry`` on that port is reused (waiting for it if it still
        boots); ours with another model or port is stopped first. ``on_log`` receives the boot
        output: why a config was chosen, the command, then each server log line.

        Raises:
            BackendError: ``sgl-omni`` is not installed, or cannot be run.
            PortTaken: the port is held (before launch, or seen in the boot log); names both ports.
            ServerStartError: the process died during boot (exit code, log path, last log lines).
            BootTimeout: not healthy within ``timeout_s`` (default: the start-timeout setting).
        """
        spec = self.build_spec(entry, compute_capability=compute_capability, port=port)
        selection = self.gpu_selection(entry, gpus)
        with self._op_lock:
            if selection.is_group or self.settings.worker_url_list:
                return self._start_group_locked(spec, selection, timeout_s=timeout_s, on_log=on_log or _ignore)
            if self._group.record() is not None:
                self._stop_group(grace_s=10.0)
            return self._start_locked(spec, timeout_s=timeout_s, on_log=on_log or _ignore)

    # --- the group (router + one worker per GPU) ------------------------------------------------

    def _start_group_locked(
        self, spec: ServeSpec, selection: GpuSelection, *, timeout_s: float | None, on_log: LogCallback,
        unless_stopped: bool = False,
    ) -> ServerStatus:
        """Start (or reuse, reviving dead workers) the group for ``spec`` on the selected GPUs.

        ``unless_stopped`` (a restart after a crash) refuses after a Stop, read and cleared under
        the lock :meth:`stop` sets it under, together with the group's cancel flag.
        """
        settings = self.settings
        remotes = settings.worker_url_list
        timeout = settings.start_timeout_s if timeout_s is None else timeout_s
        with self._lock:
            if unless_stopped:
                self.refuse_if_stopped()
            self._group.arm()
            self._stop_requested = False
            self._state, self._message, self._pending_spec = ServerState.STARTING, "", spec
        try:
            for warning in selection.warnings:
                on_log(f"warning: {warning}")
            running = self._group.running_record()
            wanted_gpus = tuple(str(i) for i in selection.ids)
            if running is not None and (
                running.model_key == spec.model_key
                and running.tag == spec.tag
                and running.router is not None
                and running.router.port == spec.port
                and running.gpus == wanted_gpus
            ):
                on_log(f"Using the running server group for {spec.model_label} (router pid {running.router.pid}).")
                with self._lock:
                    self._group_spec = spec
                self._group.revive(spec, timeout_s=timeout, on_log=on_log)
                for url in remotes:
                    if url not in running.remote_urls:
                        self._group.add_remote(url, spec.entry)
                try:
                    self._group.wait_routable(timeout_s=min(timeout, 60.0), on_log=on_log)
                except BootTimeout as exc:  # a worker still down must not stop the job: the router skips it
                    on_log(f"warning: not every worker is routable; serving with the others. {exc}")
            else:
                if self._group.record() is not None:
                    on_log("Stopping the running server group to start another.")
                    self._group.stop(grace_s=10.0)
                single = load_record(self._paths)
                if single is not None and record_matches_process(single):
                    on_log(f"Stopping the server for {single.model_label} (pid {single.pid}) to start a group.")
                    self._terminate(single, grace_s=10.0, final_state=ServerState.STARTING)
                self._group.start(spec, selection.ids, remote_urls=remotes, timeout_s=timeout, on_log=on_log)
                with self._lock:
                    self._group_spec = spec
        except BaseException as exc:
            with self._lock:
                self._state = ServerState.FAILED
                self._message = _failure_message(exc)
            raise
        finally:
            with self._lock:
                self._pending_spec = None
        with self._lock:
            self._state, self._message, self._last_spec = ServerState.HEALTHY, "", spec
        return self.status()

    def revive_group_workers(self, *, on_log: LogCallback | None = None) -> list[str]:
        """Start again the group's managed workers that died (never after a Stop); their URLs.

        Each launch is decided under the lock :meth:`stop` takes, so a Stop either comes first (no
        launch) or finds the new worker in the record and stops it too.
        """
        with self._lock:
            spec = self._group_spec or self._last_spec
        if spec is None:
            return []
        return self._group.revive(spec, timeout_s=self.settings.start_timeout_s, on_log=on_log or _ignore,
                                  guard=self._unless_stopped)

    @contextlib.contextmanager
    def _unless_stopped(self) -> Iterator[bool]:
        """Hold the manager's lock; yields False when the user has stopped the server."""
        with self._lock:
            yield not self._stop_requested

    def dead_group_workers(self) -> list[int]:
        """Pids of our group's managed workers whose process is gone (not yet started again)."""
        record = self._group.record()
        if record is None:
            return []
        return [w.record.pid for w in record.workers if not record_matches_process(w.record)]

    def _stop_group(self, *, grace_s: float) -> bool:
        with self._lock:
            self._state = ServerState.STOPPING
        try:
            return self._group.stop(grace_s=grace_s)
        finally:
            with self._lock:
                self._state, self._message = ServerState.STOPPED, ""

    def restart(
        self, *, timeout_s: float | None = None, on_log: LogCallback | None = None, unless_stopped: bool = False
    ) -> ServerStatus:
        """Stop our server and start the last spec again (same model, config, port).

        ``unless_stopped`` (a restart after a crash) refuses with :class:`ServerNotRunning` when the
        user stopped the server, checked under the same lock :meth:`stop` takes, so a Stop that
        arrives while the restart is being decided is never lost: it either refuses the restart or
        aborts its boot.
        """
        with self._lock:
            spec = self._last_spec
        if spec is None:
            raise ServerError("Cannot restart the server: this app has not started one. Start it with a model first.")
        with self._op_lock:
            if unless_stopped:
                self.refuse_if_stopped()
            group = self._group.record()
            if group is not None:
                self._group.stop(grace_s=10.0)
                gpus = ",".join(w.gpu for w in group.workers) or None
                return self._start_group_locked(
                    spec, self.gpu_selection(spec.entry, gpus), timeout_s=timeout_s, on_log=on_log or _ignore,
                    unless_stopped=unless_stopped,
                )
            record = self.owned_record()
            if record is not None:
                self._terminate(record, grace_s=10.0)
            self._wait_port_released(spec)
            return self._start_locked(spec, timeout_s=timeout_s, on_log=on_log or _ignore,
                                      unless_stopped=unless_stopped)

    def _wait_port_released(self, spec: ServeSpec) -> None:
        """Give the port of a server that just died a moment to close (bounded); PortTaken comes later."""
        host = client_host(spec.host).strip("[]")
        deadline = time.monotonic() + _PORT_RELEASE_S
        while port_accepts(host, spec.port, timeout_s=0.5) and time.monotonic() < deadline:
            time.sleep(0.2)

    def refuse_if_stopped(self) -> None:
        """Raise :class:`ServerNotRunning` when the user has stopped the server (read under the lock)."""
        with self._lock:
            if self._stop_requested:
                raise ServerNotRunning(STOPPED_MID_JOB)

    def _start_locked(
        self, spec: ServeSpec, *, timeout_s: float | None, on_log: LogCallback, unless_stopped: bool = False
    ) -> ServerStatus:
        with self._lock:
            if unless_stopped and self._stop_requested:
                self.refuse_if_stopped()
            # Cleared together under the lock stop() sets them under: a stop is before or after.
            self._stop_requested = False
            self._cancel.clear()
        timeout = self.settings.start_timeout_s if timeout_s is None else timeout_s
        with self._lock:
            self._state, self._message, self._pending_spec = ServerState.STARTING, "", spec
        try:
            record = self.owned_record()
            if record is not None and _same_server(record, spec):
                on_log(f"Using the running server for {record.model_label} (pid {record.pid}).")
                with self._lock:
                    popen = self._popen if self._popen is not None and self._popen.pid == record.pid else None
                watcher = watcher_at_end(record.log_path)
                self._wait_healthy(spec, record, popen, watcher, timeout, on_log)
                return self._mark_healthy(spec)
            if record is not None:
                on_log(f"Stopping the server for {record.model_label} (pid {record.pid}) to start {spec.model_label}.")
                self._terminate(record, grace_s=10.0, final_state=ServerState.STARTING)
            return self._launch_and_wait(spec, timeout, on_log)
        except BaseException as exc:
            with self._lock:
                cancelled = self._cancel.is_set()
                self._state = ServerState.STOPPED if cancelled else ServerState.FAILED
                self._message = "" if cancelled else _failure_message(exc)
            raise
        finally:
            with self._lock:
                self._pending_spec = None

    def _preflight(self, spec: ServeSpec) -> None:
        """Refuse a start that cannot work, before anything runs."""
        if not self.sgl_omni.exists():
            raise BackendError(
                "The SGLang-Omni backend is not installed. Install it in the Setup tab "
                "(CLI: python -m omni_web setup)."
            )
        if spec.config_path is not None and not spec.config_path.is_file():
            raise ServerStartError(
                f"The serve config {spec.config_path} is missing. Restore it (git checkout configs/) "
                "and start again."
            )
        if port_accepts(client_host(spec.host).strip("[]"), spec.port):
            # Something already listens there; a health poll would reach it instead of our server.
            raise PortTaken(spec.port, host=spec.host)

    def _launch_and_wait(self, spec: ServeSpec, timeout_s: float, on_log: LogCallback) -> ServerStatus:
        self._preflight(spec)
        if self._before_start is not None:
            self._before_start(spec.entry)
        if self._cancel.is_set():
            raise ServerStartError("The server start was cancelled.")
        argv = build_argv(spec, sgl_omni=self.sgl_omni)
        log_path = new_log_path(self._paths.logs_dir, spec.model_key)
        offset = write_log_header(log_path, spec, argv, strict_port=self._strict_port)
        for note in spec.notes:
            on_log(note)
        on_log(f"Starting {spec.model_label}: {shell_command(argv)}")
        on_log(f"Log: {log_path}")
        env = dict(_CHILD_ENV, **(_STRICT_PORT_ENV if self._strict_port else {}))
        popen = launch(argv, log_path=log_path, env_extra=env, cwd=self._paths.root)
        info = process_info(popen.pid)
        record = ServerRecord(
            pid=popen.pid,
            pgid=info.pgid if info is not None else popen.pid,
            start_ticks=info.start_ticks if info is not None else 0,
            model_key=spec.model_key,
            repo_id=spec.model_path,
            host=spec.host,
            port=spec.port,
            log_path=log_path,
            argv=tuple(argv),
            tag=spec.tag,
            started_at=time.time(),
        )
        save_record(self._paths, record)
        with self._lock:
            self._popen, self._last_spec = popen, spec
        self._wait_healthy(spec, record, popen, BootLogWatcher(log_path, offset=offset), timeout_s, on_log)
        on_log(f"Server healthy at {spec.base_url} (pid {popen.pid}, {spec.model_label}).")
        return self._mark_healthy(spec)

    def _mark_healthy(self, spec: ServeSpec) -> ServerStatus:
        with self._lock:
            self._state, self._message, self._last_spec = ServerState.HEALTHY, "", spec
        return self.status()

    # --- the boot wait --------------------------------------------------------------------------

    def _wait_healthy(
        self,
        spec: ServeSpec,
        record: ServerRecord,
        popen: subprocess.Popen[bytes] | None,
        watcher: BootLogWatcher,
        timeout_s: float,
        on_log: LogCallback,
    ) -> None:
        """Wait for ``/health`` 200 ``healthy``; on any failure stop the process, then raise."""
        client = self._client_factory(spec.base_url, timeout_s=self._probe_timeout_s, connect_retries=0)
        try:
            wait_until_healthy(
                spec,
                record,
                popen=popen,
                watcher=watcher,
                client=client,
                timeout_s=timeout_s,
                on_log=on_log,
                cancelled=self._cancel.is_set,
                clock=self._clock,
                sleep=self._sleep,
                poll_interval_s=self._poll_interval_s,
                probe_timeout_s=self._probe_timeout_s,
            )
        except BaseException:  # includes KeyboardInterrupt: never leave a half-booted server
            self._abort_boot(record, popen)
            raise
        finally:
            client.close()

    def _abort_boot(self, record: ServerRecord, popen: subprocess.Popen[bytes] | None) -> None:
        """Stop the process whose boot failed (it is ours: we launched or verified it) and forget it."""
        if popen is not None or record_matches_process(record):
            terminate_group(record.pgid, leader=popen, grace_s=10.0)
        clear_record(self._paths)
        with self._lock:
            if self._popen is popen:
                self._popen = None

    # --- stop -----------------------------------------------------------------------------------

    def stop(self, grace_s: float = 10.0) -> bool:
        """Stop the server this app started: SIGTERM to its group, SIGKILL after ``grace_s``.

        A boot in progress is aborted. A server this app did not start is never signalled.

        Returns:
            True when a process of ours was stopped; False when none was running.
        """
        with self._lock:
            self._cancel.set()
            self._stop_requested = True
        self._group.cancel()
        if self._group.record() is not None:
            return self._stop_group(grace_s=grace_s)
        record = load_record(self._paths)
        if record is None or not record_matches_process(record):
            if record is not None:
                clear_record(self._paths)
            with self._lock:
                if self._state is not ServerState.STARTING:
                    self._state, self._message = ServerState.STOPPED, ""
            return False
        self._terminate(record, grace_s=grace_s)
        return True

    def stop_before_removing(self, model_key: str, *, log: LogCallback | None = None) -> bool:
        """Stop our server when it hosts ``model_key``, whose weights are about to be deleted.

        A server this app did not start is never stopped. Returns True when ours was stopped.
        """
        record = self.owned_record()
        if record is None or record.model_key != model_key:
            return False
        (log or _ignore)(f"Stopping the managed server hosting {model_key} (pid {record.pid}) before removing it.")
        return self.stop()

    def _terminate(
        self, record: ServerRecord, *, grace_s: float, final_state: ServerState = ServerState.STOPPED
    ) -> None:
        """Stop a process the caller has proven is ours, and forget it."""
        with self._lock:
            popen = self._popen if self._popen is not None and self._popen.pid == record.pid else None
            self._state = ServerState.STOPPING
        try:
            terminate_group(record.pgid, leader=popen, grace_s=grace_s)
        finally:
            clear_record(self._paths)
            with self._lock:
                self._state, self._message = final_state, ""
                if popen is not None:
                    self._popen = None


def _failure_message(exc: BaseException) -> str:
    """What the status line says after a failed start: our errors say it themselves; others are bugs."""
    if isinstance(exc, OmniWebError):
        return str(exc)
    if not isinstance(exc, Exception):  # KeyboardInterrupt, SystemExit
        return "The server start was interrupted."
    return internal_error_message(exc)  # the caller (task runner, CLI) logs or prints the traceback


def _same_server(record: ServerRecord, spec: ServeSpec) -> bool:
    """True when the recorded server runs what ``spec`` asks for (model, config choice, address)."""
    return (
        record.model_key == spec.model_key
        and record.tag == spec.tag
        and record.host == spec.host
        and record.port == spec.port
    )
