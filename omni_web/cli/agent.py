"""``agent join``: make this GPU box part of an app's farm, in one command.

    python -m omni_web agent join http://app:7860 --token T [--gpus 0,1] [--port P] [--service]

The token is a farm token made in the app (Settings, or ``python -m omni_web token --farm create``).
The box keeps its own data root (``OMNI_WEB_HOME``): backend venv, model cache, logs. Without
``--token`` the token is read from ``OMNI_WEB_FARM_TOKEN`` (or the variable ``--token-env`` names),
which keeps it out of ``ps``. ``--service`` writes a systemd user unit running the same command
(the token in an owner-only file beside it), prints it and how to enable it, and exits.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from pathlib import Path

from omni_web.errors import OmniWebError
from omni_web.farm import TOKEN_ENV, AgentOptions, join_farm, plan_service
from omni_web.paths import REPO_ROOT, data_root_from_env
from omni_web.server import parse_gpu_spec

__all__ = ["register"]


# The options a service's command line repeats when they differ from these defaults.
_DEFAULTS: dict[str, object] = {
    "name": "", "host": "0.0.0.0", "port": 0, "advertise": "", "worker_port": 30100, "gpus": None,
}


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
    join.add_argument("--token", default=None, help=f"a farm token made in the app (default: ${TOKEN_ENV})")
    join.add_argument("--token-env", default=TOKEN_ENV, metavar="NAME",
                      help=f"read the token from this environment variable when --token is absent "
                           f"(default {TOKEN_ENV})")
    join.add_argument("--name", default=_DEFAULTS["name"],
                      help="how the app shows this box (default: host name)")
    join.add_argument("--host", default=_DEFAULTS["host"], help="interface for the agent and its servers")
    join.add_argument("--port", type=int, default=_DEFAULTS["port"],
                      help="the agent's port (default: first free from 30090)")
    join.add_argument("--advertise", default=_DEFAULTS["advertise"],
                      help="address the app reaches this box at (default: found)")
    join.add_argument("--worker-port", type=int, default=_DEFAULTS["worker_port"],
                      help="the servers take the first free ports from here (default 30100)")
    join.add_argument("--gpus", default=_DEFAULTS["gpus"],
                      help="GPU indices to serve on, e.g. 0,1 (default: all)")
    join.add_argument("--service", action="store_true",
                      help="write a systemd user unit that runs this command at boot (and after a crash), "
                           "print it and how to enable it, and exit without joining")
    join.set_defaults(handler=_join)


def _token(args: argparse.Namespace) -> str:
    token = args.token or os.environ.get(args.token_env, "").strip()
    if not token:
        raise OmniWebError(
            f"No farm token: pass --token T or set {args.token_env}. Make one in the app's Settings "
            "(Farm tokens) or with python -m omni_web token --farm create NAME."
        )
    return token


def _join(args: argparse.Namespace) -> int:
    token = _token(args)
    if args.service:
        return _write_service(args, token)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    options = AgentOptions(
        app_url=args.app_url, token=token, name=args.name, host=args.host, port=args.port,
        advertise_host=args.advertise, gpus=parse_gpu_spec(args.gpus), worker_port=args.worker_port,
    )
    return join_farm(data_root_from_env(), options, stop=stop)


def _service_args(args: argparse.Namespace) -> list[str]:
    """``agent join``'s arguments for the unit: the app and every option not at its default (the
    token excepted: the unit reads it from its file)."""
    forwarded = [args.app_url]
    for dest, default in _DEFAULTS.items():
        value = getattr(args, dest)
        if value != default:
            forwarded += [f"--{dest.replace('_', '-')}", str(value)]
    return forwarded


def _write_service(args: argparse.Namespace, token: str) -> int:
    python = Path(sys.executable).absolute()  # the venv's own interpreter: not resolved past its link
    home = data_root_from_env().root
    service = plan_service(_service_args(args), python=python, workdir=REPO_ROOT, home=home)
    service.write(token)
    print(f"Wrote {service.unit_path} (the farm token is in {service.env_path}, readable by you only):\n")
    print(service.unit_text)
    print("Enable it (it starts now, at every boot, and again after a crash):\n")
    for command in service.commands:
        print(f"    {command}")
    print(f"\nThe last one lets it run while you are logged out. Its output: journalctl --user -u "
          f"{service.unit_path.stem} -f; the agent's log is also readable from the app.")
    return 0
