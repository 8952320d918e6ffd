"""One boot of the managed server: its log file, and the wait until ``/health`` says healthy.

The wait follows sglang-omni 0.1.9's startup (``sglang_omni/serve/launcher.py``,
``sglang_omni/serve/server_warmup.py``): connection refused while the
models load and 503 ``starting`` during warmup both mean "keep waiting while the process lives";
only 200 ``healthy`` ends it. Each poll first reads the new boot-log lines (passing them on) and
aborts on the launcher's port lines, so a server that moved to another port, or refused to,
never counts as started.
"""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from omni_web.catalog import CatalogEntry
from omni_web.client import SpeechClient
from omni_web.errors import BootTimeout, PortTaken, ServerStartError, ServerUnavailable
from omni_web.server.bootlog import BootLogWatcher
from omni_web.server.process import log_tail
from omni_web.server.record import ServerRecord, record_matches_process
from omni_web.server.spec import ServeSpec, shell_command

__all__ = [
    "LOG_TAIL_LINES",
    "LaunchOptions",
    "latest_log_path",
    "new_log_path",
    "port_accepts",
    "read_log_end",
    "wait_until_healthy",
    "watcher_at_end",
    "write_log_header",
]

LOG_TAIL_LINES = 30


@dataclass(frozen=True, slots=True)
class LaunchOptions:
    """How our server processes (a single server, a group's workers) are launched and waited for.

    Attributes:
        client_factory: builds the health-poll client for each boot.
        before_start: called with the catalog entry before the first launch (companions).
        strict_port: ``SGLANG_OMNI_STRICT_PORT=1`` for the child, so a busy port fails the boot.
        poll_interval_s, probe_timeout_s: the boot wait's poll period and per-request timeout.
        clock, sleep: injectable time.
    """

    client_factory: Callable[..., SpeechClient] = SpeechClient
    before_start: Callable[[CatalogEntry], None] | None = None
    strict_port: bool = True
    poll_interval_s: float = 1.0
    probe_timeout_s: float = 5.0
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep


def new_log_path(logs_dir: Path, model_key: str) -> Path:
    """A fresh ``server-<model>-<timestamp>.log`` in ``logs_dir``: one file per start."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    path = logs_dir / f"server-{model_key}-{stamp}.log"
    counter = 2
    while path.exists():  # a second start within the same second gets its own file
        path = logs_dir / f"server-{model_key}-{stamp}-{counter}.log"
        counter += 1
    return path


def latest_log_path(logs_dir: Path) -> Path | None:
    """The newest ``server-*.log`` in ``logs_dir`` (the last start's log), or None when there is none."""
    logs = []
    for path in logs_dir.glob("server-*.log"):
        try:
            logs.append((path.stat().st_mtime, path))
        except OSError:
            continue  # removed while we looked
    return max(logs)[1] if logs else None


def read_log_end(path: Path | None, max_bytes: int) -> str:
    """The last ``max_bytes`` of a log, starting at a whole line ("" when it cannot be read).

    Seeks instead of reading the whole file, so a page polling a long server log stays cheap.
    """
    if path is None:
        return ""
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, 2)
            handle.seek(max(0, size - max_bytes))
            data = handle.read()
    except OSError:
        return ""
    text = data.decode("utf-8", "replace")
    return text if size <= max_bytes else text.split("\n", 1)[-1]


def write_log_header(log_path: Path, spec: ServeSpec, argv: list[str], *, strict_port: bool) -> int:
    """Write what is started and why at the top of the log; return where the server's output begins."""
    lines = [f"# omni-web: starting {spec.model_label} at {datetime.now().isoformat(timespec='seconds')}"]
    lines += [f"# omni-web: {note}" for note in spec.notes]
    lines.append(f"# omni-web: command: {shell_command(argv)}")
    if strict_port:
        lines.append("# omni-web: env: SGLANG_OMNI_STRICT_PORT=1 (a busy port fails the boot)")
    data = ("\n".join(lines) + "\n").encode("utf-8")
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_path.write_bytes(data)
    return len(data)


