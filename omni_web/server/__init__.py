"""The `sgl-omni serve` side of omni-web: plan the command, own the process, find the endpoint.

- :mod:`~omni_web.server.spec`: catalog entry + GPU + settings → :class:`ServeSpec` → argv (pure).
- :mod:`~omni_web.server.manager`: :class:`ServerManager` starts, watches, finds again and stops
  the managed server, and applies the one-model-per-server policy (:meth:`~ServerManager.ensure_serving`).
- :mod:`~omni_web.server.record`, :mod:`~omni_web.server.process`, :mod:`~omni_web.server.boot`,
  :mod:`~omni_web.server.bootlog`, :mod:`~omni_web.server.discovery`: the parts it is built from.
"""

from omni_web.server.boot import new_log_path, write_log_header
from omni_web.server.bootlog import came_up
from omni_web.server.discovery import EndpointProbe, hosted_model_id, probe_endpoint
from omni_web.server.fleet import RemoteFleet
from omni_web.server.gpus import parse_gpu_spec
from omni_web.server.manager import ServerManager
from omni_web.server.process import launch, log_tail, terminate_group
from omni_web.server.record import ServerRecord, load_record, record_matches_process
from omni_web.server.router import RouterHealth, add_worker, drain_worker, read_router_health, remove_worker
from omni_web.server.spec import ServeSpec, build_argv, build_serve_spec, shell_command
from omni_web.server.status import Endpoint, ServerState, ServerStatus
from omni_web.server.workers import free_ports

__all__ = [
    "Endpoint",
    "EndpointProbe",
    "RemoteFleet",
    "RouterHealth",
    "ServeSpec",
    "ServerManager",
    "ServerRecord",
    "ServerState",
    "ServerStatus",
    "add_worker",
    "build_argv",
    "build_serve_spec",
    "came_up",
    "drain_worker",
    "free_ports",
    "hosted_model_id",
    "launch",
    "load_record",
    "log_tail",
    "new_log_path",
    "parse_gpu_spec",
    "probe_endpoint",
    "read_router_health",
    "record_matches_process",
    "remove_worker",
    "shell_command",
    "terminate_group",
    "write_log_header",
]
