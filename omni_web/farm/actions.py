"""What the user does to one farm box (Server tab buttons, ``server farm``): drain, resume, remove,
pin to a model; each names the box by id or name and answers with what happened and what to do."""

from __future__ import annotations

from omni_web.catalog import model_label
from omni_web.farm.registry import FarmBox, FarmRegistry

__all__ = ["FARM_ACTIONS", "farm_action"]

FARM_ACTIONS = ("drain", "resume", "remove", "pin")


def _workers(box: FarmBox) -> str:
    count = len(box.worker_urls)
    return f"{count} worker{'s' if count != 1 else ''}"


def _drain(registry: FarmRegistry, box: FarmBox) -> str:
    box = registry.drain(box.id)
    return (f"Drained box {box.label}: its {_workers(box)} take no new requests (those under way finish). "
            "It stays in the farm, serving nothing new, until you resume it (Resume, or "
            f"python -m omni_web server farm resume {box.id}).")


def _resume(registry: FarmRegistry, box: FarmBox) -> str:
    if not box.drained:
        return f"Box {box.label} was not drained; nothing changed."
    box = registry.resume(box.id)
    return (f"Resumed box {box.label}: the app routes it again within a few seconds (after one boot if "
            "the model it should serve changed meanwhile).")


def _remove(registry: FarmRegistry, box: FarmBox) -> str:
    removed = registry.remove(box.id) or box
    if removed.message:
        return (f"Removed box {box.label}: its workers left the router, but its agent could not be told to "
                f"stop its servers ({removed.message.rstrip('.')}). If they still run, stop the agent on the "
                "box (Ctrl+C, or systemctl --user stop omni-web-agent): it stops them.")
    return (f"Removed box {box.label}: its workers left the router and its agent stopped its servers. "
            "The agent itself still runs on the box: stop it there (Ctrl+C, or systemctl --user stop "
            "omni-web-agent), or run agent join again to bring the box back.")


def _pin(registry: FarmRegistry, box: FarmBox, model_key: str) -> str:
    box = registry.pin(box.id, model_key)
    group_model = registry.group_model()
    if not model_key:
        following = f"now {model_label(group_model)}" if group_model else "none runs now"
        return (f"Box {box.label} is no longer pinned: it follows the server group's model ({following}); "
                "the app switches it within a few seconds if it serves another one.")
    name = model_label(model_key)
    if box.model_key == model_key and box.state in ("serving", "standby"):
        switch = f"It already serves {name}."
    else:
        switch = f"The app switches it within a few seconds (drain, stop, start {name}: one boot)."
    routed = ("it takes the farm's work now" if group_model == model_key
              else "it waits ready, outside the router, until the server group serves that model")
    return f"Pinned box {box.label} to {name}: {routed}. {switch}"


def farm_action(registry: FarmRegistry, action: str, box_ref: str, model_key: str = "") -> str:
    """Run ``action`` (one of :data:`FARM_ACTIONS`) on the box named ``box_ref`` (id or name).

    ``model_key`` is the pin's model (``""``: unpin). Returns the message for the user.

    Raises:
        FarmBoxNotFound: no box (or several) has that id or name.
        UnknownModel: ``model_key`` is not in the catalog.
        ValueError: ``action`` is not one of :data:`FARM_ACTIONS`.
    """
    box = registry.find(box_ref)
    if action == "drain":
        return _drain(registry, box)
    if action == "resume":
        return _resume(registry, box)
    if action == "remove":
        return _remove(registry, box)
    if action == "pin":
        return _pin(registry, box, model_key)
    raise ValueError(f"Unknown farm action {action!r}: use one of {', '.join(FARM_ACTIONS)}.")