def watcher_at_end(log_path: Path) -> BootLogWatcher:
    """A watcher that reports only lines written from now on (for a server already booting)."""
    try:
        offset = log_path.stat().st_size
    except OSError:
        offset = 0
    return BootLogWatcher(log_path, offset=offset)


def port_accepts(host: str, port: int, *, timeout_s: float = 1.0) -> bool:
    """True when a TCP connection to ``host:port`` succeeds (something listens there)."""
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return True
    except OSError:
        return False


def wait_until_healthy(
    spec: ServeSpec,
    record: ServerRecord,
    *,
    popen: subprocess.Popen[bytes] | None,
    watcher: BootLogWatcher,
    client: SpeechClient,
    timeout_s: float,
    on_log: Callable[[str], None],
    cancelled: Callable[[], bool],
    clock: Callable[[], float],
    sleep: Callable[[float], None],
    poll_interval_s: float = 1.0,
    probe_timeout_s: float = 5.0,
) -> None:
    """Poll until ``/health`` is 200 ``healthy``; the caller stops the process if this raises.

    ``popen`` is the child when this process launched it (its exit code is then known); otherwise
    liveness comes from the record (pid + start time).

    Raises:
        PortTaken: the boot log shows the port was busy (fallback, or the strict-mode refusal).
        ServerStartError: the process died, or ``cancelled()`` became true.
        BootTimeout: not healthy within ``timeout_s``.
    """
    deadline = clock() + timeout_s
    while True:
        for line in watcher.poll():
            on_log(line)
        _raise_for_port_lines(watcher, spec)
        if cancelled():
            raise ServerStartError("The server start was cancelled.", log_path=record.log_path)
        exited, exit_code = _exit_status(record, popen)
        if exited:
            for line in watcher.poll(final=True):
                on_log(line)
            _raise_for_port_lines(watcher, spec)
            raise _died_during_boot(spec, record, exit_code)
        try:
            if client.health(timeout_s=probe_timeout_s).healthy:
                return
        except ServerUnavailable:
            pass  # not listening yet: the models are still loading
        if clock() >= deadline:
            tail = log_tail(record.log_path, LOG_TAIL_LINES)
            raise BootTimeout(
                f"The server for {spec.model_label} did not become healthy within {timeout_s:g} s, "
                f"so it was stopped. Last log lines:\n{tail}\nFull log: {record.log_path}\n"
                "Download the model first (Models tab) so a boot does not wait on it, or raise the "
                "start timeout (Settings; CLI: --timeout).",
                log_path=record.log_path,
                log_tail=tail,
            )
        sleep(poll_interval_s)


def _exit_status(record: ServerRecord, popen: subprocess.Popen[bytes] | None) -> tuple[bool, int | None]:
    """(exited, exit code); the code is known only for our own child."""
    if popen is not None:
        code = popen.poll()
        return code is not None, code
    return (not record_matches_process(record)), None


def _raise_for_port_lines(watcher: BootLogWatcher, spec: ServeSpec) -> None:
    """Turn the launcher's port lines into :class:`PortTaken` naming both ports."""
    if watcher.strict_refusal is not None:
        busy = watcher.strict_refusal.busy_port or spec.port
        raise PortTaken(busy, host=watcher.strict_refusal.host or spec.host)
    if watcher.fallback_port is not None:
        raise PortTaken(watcher.busy_port or spec.port, fallback_port=watcher.fallback_port, host=spec.host)


def _died_during_boot(spec: ServeSpec, record: ServerRecord, exit_code: int | None) -> ServerStartError:
    tail = log_tail(record.log_path, LOG_TAIL_LINES)
    if exit_code is None:
        how = "exited"
    elif exit_code < 0:
        how = f"was killed by signal {-exit_code}"
    else:
        how = f"exited with code {exit_code}"
    hint = " (code 2: sgl-omni refused its arguments)" if exit_code == 2 else ""
    return ServerStartError(
        f"The server for {spec.model_label} {how} during boot{hint}. Last log lines:\n{tail}\n"
        f"Full log: {record.log_path}",
        exit_code=exit_code,
        log_path=record.log_path,
        log_tail=tail,
    )
