"""The parts of a group around its processes: the router's command, worker ports, remote workers."""

from __future__ import annotations

import socket
from collections.abc import Sequence
from pathlib import Path

from omni_web.catalog import CatalogEntry
from omni_web.errors import ServerError
from omni_web.server.boot import port_accepts
from omni_web.server.discovery import hosted_model_id, probe_endpoint

__all__ = ["HEALTH_INTERVAL_S", "WORKER_HOST", "check_remote_worker", "free_ports", "router_argv"]

# Probe every 2 s (default 10 s): a restarted worker is routable again ~4 s after it is healthy.
HEALTH_INTERVAL_S = 2.0
WORKER_HOST = "127.0.0.1"  # workers are reached only through the router on this machine


def router_argv(
    router_exe: Path, *, host: str, port: int, worker_urls: Sequence[str], state_dir: Path
) -> list[str]:
    """The router command: least_request (round_robin piles up on a hung worker;
    ``sglang_omni_router/python/selector.py``)."""
    return [
        str(router_exe),
        "--host",
        host,
        "--port",
        str(port),
        "--policy",
        "least_request",
        "--worker-urls",
        *worker_urls,
        "--router-state-dir",
        str(state_dir),
        "--health-check-interval-secs",
        f"{HEALTH_INTERVAL_S:g}",
    ]


def _port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return not port_accepts(host, port, timeout_s=0.3)


def free_ports(host: str, first: int, count: int, *, avoid: set[int]) -> list[int]:
    """``count`` free ports from ``first`` upwards (skipping ``avoid`` and busy ones)."""
    ports: list[int] = []
    port = first
    while len(ports) < count:
        if port > 65535:
            raise ServerError(f"No {count} free ports above {first} for the group's workers.")
        if port not in avoid and _port_free(host, port):
            ports.append(port)
        port += 1
    return ports


def check_remote_worker(url: str, entry: CatalogEntry, *, timeout_s: float = 5.0) -> str:
    """Check that ``url`` is a healthy `sgl-omni serve` (or router) hosting ``entry``; return its base URL.

    Raises:
        ServerError: unreachable, not healthy, or another model (the message says which).
    """
    probe = probe_endpoint(url, timeout_s=timeout_s)
    if not probe.reachable:
        raise ServerError(
            f"Nothing answers at the worker URL {url}. Start `sgl-omni serve` there or fix the URL."
        )
    if not probe.healthy:
        raise ServerError(
            f"The worker at {url} is not ready (/health: {probe.status or 'no answer'}, HTTP "
            f"{probe.http_status}). "
            "Wait until it is healthy, then add it again."
        )
    if hosted_model_id(entry, probe.model_ids) is None:
        hosted = ", ".join(probe.model_ids) or "no model it would name"
        raise ServerError(
            f"The worker at {url} serves {hosted}, not {entry.label}; a group serves one model. "
            f"Start it with --model-path {entry.repo_id}."
        )
    return probe.base_url
