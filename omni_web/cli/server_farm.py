"""``python -m omni_web server farm drain|resume|remove|pin|log BOX [MODEL]``: the Server tab's
per-box buttons on the command line, over the same functions (:func:`omni_web.farm.farm_action`;
``log`` prints the box's agent log, read over its API).

BOX is a box's id or name as ``server status`` lists them. The app's farm watcher does the slow
part (a boot after a pin or a resume) within a few seconds, so the app must be running for it.
"""

from __future__ import annotations

import argparse

from omni_web.catalog import keys
from omni_web.errors import OmniWebError
from omni_web.farm import FARM_ACTIONS, FarmRegistry, farm_action, farm_lines, group_target
from omni_web.paths import data_root_from_env
from omni_web.server import ServerManager
from omni_web.settings import load_settings

__all__ = ["register_farm"]


def register_farm(commands: argparse._SubParsersAction) -> None:
    """Add ``server farm``."""
    farm = commands.add_parser(
        "farm",
        help="drain, resume, remove or pin (to a model) one box of the farm, or print its agent's log",
        description=(
            "drain: its workers take no new requests and it is left alone until resume. remove: drained, "
            "taken out of the router, its agent told to stop its servers, forgotten. pin BOX MODEL: the box "
            "serves MODEL only (a pool for that model), routed while the server group serves it; pin BOX "
            "without MODEL: it follows the group's model again. log: the box's agent log."
        ),
    )
    farm.add_argument("action", choices=(*FARM_ACTIONS, "log"), help="what to do to the box")
    farm.add_argument("box", metavar="BOX", help="the box's id or name (server status lists them)")
    farm.add_argument("model", metavar="MODEL", nargs="?", default="",
                      help=f"pin only: catalog key ({', '.join(keys())}); none: unpin")
    farm.set_defaults(handler=_farm)


def _farm(args: argparse.Namespace) -> int:
    if args.model and args.action != "pin":
        raise OmniWebError(f"Only pin takes a MODEL: python -m omni_web server farm pin {args.box} "
                           f"{args.model}.")
    paths = data_root_from_env().ensure()
    manager = ServerManager(paths, load_settings(paths))
    registry = FarmRegistry(paths, group_target(manager))
    if args.action == "log":
        print(registry.agent_log(registry.find(args.box).id), end="")
        return 0
    print(farm_action(registry, args.action, args.box, args.model))
    for line in farm_lines(registry.boxes(), manager.group.router_health()):
        print(line)
    return 0
