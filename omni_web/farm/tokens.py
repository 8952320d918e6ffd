"""Farm tokens: made in Settings, stored hashed like API tokens, needed by every agent that joins.

They live apart from the API tokens (``state/farm-tokens.json``): a farm token lets a machine
join and receive work, an API token queues books; neither opens the other.
"""

from __future__ import annotations

from omni_web.api import TokenStore
from omni_web.paths import DataPaths

__all__ = ["FARM_TOKENS_NAME", "farm_in_use", "farm_token_store"]

FARM_TOKENS_NAME = "farm-tokens.json"


def farm_token_store(paths: DataPaths) -> TokenStore:
    """The data root's farm tokens (same format and hashing as the API tokens)."""
    return TokenStore(paths.state_dir / FARM_TOKENS_NAME)


def farm_in_use(paths: DataPaths) -> bool:
    """True once a farm token exists: the app then serves even one GPU behind its router, so a box
    that joins adds workers to the book in progress."""
    return bool(farm_token_store(paths).tokens())
