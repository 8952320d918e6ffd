"""How many requests a server we start runs at once: ``max_running_requests`` from its config.

The engine stage's ``engine.max_running_requests`` is what SGLang batches (``sglang_omni/config/
schema.py`` declares it on every engine stage). A vendored config that sets it (the throughput
profiles) tells the renderer the width outright; one that does not leaves the upstream default in
force, which the renderer then finds while the book renders (``omni_web/client/inflight.py``).
"""

from __future__ import annotations

from pathlib import Path

import yaml

__all__ = ["configured_width"]


def configured_width(config_path: Path | None) -> int | None:
    """The ``max_running_requests`` a config sets on its engine stage, or None (not set, no file, unreadable)."""
    if config_path is None:
        return None
    try:
        data = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return None
    stages = data.get("stages") if isinstance(data, dict) else None
    if not isinstance(stages, dict):
        return None
    for body in stages.values():
        engine = body.get("engine") if isinstance(body, dict) else None
        running = engine.get("max_running_requests") if isinstance(engine, dict) else None
        if isinstance(running, int) and not isinstance(running, bool) and running > 0:
            return running
    return None
