"""The one-model-per-server policy: which server a job gets, and our server's start, restart and stop.

:meth:`ServerManager.ensure_serving` is what a run calls: a remote URL is used when it hosts the
model; a server of ours with another model is restarted; a foreign server at the endpoint is used
as-is (and left running) when it hosts the model, and refused otherwise; else ours starts (one
server, or a group behind the router for two or more GPUs). It returns the job's
:class:`~omni_web.server.serving.Serving` handle.

The process lifecycles are apart: :mod:`omni_web.server.single` for one `sgl-omni serve`,
:mod:`omni_web.server.group` for the router and its workers; the state both report goes through
one guarded transition (:mod:`omni_web.server.lifecycle`), whose lock also guards the Stop flag.
"""

from __future__ import annotations

import shlex
import threading
import time
from collections.abc import Callable
from pathlib import Path

from omni_web.catalog import CatalogEntry
from omni_web.client import SpeechClient
from omni_web.errors import BootTimeout, ServerError, ServerStartError
from omni_web.gpu import GpuProbe, probe_gpus
from omni_web.paths import DataPaths
from omni_web.server.boot import LaunchOptions
from omni_web.server.capacity import worker_batch
from omni_web.server.discovery import EndpointProbe, foreign_endpoint, hosted_model_id, probe_endpoint
from omni_web.server.fleet import RemoteFleet
from omni_web.server.gpus import GpuSelection, select_gpus
from omni_web.server.group import ServerGroup, group_pids
from omni_web.server.lifecycle import ServerLifecycle
from omni_web.server.looks import foreign_status, group_status, own_status
from omni_web.server.record import ServerRecord, clear_record, load_record, record_matches_process
from omni_web.server.serving import ForeignServing, GroupServing, Serving, SingleServing
from omni_web.server.single import STRICT_PORT_ENV, SingleProcess
from omni_web.server.spec import ServeSpec, build_argv, build_serve_spec, client_host, shell_command
from omni_web.server.status import Endpoint, ServerState, ServerStatus
from omni_web.settings import Settings

__all__ = ["ServerManager"]

LogCallback = Callable[[str], None]


def _ignore(_line: str) -> None:
    """The default boot-output sink."""


