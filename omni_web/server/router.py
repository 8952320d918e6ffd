"""What omni-web asks the SGLang-Omni router (`sgl-omni-router-py`, 0.1.9) and how it reads the answers.

The router's ``GET /health`` carries the pool summary and one entry per worker
(``sglang_omni_router/python/app.py``):
``routable_workers``, ``total_workers``, and per worker ``url``, ``health_state``, ``routable``,
``active_requests``, ``routed_requests``, ``failed_requests``, ``last_error``; plus
``voice_routing.registry_state``. A plain ``sgl-omni serve`` answers ``/health`` without those
keys, which is how :func:`read_router_health` tells the two apart (None for a plain server).

Worker changes go through ``POST /workers`` / ``DELETE /workers/{id}`` where ``id`` is the
URL-encoded worker URL. Nothing here starts a process.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

from omni_web.errors import ServerError

__all__ = [
    "RouterHealth",
    "RouterWorker",
    "add_worker",
    "drain_worker",
    "is_router_health",
    "read_router_health",
    "remove_worker",
    "warm_voice_registry",
    "worker_id",
]

_TIMEOUT_S = 5.0


def worker_id(url: str) -> str:
    """The router's id of a worker: its URL, percent-encoded (``http%3A%2F%2F127.0.0.1%3A8101``)."""
    return quote(url.rstrip("/"), safe="")


@dataclass(frozen=True, slots=True)
class RouterWorker:
    """One worker as the router sees it."""

    url: str
    health_state: str  # unknown | healthy | unhealthy | dead
    routable: bool
    disabled: bool = False
    active_requests: int = 0
    routed_requests: int = 0
    successful_requests: int = 0
    failed_requests: int = 0
    last_error: str | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RouterWorker:
        """Read one ``workers`` entry (missing counters are 0)."""

        def count(name: str) -> int:
            value = data.get(name)
            return int(value) if isinstance(value, int | float) else 0

        error = data.get("last_error")
        return cls(
            url=str(data.get("url") or "").rstrip("/"),
            health_state=str(data.get("health_state") or "unknown"),
            routable=bool(data.get("routable")),
            disabled=bool(data.get("disabled")),
            active_requests=count("active_requests"),
            routed_requests=count("routed_requests"),
            successful_requests=count("successful_requests"),
            failed_requests=count("failed_requests"),
            last_error=str(error) if error else None,
        )


@dataclass(frozen=True, slots=True)
class RouterHealth:
    """One ``GET /health`` of a router."""

    http_status: int
    status: str  # healthy | unhealthy
    routable_workers: int
    total_workers: int
    workers: tuple[RouterWorker, ...]
    registry_state: str = "unassigned"

    @property
    def all_routable(self) -> bool:
        """True when every worker takes requests (the state to wait for before a burst)."""
        return self.total_workers > 0 and self.routable_workers == self.total_workers

    def worker(self, url: str) -> RouterWorker | None:
        """The entry of the worker at ``url``, or None when the router does not know it."""
        wanted = url.rstrip("/")
        return next((w for w in self.workers if w.url == wanted), None)

    def routable_urls(self) -> tuple[str, ...]:
        """URLs of the workers that take requests now."""
        return tuple(w.url for w in self.workers if w.routable)


def is_router_health(body: Mapping[str, Any]) -> bool:
    """True when a ``/health`` body is the router's (it has the pool counters and worker list)."""
    return "routable_workers" in body and "total_workers" in body and isinstance(body.get("workers"), list)


def parse_router_health(http_status: int, body: Mapping[str, Any]) -> RouterHealth:
    """A :class:`RouterHealth` from a router's ``/health`` body."""
    voice = body.get("voice_routing")
    registry = str(voice.get("registry_state") or "unassigned") if isinstance(voice, dict) else "unassigned"
    workers = tuple(RouterWorker.from_json(w) for w in body.get("workers", []) if isinstance(w, dict))
    return RouterHealth(
        http_status=http_status,
        status=str(body.get("status") or ""),
        routable_workers=int(body.get("routable_workers") or 0),
        total_workers=int(body.get("total_workers") or 0),
        workers=workers,
        registry_state=registry,
    )


