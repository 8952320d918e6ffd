"""The farm as text: boxes → GPUs → workers, with the router's counters (server status, Server tab)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from omni_web.farm.registry import FarmBox
from omni_web.server import RouterHealth

__all__ = ["farm_lines"]

_GIB = 1024**3


def _gpu_text(gpu: dict) -> str:
    cc = gpu.get("compute_capability")
    parts = [str(gpu.get("name") or "unknown")]
    if cc:
        parts.append(f"cc {cc[0]}.{cc[1]}")
    if gpu.get("total_memory_bytes"):
        parts.append(f"{int(gpu['total_memory_bytes']) / _GIB:.1f} GiB")
    return f"GPU {gpu.get('index')}: {', '.join(parts)}"


def _worker_text(url: str, health: RouterHealth | None) -> str:
    seen = health.worker(url) if health is not None else None
    if seen is None:
        return f"worker {url}: not in the router"
    routable = "routable" if seen.routable else "drained" if seen.disabled else "not routable"
    return (f"worker {url}: {seen.health_state}, {routable}, {seen.routed_requests} routed, "
            f"{seen.failed_requests} failed")


def farm_lines(boxes: Sequence[FarmBox], health: RouterHealth | None) -> list[str]:
    """One block per box: its state, model and pin, each GPU, and the worker serving on it."""
    if not boxes:
        return []
    lines = [f"Farm: {len(boxes)} box{'es' if len(boxes) != 1 else ''}"]
    for box in boxes:
        joined = time.strftime("%H:%M", time.localtime(box.joined_at))
        model = f" {box.model_key}" if box.model_key else ""
        pinned = f", pinned to {box.pinned_model}" if box.pinned_model else ""
        crashed = f", {box.crashes} server crash{'es' if box.crashes != 1 else ''}" if box.crashes else ""
        about = f"{box.state}{model}, joined {joined}, id {box.id}{pinned}{crashed}"
        lines.append(f"  box {box.name} ({box.agent_url}): {about}")
        if box.message:
            lines.append(f"    {box.message.splitlines()[0]}")
        urls = list(box.worker_urls)
        for index, gpu in enumerate(box.gpus):
            lines.append(f"    {_gpu_text(gpu)}")
            if index < len(urls):
                lines.append(f"      {_worker_text(urls[index], health)}")
    return lines