class ServerManager:
    """Starts, watches, finds again and stops the app's `sgl-omni serve` (or group), one model at a time.

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
        fleet: other machines' workers for the group (a farm): see :class:`RemoteFleet`.
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
        fleet: RemoteFleet | None = None,
    ) -> None:
        self._paths = paths
        self._fleet = fleet or RemoteFleet()
        self._gpu_probe = gpu_probe
        self._settings = settings
        self._client_factory = client_factory
        self._probe_timeout_s = probe_timeout_s
        self._life = ServerLifecycle()
        self._op_lock = threading.Lock()  # one start / ensure_serving at a time
        self._last_look: tuple[float, tuple[object, ...],
                               ServerStatus] | None = None  # for status(max_age_s=)
        options = LaunchOptions(client_factory=client_factory, before_start=before_start,
                                strict_port=strict_port,
                               poll_interval_s=poll_interval_s, probe_timeout_s=probe_timeout_s, clock=clock,
                               sleep=sleep)
        self._single = SingleProcess(paths, self._life, options)
        # Two or more GPUs (or remote workers) are served by a group behind the router.
        self._group = ServerGroup(paths, options)

    # --- configuration --------------------------------------------------------------------------

    @property
    def settings(self) -> Settings:
        """The settings in use."""
        with self._life.lock:
            return self._settings

    def use_settings(self, settings: Settings) -> None:
        """Use new settings from the next operation on (a running server is not touched)."""
        with self._life.lock:
            self._settings = settings

    @property
    def sgl_omni(self) -> Path:
        """The backend's ``sgl-omni`` executable."""
        return self._single.sgl_omni

    def build_spec(
        self, entry: CatalogEntry, *, compute_capability: tuple[int, int] | None = None, port: int | None = None
    ) -> ServeSpec:
        """The spec a start of ``entry`` would use with the current settings (and GPU 0's memory)."""
        vram_gb = self._gpu_probe().vram_gb if entry.throughput_config_file else None
        return build_serve_spec(entry, settings=self.settings, compute_capability=compute_capability, port=port,
                                vram_gb=vram_gb)

    def command_line(self, spec: ServeSpec, *, with_env: bool = False) -> str:
        """The exact shell-quoted command a start of ``spec`` runs.

        ``with_env`` puts the environment this manager adds that changes how the server behaves
        (``SGLANG_OMNI_STRICT_PORT=1`` when ``strict_port``) in front, for a start by hand.
        """
        line = shell_command(build_argv(spec, sgl_omni=self.sgl_omni))
        env = STRICT_PORT_ENV.items() if with_env and self._single.strict_port else ()
        return " ".join([*(f"{name}={shlex.quote(value)}" for name, value in env), line])

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
        return self._single.owned_record()

    @property
    def stop_requested(self) -> bool:
        """True after :meth:`stop` until the next start: the server is down on purpose."""
        return self._life.stop_requested

    def refuse_if_stopped(self) -> None:
        """Raise :class:`ServerNotRunning` when the user has stopped the server (read under the lock)."""
        self._life.refuse_if_stopped()

    def is_alive(self) -> bool:
        """True when the process this app started is alive (asks the OS, not a flag)."""
        return self.owned_record() is not None

    def status(self, *, max_age_s: float = 0.0) -> ServerStatus:
        """What serves now: the remote URL, our recorded process, or a foreign server on the port.

        ``max_age_s`` lets pollers share one look: a status taken at most that long ago is
        returned again while nothing this manager knows has changed (settings, a start, a stop,
        a failure), so every open page polling the Server tab costs one probe per interval.
        """
        self._single.notice_exit()
        with self._life.lock:
            known = (self._settings, *self._life.snapshot())
            last = self._last_look
        if max_age_s > 0 and last is not None and last[1] == known and time.monotonic() - last[0] <= max_age_s:
            return last[2]
        status = self._look()
        with self._life.lock:
            self._last_look = (time.monotonic(), known, status)
        return status

    def _look(self) -> ServerStatus:
        settings = self.settings
        if settings.remote_url:
            return foreign_status(self._probe(settings.remote_url), remote=True)
        state, message = self._life.state, self._life.message
        with self._life.lock:
            pending = self._life.pending_spec
        group = self._group.record()
        if group is not None and (group_pids(group) or state is ServerState.STARTING):
            return group_status(self._group, group, state)  # also when only workers outlived the router
        record = load_record(self._paths)
        if record is not None and record_matches_process(record):
            return own_status(record, state, self._probe(record.base_url))
        if state is ServerState.STARTING and pending is not None:
            # Preparing (companion packages) or launching: no process to probe yet.
            return ServerStatus(state=ServerState.STARTING, endpoint=pending.base_url,
                                model_key=pending.model_key,
                                tag=pending.tag, owned=True, message="Preparing the server start.")
        if record is not None:
            clear_record(self._paths)  # the process is gone; the record proves nothing any more
        base_url = f"http://{client_host(settings.server_host)}:{settings.server_port}"
        probe = self._probe(base_url)
        if probe.reachable:
            return foreign_status(probe, remote=False)
        if state is ServerState.FAILED:
            return ServerStatus(state=ServerState.FAILED, endpoint=probe.base_url, message=message)
        return ServerStatus(state=ServerState.STOPPED, endpoint=probe.base_url)

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
        """A :class:`~omni_web.server.serving.Serving` that hosts ``entry``, starting or restarting ours
        if needed.

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
            return self._foreign(entry, foreign_endpoint(entry, self._probe(remote), remote=True))
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
        if self._wants_group(selection):
            with self._op_lock:
                self._start_group_locked(spec, selection, timeout_s=timeout_s, on_log=on_log or _ignore)
            endpoint = Endpoint(
                base_url=spec.base_url, model_key=entry.key, model_id=entry.repo_id, owned=True, tag=spec.tag,
                group=True
            )
            # Each worker batches what its config says (a throughput profile), else the setting or the catalog.
            batch = settings.concurrency or spec.width or worker_batch(entry, settings)
            return GroupServing(self, endpoint, batch=batch, patience_s=settings.start_timeout_s)
        with self._op_lock:
            if self._group.record() is not None:
                self._stop_group(grace_s=10.0)  # one GPU now: back to a single server
            if self._single.owned_record() is None:
                probe = self._probe(spec.base_url)
                if probe.reachable:
                    return self._foreign(entry, foreign_endpoint(entry, probe, remote=False))
            status = self._start_single(spec, timeout_s=timeout_s, on_log=on_log or _ignore)
        model_id = hosted_model_id(entry, status.model_ids) or entry.repo_id
        endpoint = Endpoint(base_url=status.endpoint, model_key=entry.key, model_id=model_id, owned=True,
                            tag=status.tag)
        return SingleServing(self, endpoint, width=spec.width)

    def _foreign(self, entry: CatalogEntry, endpoint: Endpoint) -> ForeignServing:
        settings = self.settings
        return ForeignServing(
            endpoint, patience_s=settings.remote_patience_s, batch=worker_batch(entry, settings)
        )

    # --- start ----------------------------------------------------------------------------------

    def _start_single(
        self, spec: ServeSpec, *, timeout_s: float | None, on_log: LogCallback, unless_stopped: bool = False
    ) -> ServerStatus:
        timeout = self.settings.start_timeout_s if timeout_s is None else timeout_s
        self._single.start(spec, timeout_s=timeout, on_log=on_log, unless_stopped=unless_stopped)
        return self.status()

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
            if self._wants_group(selection):
                return self._start_group_locked(
                    spec, selection, timeout_s=timeout_s, on_log=on_log or _ignore
                )
            if self._group.record() is not None:
                self._stop_group(grace_s=10.0)
            return self._start_single(spec, timeout_s=timeout_s, on_log=on_log or _ignore)

    # --- the group (router + one worker per GPU) ------------------------------------------------

    def _wants_group(self, selection: GpuSelection) -> bool:
        """Two or more GPUs, remote workers, or a farm need the router in front."""
        return (selection.is_group or not selection.ids or bool(self.settings.worker_url_list)
                or self._fleet.in_use())

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
        if not selection.ids:  # no GPU of this machine: the farm's boxes are the group's workers
            remotes = [*remotes, *self._fleet.serve(spec.entry)]
            if not remotes:
                raise ServerStartError(
                    f"This machine serves no GPU (GPUs: none in Settings) and no farm box or worker URL "
                    f"serves {spec.model_label}. Join a GPU box (python -m omni_web agent join "
                    "APP_URL --token T) or pick GPUs in Settings."
                )
        with self._life.lock:  # the Stop flag and the group's cancel, cleared together
            self._life.arm(unless_stopped=unless_stopped)
            self._group.arm()
        with self._life.starting(spec):
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
                on_log(f"Using the running server group for {spec.model_label} (router pid "
                       f"{running.router.pid}).")
                with self._life.lock:
                    self._life.group_spec = spec
                self._group.revive(spec, timeout_s=timeout, on_log=on_log, guard=self._life.unless_stopped)
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
                single = self._single.owned_record()
                if single is not None:
                    on_log(f"Stopping the server for {single.model_label} (pid {single.pid}) to start a "
                           "group.")
                    self._single.terminate(single, grace_s=10.0, final_state=ServerState.STARTING)
                self._group.start(spec, selection.ids, remote_urls=remotes, timeout_s=timeout, on_log=on_log)
                with self._life.lock:
                    self._life.group_spec = spec
        return self.status()

    def revive_group_workers(self, *, on_log: LogCallback | None = None) -> list[str]:
        """Start again the group's managed workers that died (never after a Stop); their URLs.

        Each launch is decided under the lock :meth:`stop` takes, so a Stop either comes first (no
        launch) or finds the new worker in the record and stops it too.
        """
        with self._life.lock:
            spec = self._life.group_spec or self._life.last_spec
        if spec is None:
            return []
        return self._group.revive(spec, timeout_s=self.settings.start_timeout_s, on_log=on_log or _ignore,
                                  guard=self._life.unless_stopped)

    def dead_group_workers(self) -> list[int | str]:
        """Pids of our group's managed workers whose process is gone (not yet started again), and the
        ids of the deaths of remote workers."""
        record = self._group.record()
        if record is None:
            return []
        local = [w.record.pid for w in record.workers if not record_matches_process(w.record)]
        return [*local, *self._fleet.deaths()]

    def _stop_group(self, *, grace_s: float) -> bool:
        self._life.transition(ServerState.STOPPING)
        try:
            return self._group.stop(grace_s=grace_s)
        finally:
            self._life.transition(ServerState.STOPPED)

    def restart(
        self, *, timeout_s: float | None = None, on_log: LogCallback | None = None,
        unless_stopped: bool = False
    ) -> ServerStatus:
        """Stop our server and start the last spec again (same model, config, port).

        ``unless_stopped`` (a restart after a crash) refuses with :class:`ServerNotRunning` when the
        user stopped the server, checked under the same lock :meth:`stop` takes, so a Stop that
        arrives while the restart is being decided is never lost: it either refuses the restart or
        aborts its boot.
        """
        with self._life.lock:
            spec = self._life.last_spec
        if spec is None:
            raise ServerError("Cannot restart the server: this app has not started one. Start it with a "
                              "model first.")
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
            record = self._single.owned_record()
            if record is not None:
                self._single.terminate(record, grace_s=10.0)
            self._single.wait_port_released(spec)
            return self._start_single(spec, timeout_s=timeout_s, on_log=on_log or _ignore,
                                      unless_stopped=unless_stopped)

    # --- stop -----------------------------------------------------------------------------------

    def stop(self, grace_s: float = 10.0) -> bool:
        """Stop the server this app started: SIGTERM to its group, SIGKILL after ``grace_s``.

        A boot in progress is aborted. A server this app did not start is never signalled.

        Returns:
            True when a process of ours was stopped; False when none was running.
        """
        self._life.request_stop()
        self._group.cancel()
        if self._group.record() is not None:
            return self._stop_group(grace_s=grace_s)
        return self._single.stop(grace_s)

    def stop_before_removing(self, model_key: str, *, log: LogCallback | None = None) -> bool:
        """Stop our server when it hosts ``model_key``, whose weights are about to be deleted.

        A server this app did not start is never stopped. Returns True when ours was stopped.
        """
        record = self.owned_record()
        if record is None or record.model_key != model_key:
            return False
        (log or _ignore)(
            f"Stopping the managed server hosting {model_key} (pid {record.pid}) before removing it."
        )
        return self.stop()
