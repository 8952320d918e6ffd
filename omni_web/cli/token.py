"""``token``: API tokens for ``/api/v1`` (the same ones Settings → API tokens shows).

With ``--farm`` the same actions work on the farm tokens GPU boxes join with
(``python -m omni_web agent join URL --token T``).

    python -m omni_web token create NAME     prints the token once
    python -m omni_web token list
    python -m omni_web token revoke ID
"""

from __future__ import annotations

import argparse
import time

from omni_web.api.tokens import TokenStore
from omni_web.farm import farm_token_store
from omni_web.paths import data_root_from_env

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``token create|list|revoke``."""
    parser = subparsers.add_parser("token", help="create, list and revoke API tokens",
                                   description="API tokens for /api/v1; stored hashed, shown once.")
    parser.add_argument("--farm", action="store_true", help="farm tokens (for agent join), not API tokens")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    create = actions.add_parser("create", help="make a token and print it (once)")
    create.add_argument("name", help="what it is for, e.g. 'calibre-hook'")
    create.set_defaults(handler=_create)
    actions.add_parser("list", help="the tokens (ids and names, never the secrets)").set_defaults(
        handler=_list
    )
    revoke = actions.add_parser("revoke", help="refuse a token from now on")
    revoke.add_argument("id")
    revoke.set_defaults(handler=_revoke)


def _store(args: argparse.Namespace) -> TokenStore:
    paths = data_root_from_env().ensure()
    return farm_token_store(paths) if args.farm else TokenStore(paths.api_tokens_file)


def _create(args: argparse.Namespace) -> int:
    token, secret = _store(args).create(args.name)
    print(secret)
    print(
        f"(token {token.id} '{token.name}': shown once, stored hashed; revoke with: python -m omni_web token "
        f"revoke {token.id})",
        flush=True,
    )
    return 0


def _list(args: argparse.Namespace) -> int:
    for token in _store(args).tokens():
        print(
            f"{token.id}  {token.name}  created "
            f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(token.created_at))}"
        )
    return 0


def _revoke(args: argparse.Namespace) -> int:
    _store(args).revoke(args.id)
    print(f"revoked {args.id}")
    return 0
