"""``python -m omni_web server start|stop|status|command|farm``: the managed `sgl-omni serve` (and
the farm's boxes: ``server farm``, in :mod:`omni_web.cli.server_farm`).

Exit codes of ``server status``: 0 healthy, 3 stopped (nothing answers), 4 starting, stopping or
failed (something is there but not ready). The other subcommands exit 0 on success and 1 on an
error (the message says what to do).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

from omni_web.catalog import get_entry, keys
from omni_web.cli.endpoint import add_endpoint_options, apply_endpoint_options
from omni_web.cli.server_farm import register_farm
from omni_web.errors import OmniWebError, SettingsError
from omni_web.farm import FarmRegistry, farm_lines, group_target
from omni_web.paths import data_root_from_env
from omni_web.pipeline.serving import first_gpu_compute_capability
from omni_web.server.group import group_pids
from omni_web.server.manager import ServerManager
from omni_web.server.status import ServerState
from omni_web.settings import Settings, load_settings

__all__ = ["EXIT_NOT_READY", "EXIT_STOPPED", "register"]

EXIT_STOPPED = 3
EXIT_NOT_READY = 4


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``server`` and its subcommands."""
    parser = subparsers.add_parser(
        "server",
        help="start, stop or inspect the sgl-omni server",
        description="Start, stop or inspect the SGLang-Omni server that hosts one TTS model.",
    )
    commands = parser.add_subparsers(dest="server_command", metavar="SUBCOMMAND", required=True)

    start = commands.add_parser(
        "start",
        help="start the server for a model and wait until it is healthy",
        description=(
            "Start `sgl-omni serve` for a model in the background and return once /health is healthy. "
            "A server omni-web did not start that already hosts the model is used as-is; one that hosts "
            "another model is refused. Our server hosting another model is restarted."
        ),
    )
    _add_model(start, required=False)
    _add_endpoint(start)
    start.add_argument(
        "--timeout", type=float, metavar="S", help="seconds to wait for /health (default: setting, 1200)"
    )
    start.add_argument("--quiet", action="store_true", help="do not print the server's boot log")
    start.add_argument(
        "--gpus",
        metavar="all|IDS",
        help="GPUs to serve on: all (default: every GPU with room for the model) or ids like 0,2; "
        "two or more start one server per GPU behind the SGLang-Omni router on --port",
    )
    start.add_argument(
        "--worker-url",
        action="append",
        default=[],
        metavar="URL",
        help="an sgl-omni serve on another machine to add to the group (repeatable; checked first)",
    )
    start.set_defaults(handler=_start)

    stop = commands.add_parser("stop", help="stop the server omni-web started (never a foreign one)")
    _add_endpoint(stop)
    stop.add_argument(
        "--grace", type=float, default=10.0, metavar="S", help="seconds between SIGTERM and SIGKILL"
    )
    stop.set_defaults(handler=_stop)

    status = commands.add_parser(
        "status",
        help="show what serves: state, model, endpoint, pid, owner, log",
        description="Exit code: 0 healthy, 3 stopped, 4 starting/stopping/failed.",
    )
    _add_endpoint(status)
    status.set_defaults(handler=_status)

    command = commands.add_parser(
        "command",
        help="print the exact command line a start would run (to start the server by hand)",
        description=(
            "Print the shell-quoted `sgl-omni serve` command a start would run. omni-web also sets "
            "SGLANG_OMNI_STRICT_PORT=1 in its environment; the notes (why a config was chosen) go to stderr."
        ),
    )
    _add_model(command, required=True)
    _add_endpoint(command)
    command.set_defaults(handler=_command)

    register_farm(commands)


def _add_model(parser: argparse.ArgumentParser, *, required: bool) -> None:
    parser.add_argument("--model", metavar="KEY", required=required, help=f"catalog key: {', '.join(keys())}")


_add_endpoint = add_endpoint_options


def _settings(args: argparse.Namespace) -> tuple[ServerManager, Settings]:
    paths = data_root_from_env().ensure()
    settings = apply_endpoint_options(load_settings(paths), args)
    changes: dict[str, object] = {}
    if getattr(args, "gpus", None):
        changes["gpus"] = args.gpus.strip()
    if getattr(args, "worker_url", None):
        changes["worker_urls"] = " ".join([settings.worker_urls, *args.worker_url]).strip()
    if changes:
        try:
            settings = dataclasses.replace(settings, **changes).validate()
        except SettingsError as exc:
            raise SettingsError(f"{exc} (check --gpus / --worker-url)") from None
    return ServerManager(paths, settings), settings


def _print_status(manager: ServerManager) -> ServerState:
    status = manager.status()
    for line in status.lines():
        print(line)
    return status.state


def _start(args: argparse.Namespace) -> int:
    manager, settings = _settings(args)
    if not args.model:
        state = _print_status(manager)
        if state is ServerState.HEALTHY:
            return 0
        raise OmniWebError(
            "Choose the model to serve: python -m omni_web server start --model KEY (one of: "
            f"{', '.join(keys())})."
        )
    entry = get_entry(args.model)
    on_log = (lambda line: None) if args.quiet else (lambda line: print(line, flush=True))
    endpoint = manager.ensure_serving(
        entry,
        compute_capability=first_gpu_compute_capability(),
        port=args.port,
        timeout_s=args.timeout,
        on_log=on_log,
    ).endpoint
    if not endpoint.owned:
        where = "remote server" if settings.remote_url else "server not started by omni-web"
        print(f"Using the {where} at {endpoint.base_url}: it hosts {endpoint.model_id}; it is left running.")
    _print_status(manager)
    return 0


def _stop(args: argparse.Namespace) -> int:
    manager, settings = _settings(args)
    if settings.remote_url:
        print(f"{settings.remote_url} is an external server: omni-web never stops a server it did not start.")
        return 0
    group = manager.group.record()
    if group is not None:  # the router and every managed worker (remote workers are left running)
        pids = ", ".join(str(pid) for pid in group_pids(group)) or "none alive"
        manager.stop(grace_s=args.grace)
        print(
            f"Stopped the server group for {group.model_key}: router + {len(group.workers)} workers (pids "
            f"{pids})."
        )
        return 0
    record = manager.owned_record()
    if record is not None and manager.stop(grace_s=args.grace):
        print(f"Stopped the server for {record.model_label} (pid {record.pid}).")
        return 0
    print("No server started by omni-web is running.")
    status = manager.status()
    if status.state is not ServerState.STOPPED and not status.owned:
        print(f"A server omni-web did not start answers at {status.endpoint}; it was left running.")
    return 0


def _status(args: argparse.Namespace) -> int:
    manager, _ = _settings(args)
    state = _print_status(manager)
    farm = FarmRegistry(data_root_from_env(), group_target(manager))
    for line in farm_lines(farm.boxes(), manager.group.router_health()):
        print(line)
    if state is ServerState.HEALTHY:
        return 0
    return EXIT_STOPPED if state is ServerState.STOPPED else EXIT_NOT_READY


def _command(args: argparse.Namespace) -> int:
    manager, settings = _settings(args)
    if settings.remote_url:
        raise OmniWebError(
            f"--api-url names an external server ({settings.remote_url}); there is no command line to print "
            "for it. "
            "Drop --api-url to see the command a managed start runs."
        )
    spec = manager.build_spec(
        get_entry(args.model), compute_capability=first_gpu_compute_capability(), port=args.port
    )
    for note in spec.notes:
        print(f"# {note}", file=sys.stderr)
    print(manager.command_line(spec))
    return 0
