"""The process lifecycle of our one `sgl-omni serve`: launch, boot wait, reuse, abort, terminate.

Shaped like jupyter_client's ``KernelManager``: the argv is planned first
(:mod:`omni_web.server.spec`), the child is launched in its own session with a log file per start
(:mod:`omni_web.server.process`), the boot is watched until ``/health`` says 200 ``healthy``, and
pid + process start time + model + port are recorded in the data root
(:mod:`omni_web.server.record`). Stop is polite then forced (SIGTERM to the group, SIGKILL after
a grace period), and only ever for a process the record proves this app started. Which server
to run is not decided here: that is the one-model policy of :mod:`omni_web.server.manager`.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from omni_web.errors import BackendError, PortTaken, ServerStartError
from omni_web.paths import DataPaths
from omni_web.server.boot import (
    LaunchOptions,
    new_log_path,
    port_accepts,
    wait_until_healthy,
    watcher_at_end,
    write_log_header,
)
from omni_web.server.bootlog import BootLogWatcher
from omni_web.server.lifecycle import ServerLifecycle
from omni_web.server.process import launch, terminate_group
from omni_web.server.record import (
    ServerRecord,
    clear_record,
    load_record,
    record_for_launch,
    record_matches_process,
    save_record,
)
from omni_web.server.spec import ServeSpec, build_argv, client_host, shell_command
from omni_web.server.status import ServerState

__all__ = ["STRICT_PORT_ENV", "SingleProcess"]

STRICT_PORT_ENV = {"SGLANG_OMNI_STRICT_PORT": "1"}
# Python children flush stdout per line, so the boot log shows progress as it happens.
_CHILD_ENV = {"PYTHONUNBUFFERED": "1"}
# After a crash the dead server's port can stay held for a moment (its stage processes exit).
_PORT_RELEASE_S = 15.0

LogCallback = Callable[[str], None]


def _same_server(record: ServerRecord, spec: ServeSpec) -> bool:
    """True when the recorded server runs what ``spec`` asks for (model, config choice, address)."""
    return (
        record.model_key == spec.model_key
        and record.tag == spec.tag
        and record.host == spec.host
        and record.port == spec.port
    )


class SingleProcess:
    """Launches, waits for, reuses and stops our single server; its state lives in ``life``."""

    def __init__(self, paths: DataPaths, life: ServerLifecycle, options: LaunchOptions) -> None:
        self._paths = paths
        self._life = life
        self._launch = options

    @property
    def strict_port(self) -> bool:
        """True when a busy port fails the boot instead of moving the server."""
        return self._launch.strict_port

    @property
    def sgl_omni(self) -> Path:
        """The backend's ``sgl-omni`` executable."""
        return self._paths.backend_venv / "bin" / "sgl-omni"

    def owned_record(self) -> ServerRecord | None:
        """The record of our live single server, or None (a stale record proves nothing)."""
        record = load_record(self._paths)
        return record if record is not None and record_matches_process(record) else None

    def _popen_for(self, record: ServerRecord) -> subprocess.Popen[bytes] | None:
        with self._life.lock:
            popen = self._life.popen
            return popen if popen is not None and popen.pid == record.pid else None

    # --- start ----------------------------------------------------------------------------------

    def start(
        self, spec: ServeSpec, *, timeout_s: float, on_log: LogCallback, unless_stopped: bool = False
    ) -> None:
        """Make our server run ``spec``: reuse it if it already does, else (re)launch; wait until healthy.

        Raises:
            ServerNotRunning: ``unless_stopped`` and the user stopped the server.
            BackendError, PortTaken, ServerStartError, BootTimeout: the start failed.
        """
        self._life.arm(unless_stopped=unless_stopped)  # a Stop is before this (refused) or after (aborts)
        with self._life.starting(spec):
            record = self.owned_record()
            if record is not None and _same_server(record, spec):
                on_log(f"Using the running server for {record.model_label} (pid {record.pid}).")
                self._wait_healthy(
                    spec, record, self._popen_for(record), watcher_at_end(record.log_path), timeout_s, on_log
                )
            else:
                if record is not None:
                    on_log(
                        f"Stopping the server for {record.model_label} (pid {record.pid}) to start "
                        f"{spec.model_label}."
                    )
                    self.terminate(record, grace_s=10.0, final_state=ServerState.STARTING)
                self._launch_and_wait(spec, timeout_s, on_log)

    def preflight(self, spec: ServeSpec) -> None:
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

    def _launch_and_wait(self, spec: ServeSpec, timeout_s: float, on_log: LogCallback) -> None:
        self.preflight(spec)
        if self._launch.before_start is not None:
            self._launch.before_start(spec.entry)
        if self._life.cancel.is_set():
            raise ServerStartError("The server start was cancelled.")
        argv = build_argv(spec, sgl_omni=self.sgl_omni)
        log_path = new_log_path(self._paths.logs_dir, spec.model_key)
        offset = write_log_header(log_path, spec, argv, strict_port=self._launch.strict_port)
        for note in spec.notes:
            on_log(note)
        on_log(f"Starting {spec.model_label}: {shell_command(argv)}")
        on_log(f"Log: {log_path}")
        env = dict(_CHILD_ENV, **(STRICT_PORT_ENV if self._launch.strict_port else {}))
        popen = launch(argv, log_path=log_path, env_extra=env, cwd=self._paths.root)
        record = record_for_launch(popen, spec, argv, log_path)
        save_record(self._paths, record)
        with self._life.lock:
            self._life.popen, self._life.last_spec = popen, spec
        self._wait_healthy(spec, record, popen, BootLogWatcher(log_path, offset=offset), timeout_s, on_log)
        on_log(f"Server healthy at {spec.base_url} (pid {popen.pid}, {spec.model_label}).")

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
        client = self._launch.client_factory(
            spec.base_url, timeout_s=self._launch.probe_timeout_s, connect_retries=0
        )
        try:
            wait_until_healthy(
                spec,
                record,
                popen=popen,
                watcher=watcher,
                client=client,
                timeout_s=timeout_s,
                on_log=on_log,
                cancelled=self._life.cancel.is_set,
                clock=self._launch.clock,
                sleep=self._launch.sleep,
                poll_interval_s=self._launch.poll_interval_s,
                probe_timeout_s=self._launch.probe_timeout_s,
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
        with self._life.lock:
            if self._life.popen is popen:
                self._life.popen = None

    def wait_port_released(self, spec: ServeSpec) -> None:
        """Give the port of a server that just died a moment to close (bounded); PortTaken comes later."""
        host = client_host(spec.host).strip("[]")
        deadline = time.monotonic() + _PORT_RELEASE_S
        while port_accepts(host, spec.port, timeout_s=0.5) and time.monotonic() < deadline:
            time.sleep(0.2)

    # --- watch and stop ---------------------------------------------------------------------------

    def notice_exit(self) -> None:
        """Turn an unexpected exit of our healthy child into FAILED with its exit code and log."""
        with self._life.lock:
            popen = self._life.popen
            if popen is None or self._life.state is not ServerState.HEALTHY:
                return
            code = popen.poll()
            if code is None:
                return
            record = load_record(self._paths)
            log = f"; see its log {record.log_path}" if record is not None else ""
            self._life.popen = None
            self._life.transition(
                ServerState.FAILED,
                only_from=frozenset({ServerState.HEALTHY}),
                message=f"The server (pid {popen.pid}) exited unexpectedly with code {code}{log}.",
            )

    def stop(self, grace_s: float) -> bool:
        """Stop our single server if one runs; True when a process of ours was stopped."""
        record = load_record(self._paths)
        if record is None or not record_matches_process(record):
            if record is not None:
                clear_record(self._paths)
            self._life.transition(
                ServerState.STOPPED, only_from=frozenset(set(ServerState) - {ServerState.STARTING})
            )
            return False
        self.terminate(record, grace_s=grace_s)
        return True

    def terminate(
        self, record: ServerRecord, *, grace_s: float, final_state: ServerState = ServerState.STOPPED
    ) -> None:
        """Stop a process the caller has proven is ours, and forget it."""
        popen = self._popen_for(record)
        self._life.transition(ServerState.STOPPING)
        try:
            terminate_group(record.pgid, leader=popen, grace_s=grace_s)
        finally:
            clear_record(self._paths)
            with self._life.lock:
                if popen is not None:
                    self._life.popen = None
            self._life.transition(final_state)