def read_router_health(base_url: str, *, timeout_s: float = _TIMEOUT_S) -> RouterHealth | None:
    """``GET /health`` at ``base_url``: the router's view, or None for a plain server or no answer."""
    try:
        response = httpx.get(f"{base_url.rstrip('/')}/health", timeout=timeout_s)
        body = response.json()
    except (httpx.HTTPError, ValueError):
        return None
    if not isinstance(body, dict) or not is_router_health(body):
        return None
    return parse_router_health(response.status_code, body)


def add_worker(router_url: str, worker_url: str, *, timeout_s: float = _TIMEOUT_S) -> None:
    """``POST /workers {"url": worker_url}``; a worker the router already has is enabled again (the
    voice owner cannot be removed, only drained: back at its URL after a switch, it must take work).

    Raises:
        ServerError: the router refused it (its own message is quoted).
    """
    try:
        response = httpx.post(f"{router_url.rstrip('/')}/workers", json={"url": worker_url},
                              timeout=timeout_s)
    except httpx.HTTPError as exc:
        raise ServerError(f"Cannot reach the router at {router_url} to add {worker_url}: {exc}") from exc
    if response.is_success:
        return
    text = response.text[:300]
    if response.status_code == 409 or "already" in text.lower():
        try:
            httpx.put(f"{router_url.rstrip('/')}/workers/{worker_id(worker_url)}", json={"disabled": False},
                      timeout=timeout_s)
        except httpx.HTTPError as exc:
            raise ServerError(
                f"Cannot reach the router at {router_url} to enable {worker_url}: {exc}"
            ) from exc
        return
    raise ServerError(
        f"The router at {router_url} refused the worker {worker_url} (HTTP {response.status_code}: {text})."
    )


def drain_worker(router_url: str, worker_url: str, *, timeout_s: float = _TIMEOUT_S) -> bool:
    """``PUT /workers/{id} {"disabled": true}``: no new requests; in-flight ones finish.

    Returns False when the router does not have the worker (or cannot be reached).
    """
    try:
        response = httpx.put(
            f"{router_url.rstrip('/')}/workers/{worker_id(worker_url)}", json={"disabled": True},
            timeout=timeout_s,
        )
    except httpx.HTTPError:
        return False
    return response.is_success


def remove_worker(router_url: str, worker_url: str, *, timeout_s: float = _TIMEOUT_S) -> bool:
    """``DELETE /workers/{id}``; False when the router did not have it (404) or refused (409: voice owner).

    Raises:
        ServerError: the router cannot be reached.
    """
    try:
        response = httpx.delete(
            f"{router_url.rstrip('/')}/workers/{worker_id(worker_url)}", timeout=timeout_s
        )
    except httpx.HTTPError as exc:
        raise ServerError(f"Cannot reach the router at {router_url} to remove {worker_url}: {exc}") from exc
    return response.is_success


def warm_voice_registry(
    router_url: str,
    *,
    timeout_s: float = 30.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> str:
    """Hydrate the router's voice registry so named voices spread instead of pinning to the owner.

    A fresh router sends every named-voice request (even a preset such as ``vivian``) to one
    worker until it has read the owner's voice list (``sglang_omni_router/python/voice_routing.py``). ``GET /v1/audio/voices``
    through the router starts that; this waits for ``registry_state == "ready"``. Returns the
    last state seen (``ready``, or what it was when ``timeout_s`` ran out).
    """
    deadline = clock() + timeout_s
    state = "unassigned"
    while True:
        try:
            httpx.get(
                f"{router_url.rstrip('/')}/v1/audio/voices", params={"names_only": "true"}, timeout=_TIMEOUT_S
            )
        except httpx.HTTPError:
            pass
        health = read_router_health(router_url)
        state = health.registry_state if health is not None else state
        if state == "ready" or clock() >= deadline:
            return state
        sleep(0.2)
