"""The endpoint options every command that talks to a server takes, spelled once.

``server start|stop|status|command`` and ``convert`` all accept ``--host``, ``--port`` and
``--api-url`` with the same meaning: where the managed server listens (default: the settings),
or an external server to use instead of the managed one.
"""

from __future__ import annotations

import argparse
import dataclasses

from omni_web.errors import SettingsError
from omni_web.settings import Settings

__all__ = ["add_endpoint_options", "apply_endpoint_options"]


def add_endpoint_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--host``, ``--port`` and ``--api-url`` to ``parser``."""
    group = parser.add_argument_group("server endpoint")
    group.add_argument(
        "--host",
        metavar="HOST",
        help="address the managed server listens on (default: the server_host setting)",
    )
    group.add_argument(
        "--port", type=int, metavar="P", help="port of the managed server (default: the server_port setting)"
    )
    group.add_argument(
        "--api-url", metavar="URL", help="use an external sgl-omni server at URL instead of the managed one"
    )


def apply_endpoint_options(settings: Settings, args: argparse.Namespace) -> Settings:
    """``settings`` with the endpoint options of ``args`` applied, validated.

    Raises:
        SettingsError: a value is unusable; the message names the option.
    """
    changes: dict[str, object] = {}
    if getattr(args, "host", None):
        changes["server_host"] = args.host.strip()
    if getattr(args, "port", None) is not None:
        changes["server_port"] = args.port
    if getattr(args, "api_url", None):
        changes["remote_url"] = args.api_url.strip()
    try:
        return dataclasses.replace(settings, **changes).validate()
    except SettingsError as exc:
        raise SettingsError(f"{exc} (check --host / --port / --api-url)") from None
