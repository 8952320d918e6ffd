"""``agent join``: make this GPU box part of an app's farm, in one command.

    python -m omni_web agent join http://app:7860 --token T [--gpus 0,1] [--port P]

The token is a farm token made in the app (Settings, or ``python -m omni_web token --farm create``).
The box keeps its own data root (``OMNI_WEB_HOME``): backend venv, model cache, logs.
"""

from __future__ import annotations

import argparse
import signal
import threading

from omni_web.farm import AgentOptions, join_farm
from omni_web.paths import data_root_from_env
from omni_web.server import parse_gpu_spec

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``agent join``."""
    parser = subparsers.add_parser(
        "agent",
        help="on a GPU box: join an app's farm with a farm token and serve its model",
        description="Run this box's farm agent.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    join = actions.add_parser("join", help="join the app at URL and serve what it asks")
    join.add_argument("app_url", help="the app, e.g. http://lab-pc:7860")
    join.add_argument("--token", required=True, help="a farm token made in the app")
    join.add_argument("--name", default="", help="how the app shows this box (default: host name)")
    join.add_argument("--host", default="0.0.0.0", help="interface for the agent and its servers")
    join.add_argument("--port", type=int, default=0, help="the agent's port (default: first free from 30090)")
    join.add_argument("--advertise", default="", help="address the app reaches this box at (default: found)")
    join.add_argument("--worker-port", type=int, default=30100,
                      help="the servers take the first free ports from here (default 30100)")
    join.add_argument("--gpus", default=None, help="GPU indices to serve on, e.g. 0,1 (default: all)")
    join.set_defaults(handler=_join)


def _join(args: argparse.Namespace) -> int:
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    options = AgentOptions(
        app_url=args.app_url, token=args.token, name=args.name, host=args.host, port=args.port,
        advertise_host=args.advertise, gpus=parse_gpu_spec(args.gpus), worker_port=args.worker_port,
    )
    return join_farm(data_root_from_env(), options, stop=stop)
