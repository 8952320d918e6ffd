"""What the server manager asks of other machines that serve for its group (a farm of GPU boxes).

The manager stays one floor below the farm: it gets these callables, never the farm itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from omni_web.catalog import CatalogEntry

__all__ = ["RemoteFleet"]


def _never() -> bool:
    return False


def _no_workers(_entry: CatalogEntry) -> Sequence[str]:
    return ()


@dataclass(frozen=True, slots=True)
class RemoteFleet:
    """Boxes whose workers join the group's router.

    Attributes:
        in_use: True when even one local GPU is served behind the router (boxes join it mid-book).
        deaths: ids of the deaths of the boxes' workers (their agents restart them); a group's
            renderer counts them as crashes like its own workers'.
        serve: asks every box to serve the model now and returns their worker URLs: what a group
            with no local GPU starts its router with.
    """

    in_use: Callable[[], bool] = _never
    deaths: Callable[[], Iterable[str]] = tuple
    serve: Callable[[CatalogEntry], Sequence[str]] = _no_workers
